"""The held-out batches are well-formed corpus batches, each thread once and none in the corpus.

Their accuracy is measured (``benchmarks/corpus_eval.py --corpus tests/heldout``), not asserted: a
held-out set is where the figures are expected to be worse than on the corpus.
"""

from __future__ import annotations

from pathlib import Path

from benchmarks.corpus_eval import load_corpus
from tests.support.corpus import CORPUS

HELDOUT = Path(__file__).resolve().parent


def test_held_out_cases_are_well_formed_and_not_in_the_corpus() -> None:
    held = load_corpus(HELDOUT)
    assert held, "no held-out batch"
    corpus_threads = {c.source.split(" ")[0] for c in load_corpus(CORPUS) if c.kind == "thread"}
    held_threads = [c.source.split(" ")[0] for c in held if c.kind == "thread"]
    assert len(held_threads) == len(set(held_threads))
    assert not set(held_threads) & corpus_threads
