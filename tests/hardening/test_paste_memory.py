"""A 40,000-character paste (Slack's message limit) is parsed and classified in bounded memory.

Every paste of ``big_pastes.BIG_PASTES`` is exactly 40,000 characters: real output mixed with
junk, and the shapes that make regexes backtrack or readers recurse (unclosed brackets, one line
without a newline, YAML alias chains). Each must give a snapshot and a diagnosis with a
``tracemalloc`` peak under ``PEAK_BOUND_BYTES`` (64 MiB). That these tests finish at all is the
check that no parser regex goes catastrophic; how long each takes is measured by
``benchmarks/bench_faults.py`` and written to RELIABILITY.md, not asserted here.
"""

from __future__ import annotations

import pytest

from tests.hardening.big_pastes import BIG_PASTES, PEAK_BOUND_BYTES, SIZE, measure


@pytest.mark.parametrize("name", list(BIG_PASTES))
def test_a_40k_paste_is_parsed_and_classified_in_bounded_memory(name: str) -> None:
    text = BIG_PASTES[name]()
    assert len(text) == SIZE

    measured = measure(text)

    assert measured.peak_bytes < PEAK_BOUND_BYTES, f"{name}: peak {measured.peak_bytes / 2**20:.1f} MiB"
    assert measured.snapshot.notes, "every paste says what was recognised, or that nothing was"
    assert not [n for n in measured.snapshot.notes if "parser error" in n], measured.snapshot.notes
    measured.snapshot.to_json()


def test_the_mixed_paste_is_still_understood() -> None:
    measured = measure(BIG_PASTES["mixed real output and junk"]())

    assert "ray status" in measured.snapshot.notes
    assert measured.snapshot.kubernetes is not None and measured.snapshot.kubernetes.pods
    assert measured.diagnosis.findings, "junk between the samples does not hide what they show"
