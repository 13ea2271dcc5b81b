"""Forty thousand characters of paste: real output with junk, and shapes built to hurt a parser.

Slack caps a message at 40,000 characters, so that is the most one paste can hand the bot. Each
paste here is exactly that long. ``mixed`` interleaves every real sample (the pasted examples in
``tests/corpus/shared-examples`` and the fragments of every format) with seeded random junk; the
others are the inputs that make backtracking regexes, recursive readers and YAML aliases blow up:
one unbroken line, thousands of unclosed brackets, quotes or ``{'CPU': `` literals, alias chains.

``measure`` parses and classifies one paste under ``tracemalloc`` and returns the peak of memory
Python allocated meanwhile; ``tests/hardening/test_paste_memory.py`` holds it under
``PEAK_BOUND_BYTES`` and ``benchmarks/bench_faults.py`` records it with the time taken.
"""

from __future__ import annotations

import random
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass

from bot.classify import classify
from bot.collect.paste import parse_paste
from bot.diagnosis import Diagnosis
from bot.snapshot.model import Snapshot
from tests.paste.test_paste_robustness import FRAGMENTS
from tests.support.corpus import EXAMPLES

SIZE = 40_000
PEAK_BOUND_BYTES = 64 * 1024 * 1024
SCHEDULER_MESSAGE = (
    "0/5 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, "
    "2 Insufficient nvidia.com/gpu, 2 node(s) didn't match Pod's node affinity/selector. "
)


def _fill(unit: str) -> str:
    return (unit * (SIZE // len(unit) + 1))[:SIZE]


def _junk(rng: random.Random, size: int) -> str:
    alphabet = "abcXYZ019 {}[]()<>:/*&|#'\"`-=,.\t\n\x00\x1b\u200bé漢🙂"
    return "".join(rng.choice(alphabet) for _ in range(size))


def mixed() -> str:
    """Every real sample, in a seeded random order, with random junk between them."""
    rng = random.Random(20261130)
    samples = [*FRAGMENTS, *(p.read_text(encoding="utf-8") for p in sorted(EXAMPLES.glob("*.txt")))]
    parts: list[str] = []
    while sum(len(part) for part in parts) < SIZE:
        parts.append(rng.choice(samples))
        parts.append(_junk(rng, rng.randint(0, 400)))
    return "\n".join(parts)[:SIZE]


BIG_PASTES: dict[str, Callable[[], str]] = {
    "mixed real output and junk": mixed,
    "40,000 '('": lambda: "(" * SIZE,
    "40,000 '{'": lambda: "{" * SIZE,
    "40,000 '['": lambda: "[" * SIZE,
    "40,000 '\"'": lambda: '"' * SIZE,
    "brackets opened then closed": lambda: "[" * (SIZE // 2) + "]" * (SIZE // 2),
    "one line: scheduler message repeated": lambda: _fill(SCHEDULER_MESSAGE),
    "one line: unclosed {'CPU': literals": lambda: _fill("{'CPU': 1.0, 'GPU': "),
    "one line: 0/ fractions": lambda: _fill("0/"),
    "one line: Name: keys": lambda: _fill("Name:   "),
    "one line: pods header": lambda: _fill("NAME READY STATUS RESTARTS AGE "),
    "39,999 spaces and a letter": lambda: " " * (SIZE - 1) + "a",
    "YAML alias chain": lambda: _fill("a: &a [*a, *a, *a]\n"),
    "kubectl -o json cut off by Slack": lambda: (
        '{"apiVersion": "v1", "kind": "List", "items": ['
        + _fill('{"kind": "Pod", "metadata": {"name": "w"}}, ')
    )[:SIZE],
    "ray status lines without a header": lambda: _fill(
        " 0.0/16.0 GPU\n {'GPU': 16.0}: 1+ pending tasks/actors\n"
    ),
}


@dataclass(frozen=True)
class Measured:
    snapshot: Snapshot
    diagnosis: Diagnosis
    peak_bytes: int


def measure(text: str) -> Measured:
    """Parse and classify ``text``; the peak is what Python allocated on top of the input."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        snapshot = parse_paste(text)
        diagnosis = classify(snapshot)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return Measured(snapshot, diagnosis, peak)
