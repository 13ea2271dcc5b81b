"""Rules that are a pattern over text: log lines, event messages, pasted warnings.

The patterns live in the rule files; this detector only walks the snapshot's text once per rule.
Named groups in a pattern become template placeholders, so a rule can quote the GCS address or the
request shape it matched.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from pydantic import BaseModel, ConfigDict, Field, field_validator

from bot.catalogue import Rule
from bot.classify.context import Context, Text
from bot.classify.registry import Hit, detector
from bot.diagnosis import Evidence, Subject

MAX_EVIDENCE_PER_SUBJECT = 5
MAX_LINE = 600


class TextParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    patterns: list[str] = Field(min_length=1)
    exclude: list[str] = Field(default_factory=list)
    sources: list[str] | None = None
    object_kinds: list[str] | None = None

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


def _subject(text: Text) -> Subject:
    if text.pod:
        return Subject(kind="Pod", name=text.pod, namespace=text.namespace)
    if text.object_kind and text.object_name:
        return Subject(kind=text.object_kind, name=text.object_name, namespace=text.namespace)
    return Subject(kind="Text", name=None)


@detector("text_match", ("line", "source", "pod", "container"), TextParams)
def text_match(ctx: Context, rule: Rule) -> Iterable[Hit]:
    params = TextParams.model_validate(rule.params)
    patterns = [_compiled(p) for p in params.patterns]
    any_pattern = _any_of(tuple(params.patterns))
    excludes = [_compiled(p) for p in params.exclude]
    sources = frozenset(params.sources) if params.sources else None
    grouped: dict[Subject, tuple[dict[str, str], list[Evidence]]] = {}
    seen_lines: set[str] = set()
    for text in ctx.iter_texts(sources):
        if params.object_kinds is not None and text.object_kind not in params.object_kinds:
            continue
        line = text.text[:20_000]
        if not any_pattern.search(line):
            continue
        match = next((m for p in patterns if (m := p.search(line))), None)
        if match is None or any(x.search(line) for x in excludes) or line in seen_lines:
            continue
        seen_lines.add(line)
        subject = _subject(text)
        found = grouped.get(subject)
        if found is None:
            values = {k: v for k, v in match.groupdict().items() if v is not None}
            found = (
                {
                    **values,
                    "line": line[:MAX_LINE],
                    "source": text.source,
                    "pod": text.pod or "",
                    "container": text.container or "",
                    "namespace": text.namespace or "",
                },
                [],
            )
            grouped[subject] = found
        if len(found[1]) < MAX_EVIDENCE_PER_SUBJECT:
            where = f"{text.source} {text.pod}" if text.pod else text.source
            found[1].append(Evidence(source=where, text=line[:MAX_LINE]))
    for subject, (values, evidence) in grouped.items():
        yield Hit(subject, tuple(evidence), values)
