"""The symptom reader on cut, spliced, arbitrary and huge text: it never raises, every statement it
keeps quotes text that was in the input, and a paste of megabytes keeps a bounded number of them.
"""

from __future__ import annotations

import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.collect.paste import parse_paste
from bot.read.found import MAX_DEMANDS, Found
from bot.read.prose import MAX_PROSE_CHARS, MAX_PROSE_PER_PASTE, read_line
from bot.read.prose_symptoms import MAX_SENTENCE_CHARS, read_demands, read_symptoms

# Statements the reader takes (tests/read/test_prose_symptoms.py has where each comes from).
SENTENCES = (
    "The raycluster has been started but workers are unable to connect to ray head node:",
    "Initially, the worker node appears in the cluster, but after approximately 15 seconds, it disconnects.",
    "I have two NVIDIA TitanX but Ray isn't seeing any:",
    "nvidia-device-plugin is starting but still no gpu-device in node description and gpu-pod FailedScheduling",
    "the GPU node group is scaled to 0 and after some period of time will not longer scale up.",
    "Bad import in deployment __init__ causes deployment to restart forever",
    "The issue case, 1gpu for each node + ask for 2gpu for each replica",
    "GCS健康检查失败,节点连接被拒绝",
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sentence=st.sampled_from(SENTENCES),
    start=st.integers(0, 60),
    stop=st.integers(0, 60),
    junk=st.text(alphabet="0123456789.,:;?!()[]`'\"nN't /-—，。？节点不\t\x00é", max_size=30),
    at=st.integers(0, 100),
)
def test_cut_and_spliced_statements_never_raise_and_quote_the_input(
    sentence: str, start: int, stop: int, junk: str, at: int
) -> None:
    text = sentence[min(start, len(sentence)) : max(start, len(sentence) - stop)]
    text = text[:at] + junk + text[at:]
    quotes = [s.quote for s in read_symptoms(text)] + [d.quote for d in read_demands(text)]
    for quote in quotes:
        assert quote and quote in text
        assert len(quote) <= MAX_SENTENCE_CHARS
    for demand in read_demands(text):
        assert 0 < demand.gpus <= 64


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=MAX_PROSE_CHARS))
def test_arbitrary_text_never_raises(text: str) -> None:
    found = Found()
    for line in text.splitlines() or [text]:
        read_line(line, found)
    assert len(found.stated_symptoms) <= MAX_DEMANDS
    assert len(found.stated_demands) <= MAX_DEMANDS


def test_adversarial_repetition_stays_linear() -> None:
    # Denials, gaps and GPU words over and over: the shapes a backtracking pattern would choke on.
    text = ("not " * 200 + "gpu " * 100 + "worker " * 50)[:MAX_PROSE_CHARS]
    started = time.perf_counter()
    read_symptoms(text)
    read_demands(text)
    assert time.perf_counter() - started < 1.0


def test_a_5_mb_paste_of_statements_keeps_a_bounded_number() -> None:
    lines = [f"{SENTENCES[n % len(SENTENCES)]} (message {n})" for n in range(60_000)]
    text = "\n\n".join(lines)
    assert len(text) > 5_000_000
    found = Found()
    for line in lines:
        read_line(line, found)
    assert found.prose_chars <= MAX_PROSE_PER_PASTE + MAX_PROSE_CHARS
    assert len(found.stated_symptoms) <= MAX_DEMANDS
    started = time.perf_counter()
    snapshot = parse_paste(text)
    assert time.perf_counter() - started < 60
    assert snapshot.stated is not None and len(snapshot.stated.symptoms) <= MAX_DEMANDS
