"""The words a paste is compared by: one tokenizer for the shipped index and for every query.

Outputs are compared by the words tools print (``insufficient``, ``nvidia``, ``failedscheduling``,
``placement``, ``gcs``), so a token is a run of letters, digits and ``_`` that starts with a letter,
lower-cased: figures and punctuation carry no likeness (``nvidia.com/gpu`` is ``nvidia``, ``com``,
``gpu``). English stop words and one-letter or over-long runs (hashes, base64) are dropped. A
query is cut to its first ``MAX_QUERY_CHARS`` characters so a huge paste costs a bounded time, and
each distinct word counts once: a log that repeats a line a thousand times does not outweigh the
rest.
"""

from __future__ import annotations

import re
from collections import Counter

WORD = re.compile(r"[a-z][a-z0-9_]*")
MIN_LEN = 2
MAX_LEN = 40
MAX_QUERY_CHARS = 200_000
# Lucene's English stop set, the list bm25s ships (tests/similar holds the two equal). Written out
# here because importing it from bm25s would load numpy on every paste, which scoring never needs.
STOP_WORDS = frozenset(
    {
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "if",
        "in",
        "into",
        "is",
        "it",
        "no",
        "not",
        "of",
        "on",
        "or",
        "such",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "will",
        "with",
    }
)


def words(text: str) -> list[str]:
    """Every kept word of ``text``, in order, repeats included."""
    return [w for w in WORD.findall(text.lower()) if MIN_LEN <= len(w) <= MAX_LEN and w not in STOP_WORDS]


def term_counts(text: str) -> dict[str, int]:
    """How often each kept word occurs: what the index stores of a report, sorted for a stable file."""
    return dict(sorted(Counter(words(text)).items()))


def query_words(text: str) -> list[str]:
    """The distinct kept words of a pasted text (its first ``MAX_QUERY_CHARS``), in first-seen order."""
    return list(dict.fromkeys(words(text[:MAX_QUERY_CHARS])))
