"""The prose reader on cut, spliced, arbitrary and huge text: it never raises, and its work is bounded.

People paste half a sentence, a sentence glued to a log line, or a whole chat export. Whatever the
reader makes of such text, every fact it keeps quotes text that was in the input, and a paste of
megabytes reads no more prose than the per-paste budget allows.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.collect.paste import parse_paste
from bot.read.found import MAX_DEMANDS, Found
from bot.read.prose import MAX_PROSE_CHARS, MAX_PROSE_PER_PASTE, STATED_FORMAT, read_line

# Sentences the reader takes facts from (tests/read/test_prose.py has where each comes from).
SENTENCES = (
    "This is a problem when running Ray 1.11 on cluster and Ray 1.12 on client.",
    "GEAK Ray py-version mismatch (cluster 3.10 vs submitter 3.12) → instant REVERTs",
    "the head uses rayproject/ray:2.9.0-py310 and my laptop has ray 2.10.0",
    "Client: ray 2.10.0, python 3.11. Cluster: ray 2.9.0, python 3.10.",
    "集群上是 2.9，本地是 2.10",
    "each node has one A10G and I ask for num_gpus=2",
    "We have 2 nodes with 8 x A100 each.",
    "The worker pods are Running but ray status shows only one node.",
)


def _facts(found: Found) -> list[str]:
    return [
        *(fact.quote for fact in found.stated_versions),
        *(fact.quote for fact in found.stated_gpus),
        *(fact.quote for fact in found.stated_join_gaps),
        *(fact.quote for fact in found.stated_symptoms),
        *(fact.quote for fact in found.stated_demands),
    ]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sentence=st.sampled_from(SENTENCES),
    start=st.integers(0, 80),
    stop=st.integers(0, 80),
    junk=st.text(alphabet="0123456789.,:;()[]`'\"vV xX/-—→，。集群本地\t\x00é", max_size=30),
    at=st.integers(0, 80),
)
def test_cut_and_spliced_sentences_never_raise_and_facts_quote_the_input(
    sentence: str, start: int, stop: int, junk: str, at: int
) -> None:
    text = sentence[min(start, len(sentence)) : max(start, len(sentence) - stop)]
    text = text[:at] + junk + text[at:]
    found = Found()
    stated = read_line(text, found)
    assert stated == bool(_facts(found))
    assert all(quote and quote in text for quote in _facts(found))


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=600))
def test_arbitrary_text_never_raises(text: str) -> None:
    found = Found()
    for line in text.splitlines() or [text]:
        read_line(line, found)
    assert found.prose_chars <= MAX_PROSE_PER_PASTE + MAX_PROSE_CHARS


def test_a_5_mb_paste_of_prose_reads_only_its_budget() -> None:
    lines = [f"{sentence} (message {n})" for n in range(70_000) for sentence in SENTENCES[:1]]
    text = "\n\n".join(lines)
    assert len(text) > 5_000_000
    found = Found()
    for line in lines:
        read_line(line, found)
    # Reading stops once the budget is spent: the first line over it is the last one read.
    assert found.prose_chars <= MAX_PROSE_PER_PASTE + MAX_PROSE_CHARS
    assert len(found.stated_versions) <= MAX_DEMANDS
    # The whole paste path takes it too, and still says what it read.
    snapshot = parse_paste(text)
    assert STATED_FORMAT.label in snapshot.notes
