"""BM25 weights of each word in each report, computed by ``bm25s``: what reports.json ships.

``bm25s`` scores eagerly: at indexing it computes, for every word of every document, that word's
whole BM25 contribution (Lucene's idf times the saturated, length-normalised term frequency; k1
1.5, b 0.75) and keeps them in a sparse matrix; a query's score for a document is the sum of its
words' entries. ``postings`` reads that matrix out as plain lists, so the bot scores a paste with
dictionary look-ups and never loads numpy or bm25s (about 0.1 s of a 0.35 s ``raydiag explain``).
Used by the generator (tools/build_similar_index.py), the leave-one-thread-out evaluation, which
builds one index per held-out thread, and the tests that hold the shipped weights to bm25s's own
``get_scores``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

# Rounded in the file: far finer than any difference that changes an order, and a stable text.
DIGITS = 4

Postings = dict[str, list[float]]  # word -> [report index, weight, report index, weight, ...]


def scorer(terms: Sequence[Mapping[str, int]]) -> object:
    """bm25s's retriever over reports given as word counts (order within a report is irrelevant to BM25)."""
    import bm25s  # noqa: PLC0415 - lazy: only building an index needs bm25s (and numpy)

    retriever = bm25s.BM25()  # method "lucene", k1 1.5, b 0.75
    corpus = [[word for word, n in counts.items() for _ in range(n)] for counts in terms]
    retriever.index(corpus, create_empty_token=False, show_progress=False)
    return retriever


def postings(terms: Sequence[Mapping[str, int]]) -> Postings:
    """Each word's reports and weights, from bm25s's score matrix (one column per word)."""
    if not terms or not any(terms):
        return {}
    retriever = scorer(terms)
    matrix = retriever.scores  # type: ignore[attr-defined]
    data, indices, indptr = matrix["data"], matrix["indices"], matrix["indptr"]
    found: Postings = {}
    for word, column in sorted(retriever.vocab_dict.items()):  # type: ignore[attr-defined]
        start, end = int(indptr[column]), int(indptr[column + 1])
        pairs: list[float] = []
        for row, weight in sorted(zip(indices[start:end].tolist(), data[start:end].tolist(), strict=True)):
            pairs += [row, round(weight, DIGITS)]
        found[str(word)] = pairs
    return found
