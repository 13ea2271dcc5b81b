"""Which of a snapshot's lines a regular expression could match, without searching them all.

A literal prefilter, as grep and Hyperscan use: most lines a rule reads match none of its
patterns, and a substring test costs a small fraction of a regular-expression search. The
strings a pattern cannot match without (its *needles*) are read from the parsed pattern; each is
looked for once per snapshot in the distinct lower-cased lines, whichever rules share it, and a
rule then searches only the lines that hold one. On the benchmark's 5,000-node snapshot the text
rules and the readers of events and logs made about 200,000 searches before.
"""

from __future__ import annotations

import re

# The parser of Python's own ``re`` (no stubs: it is the module behind the deprecated sre_parse).
import re._constants as re_constants  # type: ignore[import-not-found]
import re._parser as re_parser  # type: ignore[import-not-found]
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from functools import lru_cache
from itertools import accumulate
from typing import Any

Pattern = str | re.Pattern[str]

MIN_NEEDLE = 3
# Opcodes of the parsed pattern that hold a part every match goes through (when repeated at least
# once); the last two exist from Python 3.11.
_REPEATS = tuple(
    op
    for op in (
        getattr(re_constants, name, None) for name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT")
    )
    if op is not None
)
_ATOMIC_GROUP = getattr(re_constants, "ATOMIC_GROUP", None)


@lru_cache(maxsize=1024)
def needles(patterns: tuple[Pattern, ...]) -> frozenset[str] | None:
    """Lower-case strings one of which is in every line any of ``patterns`` matches (so a line
    with none of them needs no search), or None when some pattern does not require one.

    Read from the parsed pattern (the parser of Python's own ``re``, with a compiled pattern's own
    flags, so that a verbose pattern's spaces are not taken for text): a run of literal characters
    that every match goes through, or, for an alternation, one such run in each branch; parts that
    may be skipped (``?``, ``*``, ``{0,n}``) and lookarounds require nothing.
    """
    found: set[str] = set()
    for pattern in patterns:
        source, flags = (pattern.pattern, pattern.flags) if isinstance(pattern, re.Pattern) else (pattern, 0)
        try:
            parsed = re_parser.parse(source, flags)
        except Exception:  # whatever the parser makes of it, searching every line stays correct
            return None
        required = _required(list(parsed))
        if required is None:
            return None
        found |= required
    return frozenset(found)


def _required(items: list[tuple[Any, Any]]) -> frozenset[str] | None:
    """What a sequence of parsed items requires: its most selective requirement, if any."""
    candidates: list[frozenset[str]] = []
    run: list[str] = []

    def close_run() -> None:
        text = "".join(run)
        if len(text) >= MIN_NEEDLE and text.isascii():
            candidates.append(frozenset({text.lower()}))
        run.clear()

    for op, av in items:
        if op == re_constants.LITERAL:
            run.append(chr(av))
            continue
        close_run()
        inner: frozenset[str] | None = None
        if op == re_constants.SUBPATTERN:
            inner = _required(list(av[-1]))
        elif op == _ATOMIC_GROUP:
            inner = _required(list(av))
        elif op in _REPEATS:
            low, _high, body = av
            inner = _required(list(body)) if low >= 1 else None
        elif op == re_constants.BRANCH:
            branches = [_required(list(branch)) for branch in av[1]]
            if all(branch is not None for branch in branches):
                inner = frozenset().union(*(b for b in branches if b is not None))
        if inner:
            candidates.append(inner)
    close_run()
    # The shortest needle decides how often a line passes: prefer long ones, then few of them.
    return max(candidates, key=lambda c: (min(map(len, c)), -len(c)), default=None)


class LineIndex:
    """A snapshot's lines for the prefilter: each distinct line once, lower-cased.

    ``searched[i]`` is the part of line ``i`` that is searched; ``cut[i]`` says that the line is
    longer than that part, so a needle missing from it may still be in the rest (such a line is
    always a candidate). Many events repeat one message, so the distinct lines are far fewer.
    """

    def __init__(self, searched: Sequence[str], cut: Sequence[bool]) -> None:
        positions: dict[str, int] = {}
        self._lines_of: list[list[int]] = []
        for position, line in enumerate(searched):
            distinct = positions.setdefault(line, len(positions))
            if distinct == len(self._lines_of):
                self._lines_of.append([position])
            else:
                self._lines_of[distinct].append(position)
        self._distinct = [line.lower() for line in positions]
        self._cut = [position for position, long in enumerate(cut) if long]
        self._holding: dict[str, frozenset[int]] = {}
        self._joined: str | None = None
        self._starts: list[int] = []
        self._candidates: dict[tuple[Pattern, ...], list[int] | None] = {}

    def holding(self, needle: str) -> frozenset[int]:
        """The distinct lines that contain ``needle``; looked for once.

        The lines are searched as one string, joined by NUL (which no needle holds): one scan in
        C per needle is about four times faster than a substring test per line.
        """
        found = self._holding.get(needle)
        if found is None:
            if "\0" in needle:
                found = frozenset(i for i, line in enumerate(self._distinct) if needle in line)
            else:
                found = frozenset(self._scan(needle))
            self._holding[needle] = found
        return found

    def _scan(self, needle: str) -> Iterator[int]:
        if self._joined is None:
            self._joined = "\0".join(self._distinct)
            self._starts = list(accumulate((len(line) + 1 for line in self._distinct[:-1]), initial=0))
        joined, starts = self._joined, self._starts
        at = joined.find(needle)
        while at != -1:
            line = bisect_right(starts, at) - 1
            yield line
            if line + 1 == len(starts):
                return
            at = joined.find(needle, starts[line + 1])

    def candidates(self, patterns: tuple[Pattern, ...]) -> list[int] | None:
        """Positions (in order) of the lines one of ``patterns`` could match; None: every line."""
        if patterns in self._candidates:
            return self._candidates[patterns]
        wanted = needles(patterns)
        found: list[int] | None = None
        if wanted is not None:
            distinct = frozenset().union(*(self.holding(needle) for needle in wanted))
            found = sorted({*(p for d in distinct for p in self._lines_of[d]), *self._cut})
        self._candidates[patterns] = found
        return found
