"""Rules that are a pattern over text: log lines, event messages, pasted warnings.

The patterns live in the rule files; this detector only walks the snapshot's text once per rule.
Named groups in a pattern become template placeholders, so a rule can quote the GCS address or the
request shape it matched. A pasted line carries no pod or object of its own, so the groups ``pod``,
``node``, ``kind`` with ``name``, and ``namespace`` also say whose line it is: a device-plugin line
that names its Pod, or an operator log line that names its RayJob, becomes a finding about that
object and fills the commands with its name. ``quote`` names the group shown as evidence when the
whole line would bury it (a JSON log line is mostly fields nobody needs); it is still verbatim.
"""

from __future__ import annotations

import re

# The parser of Python's own ``re`` (no stubs: it is the module behind the deprecated sre_parse).
import re._constants as re_constants  # type: ignore[import-not-found]
import re._parser as re_parser  # type: ignore[import-not-found]
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from bot.catalogue import Rule
from bot.classify.context import Context, Text
from bot.classify.registry import Hit, detector
from bot.diagnosis import Evidence, Subject
from bot.snapshot.base import new_list

MAX_EVIDENCE_PER_SUBJECT = 5
MAX_LINE = 600


class TextParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    patterns: list[str] = Field(min_length=1)
    exclude: list[str] = Field(default_factory=new_list)
    sources: list[str] | None = None
    object_kinds: list[str] | None = None
    quote: str | None = None

    @field_validator("patterns", "exclude")
    @classmethod
    def _compiles(cls, values: list[str]) -> list[str]:
        for pattern in values:
            try:
                re.compile(pattern)
            except re.error as error:
                raise ValueError(f"pattern {pattern!r} does not compile: {error}") from error
        try:
            _any_of(tuple(values))
        except re.error as error:  # e.g. a back-reference to a named group
            raise ValueError(f"patterns cannot be searched as one alternation: {error}") from error
        return values

    @model_validator(mode="after")
    def _quote_is_a_group(self) -> TextParams:
        if self.quote is not None and not any(self.quote in _compiled(p).groupindex for p in self.patterns):
            raise ValueError(f"quote {self.quote!r} is not a named group of any pattern")
        return self


@lru_cache(maxsize=256)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


# A literal prefilter, as grep and Hyperscan use: most lines a text rule sees match none of its
# patterns, and a substring test costs a small fraction of a regular-expression search. On a
# snapshot of 1,250 nodes the 41 text rules made about 190,000 searches (0.8 s of 1.7 s).
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
def needles(patterns: tuple[str, ...]) -> frozenset[str] | None:
    """Lower-case strings one of which is in every line any of ``patterns`` matches (so a line
    with none of them needs no search), or None when some pattern does not require one.

    Read from the parsed pattern (the parser of Python's own ``re``): a run of literal characters
    that every match goes through, or, for an alternation, one such run in each branch; parts that
    may be skipped (``?``, ``*``, ``{0,n}``) and lookarounds require nothing.
    """
    found: set[str] = set()
    for pattern in patterns:
        try:
            parsed = re_parser.parse(pattern)
        except Exception:  # whatever the parser makes of it, searching every line stays correct
            return None
        required = _required(list(parsed))
        if required is None:
            return None
        found |= required
    return frozenset(found)


@dataclass(frozen=True)
class _DistinctLines:
    """The snapshot's lines, each distinct one once, in lower case (many events repeat a message)."""

    lowered: list[str]
    of_text: list[int]  # for each of ``Context.texts``, its position in ``lowered``


def _distinct_lines(ctx: Context) -> _DistinctLines:
    def build() -> _DistinctLines:
        positions: dict[str, int] = {}
        of_text = [positions.setdefault(text.lowered, len(positions)) for text in ctx.texts]
        return _DistinctLines(list(positions), of_text)

    return ctx.memo("text-lines", build)


def _candidate_lines(ctx: Context, patterns: Sequence[str]) -> frozenset[int] | None:
    """The distinct lines that hold one of the rules' needles (None: every line is a candidate).

    Each needle is looked for once per snapshot, whichever rules share it.
    """
    wanted = needles(tuple(patterns))
    if wanted is None:
        return None
    lines = _distinct_lines(ctx).lowered

    def holding(needle: str) -> frozenset[int]:
        return ctx.memo(
            f"text-needle\0{needle}", lambda: frozenset(i for i, line in enumerate(lines) if needle in line)
        )

    return frozenset().union(*(holding(needle) for needle in wanted))


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


