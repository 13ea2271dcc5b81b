"""Rules that are a pattern over text: log lines, event messages, pasted warnings.

The patterns live in the rule files; this detector only walks the snapshot's text once per rule.
Named groups in a pattern become template placeholders, so a rule can quote the GCS address or the
request shape it matched. A pasted line carries no pod or object of its own, so the groups ``pod``,
``node``, ``kind`` with ``name``, and ``namespace`` also say whose line it is: a device-plugin line
that names its Pod, or an operator log line that names its RayJob, becomes a finding about that
object and fills the commands with its name. ``quote`` names the group shown as evidence when the
whole line would bury it (a JSON log line is mostly fields nobody needs); it is still verbatim.
``retold`` holds the patterns over a person's retelling of a tool's output ("Ray doesn't detect my
GPUs"); the rule says ``reads: [.., retelling]``, and a subject seen only through them is reported
at ``warning`` at most, never ``critical`` (``bot.catalogue.Reading``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import field
from functools import lru_cache

from bot.catalogue import Rule
from bot.classify.context import Context, Text
from bot.classify.registry import Hit, detector
from bot.diagnosis import Evidence, Subject
from bot.snapshot.base import StrictRecord
from bot.terms import Severity

MAX_EVIDENCE_PER_SUBJECT = 5
MAX_LINE = 600


class TextParams(StrictRecord):
    patterns: list[str] = field(default_factory=list)
    retold: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    sources: list[str] | None = None
    object_kinds: list[str] | None = None
    quote: str | None = None

    def __post_init__(self) -> None:
        if not self.patterns and not self.retold:
            raise ValueError("patterns: should have at least 1 item (or retold)")

    @property
    def searched(self) -> tuple[str, ...]:
        """The tool-output patterns first, then the retellings."""
        return (*self.patterns, *self.retold)

    def check(self) -> None:
        """That every pattern compiles, alone and in the rule's alternation, and that ``quote``
        names a group of one. Only compiling the catalogue calls it (``DetectorSpec.check_params``):
        a rule compiles its patterns when a line first needs them."""
        for name, values in (("patterns", self.patterns), ("retold", self.retold), ("exclude", self.exclude)):
            if not values:
                continue
            check_patterns(name, values)
            try:
                _any_of(tuple(values))
            except re.error as error:  # e.g. a back-reference to a named group
                raise ValueError(
                    f"{name}: patterns cannot be searched as one alternation: {error}"
                ) from error
        if self.quote is not None and not any(self.quote in _compiled(p).groupindex for p in self.searched):
            raise ValueError(f"quote: {self.quote!r} is not a named group of any pattern")


def check_patterns(name: str, patterns: Iterable[str]) -> None:
    """That each of a rule's patterns compiles; ``name`` is the parameter that holds them. For the
    parameter checks of every detector that reads lines with patterns of its rule."""
    for pattern in patterns:
        try:
            re.compile(pattern)
        except re.error as error:
            raise ValueError(f"{name}: pattern {pattern!r} does not compile: {error}") from error


@lru_cache(maxsize=64)
def alternation(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """One pattern that matches where any of ``patterns`` does, their groups kept (a rule whose
    patterns share a group name uses ``_any_of`` instead)."""
    return re.compile("|".join(f"(?:{p})" for p in patterns))


@lru_cache(maxsize=256)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


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
    params = TextParams(**rule.params)
    any_pattern: re.Pattern[str] | None = None
    sources = frozenset(params.sources) if params.sources else None
    searched = params.searched
    grouped: dict[Subject, tuple[dict[str, str], list[Evidence]]] = {}
    # The subjects some tool-output line showed; the others were only retold.
    shown: set[Subject] = set()
    seen_lines: set[str] = set()
    # Only the lines that hold one of the patterns' literal needles (``bot.classify.lines``).
    for text in ctx.texts_that_may_match(*searched):
        if sources is not None and text.source not in sources:
            continue
        if params.object_kinds is not None and text.object_kind not in params.object_kinds:
            continue
        line = text.searched
        # A line seen before (many events repeat one message) is decided already: a second
        # match would only repeat the first one's evidence.
        if line in seen_lines:
            continue
        seen_lines.add(line)
        any_pattern = any_pattern or _any_of(searched)
        if not any_pattern.search(line):
            continue
        match, pattern = next(((m, p) for p in searched if (m := _compiled(p).search(line))), (None, ""))
        if match is None or any(_compiled(x).search(line) for x in params.exclude):
            continue
        groups = {k: v for k, v in match.groupdict().items() if v}
        subject = _subject(text, groups)
        if pattern not in params.retold:
            shown.add(subject)
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
    retold_severity: Severity | None = "warning" if rule.severity == "critical" else None
    for subject, (values, evidence) in grouped.items():
        yield Hit(subject, tuple(evidence), values, None if subject in shown else retold_severity)
