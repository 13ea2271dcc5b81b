"""The shipped index of resolved reports, and scoring a text against it.

``reports.json`` holds each report's facts and, per word, the BM25 weight ``bm25s`` gave it in
each report that uses it (``bot.similar.weights``). A text's score for a report is the sum of the
weights of its distinct words there, exactly bm25s's own ``get_scores``, so scoring needs neither
numpy nor bm25s: reading the file and scoring a 5 KB paste take about 10 ms, paid on the first
paste that asks (``default_index``), never by a command that explains nothing.
``Index.build`` makes an index from any reports with bm25s, so the leave-one-thread-out
evaluation (``benchmarks/similar_eval.py``) measures this very code with a thread held out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from bot.similar.tokens import query_words
from bot.similar.weights import Postings, postings

INDEX_FILE = Path(__file__).with_name("reports.json")
# The format of reports.json; the generator writes it, the loader refuses another.
INDEX_VERSION = 2
# A report that shares fewer distinct words with a text is not like it, whatever its score: one
# common word ("cluster", "pod") in a short question is chance, not likeness.
MIN_SHARED = 3


class ReportsError(ValueError):
    """reports.json is missing or malformed; the message says what."""


@dataclass(frozen=True)
class Report:
    """One resolved report of the corpus, as the index keeps it."""

    id: str  # <batch>/<file stem> in tests/corpus
    causes: tuple[int, ...]  # the causes its thread settled on; empty: none of the ten, or healthy
    healthy: bool  # a quiet case: healthy or irrelevant output, no cause at all
    resolution: str  # the first sentence of how it was resolved, in our words
    address: str  # the thread's address (or, for a recorded healthy output, how it was recorded)
    thread: str  # the thread it comes from (owner/repo#N), shared by every case of that thread


@dataclass(frozen=True)
class Match:
    """A report close to a text: its BM25 score, and how many distinct words the two share."""

    report: Report
    score: float
    shared: int


def report_of(raw: Mapping[str, Any]) -> Report:
    return Report(
        id=str(raw["id"]),
        causes=tuple(int(c) for c in raw["causes"]),
        healthy=bool(raw["healthy"]),
        resolution=str(raw["resolution"]),
        address=str(raw["address"]),
        thread=str(raw["thread"]),
    )


class Index:
    """Reports and their words' BM25 weights; ``nearest`` gives the best few for a text."""

    def __init__(self, reports: Sequence[Report], weights: Postings) -> None:
        self.reports = tuple(reports)
        self.weights = weights

    @classmethod
    def build(cls, reports: Sequence[Report], terms: Sequence[Mapping[str, int]]) -> Index:
        """An index of ``reports`` whose pastes had these word counts, weighted by bm25s."""
        return cls(reports, postings(terms))

    def scores(self, words: Sequence[str]) -> tuple[list[float], list[int]]:
        """Each report's BM25 score for these distinct words, and how many of them it has."""
        scores = [0.0] * len(self.reports)
        shared = [0] * len(self.reports)
        for word in words:
            pairs = self.weights.get(word, ())
            for at in range(0, len(pairs) - 1, 2):
                row = int(pairs[at])
                scores[row] += pairs[at + 1]
                shared[row] += 1
        return scores, shared

    def nearest(self, text: str, k: int = 3) -> list[Match]:
        """The ``k`` reports that score highest for ``text``, best first: only those that share at
        least ``MIN_SHARED`` distinct words with it, and one per thread (two pastes of one thread
        are one resolution, not two votes). Ties keep the index's order, so the answer is the same
        every run."""
        scores, shared = self.scores(query_words(text))
        ranked = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
        best: dict[str, Match] = {}
        for i in ranked:
            if len(best) == k or scores[i] <= 0:
                break
            report = self.reports[i]
            if shared[i] >= MIN_SHARED and report.thread not in best:
                best[report.thread] = Match(report, scores[i], shared[i])
        return list(best.values())


def load_index(path: Path = INDEX_FILE) -> Index:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ReportsError(f"{path.name}: {error}") from error
    if not isinstance(data, dict) or data.get("version") != INDEX_VERSION:
        raise ReportsError(f"{path.name}: not an index of version {INDEX_VERSION}")
    try:
        reports = tuple(report_of(raw) for raw in data["reports"])
        weights = data["words"]
        if not isinstance(weights, dict):
            raise TypeError("words: not a mapping")
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise ReportsError(f"{path.name}: {error!r}") from error
    return Index(reports, weights)


@cache
def default_index() -> Index:
    """The index of the shipped reports, read on first use and kept for the process."""
    return load_index()