_NAMED_GROUP = re.compile(r"\(\?P<[A-Za-z_]\w*>")


@lru_cache(maxsize=128)
def _any_of(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """One alternation of a rule's patterns: most lines match none, and one scan rejects them.

    Group names are dropped (two patterns may name the same group); the pattern that matched is
    searched again on its own to read them.
    """
    return re.compile("|".join(f"(?:{_NAMED_GROUP.sub('(?:', p)})" for p in patterns))


# Groups a pattern may name to say whose line it is, when the text itself does not (a pasted log
# line has no pod of its own, but a device-plugin line or an operator log line names one).
_SUBJECT_KINDS = {"RayCluster", "RayJob", "RayService", "Pod", "Node", "Workload"}


def _subject(text: Text, groups: dict[str, str]) -> Subject:
    namespace = text.namespace or groups.get("namespace") or None
    if text.pod:
        return Subject(kind="Pod", name=text.pod, namespace=text.namespace)
    if text.object_kind and text.object_name:
        return Subject(kind=text.object_kind, name=text.object_name, namespace=text.namespace)
    kind, name = groups.get("kind"), groups.get("name")
    if kind in _SUBJECT_KINDS and name:
        return Subject(kind=kind, name=name, namespace=namespace)
    if groups.get("pod"):
        return Subject(kind="Pod", name=groups["pod"], namespace=namespace)
    if groups.get("node"):
        return Subject(kind="Node", name=groups["node"])
    return Subject(kind="Text", name=None)


def _facts(text: Text, groups: dict[str, str], line: str) -> dict[str, str]:
    """What the line's own metadata says, and where it says nothing, what the pattern read from it."""
    known = {
        "pod": text.pod or "",
        "container": text.container or "",
        "namespace": text.namespace or "",
        "node": "",
    }
    facts = {**groups, "line": line[:MAX_LINE], "source": text.source}
    for key, value in known.items():
        facts[key] = value or groups.get(key, "")
    return facts


@detector("text_match", ("line", "source", "pod", "container", "node"), TextParams)
def text_match(ctx: Context, rule: Rule) -> Iterable[Hit]:
    # The catalogue checked the parameters (every pattern compiles) when it was compiled; here they
    # are only read. A pattern is compiled when a line first needs it: most rules find no text of
    # their sources in a paste, and most that do find no line their alternation matches.
    params = TextParams.model_construct(**rule.params)
    any_pattern: re.Pattern[str] | None = None
    sources = frozenset(params.sources) if params.sources else None
    candidates = _candidate_lines(ctx, params.patterns)
    distinct = _distinct_lines(ctx).of_text
    grouped: dict[Subject, tuple[dict[str, str], list[Evidence]]] = {}
    seen_lines: set[str] = set()
    for position, text in enumerate(ctx.texts):
        if candidates is not None and distinct[position] not in candidates:
            continue
        if sources is not None and text.source not in sources:
            continue
        if params.object_kinds is not None and text.object_kind not in params.object_kinds:
            continue
        line = text.searched
        any_pattern = any_pattern or _any_of(tuple(params.patterns))
        if not any_pattern.search(line):
            continue
        match = next((m for p in params.patterns if (m := _compiled(p).search(line))), None)
        if match is None or any(_compiled(x).search(line) for x in params.exclude) or line in seen_lines:
            continue
        seen_lines.add(line)
        groups = {k: v for k, v in match.groupdict().items() if v}
        subject = _subject(text, groups)
        found = grouped.get(subject)
        if found is None:
            found = (_facts(text, groups, line), [])
            grouped[subject] = found
        else:
            # A later line may name what the first did not (the node id after `Raylet is terminated`).
            for key, value in groups.items():
                found[0].setdefault(key, value)
        if len(found[1]) < MAX_EVIDENCE_PER_SUBJECT:
            where = f"{text.source} {text.pod}" if text.pod else text.source
            quoted = groups.get(params.quote, line) if params.quote else line
            found[1].append(Evidence(source=where, text=quoted[:MAX_LINE]))
    for subject, (values, evidence) in grouped.items():
        yield Hit(subject, tuple(evidence), values)
