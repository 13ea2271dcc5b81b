"""Fill a finding's rule templates with its facts, in one language.

Placeholders the finding does not know are shown as ``<name>`` so that a command is still
copyable and obviously incomplete, rather than silently wrong.
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from dataclasses import dataclass

from bot.catalogue import Catalogue
from bot.diagnosis import Diagnosis, Evidence, Finding, Subject
from bot.render.messages import Lang, say


class _Facts(dict[str, str]):
    """Unknown facts: ``<name>`` in a command (still copyable), a plain word in prose."""

    def __init__(self, values: Mapping[str, str], unknown: str | None) -> None:
        super().__init__(values)
        self.unknown = unknown

    def __missing__(self, key: str) -> str:
        return self.unknown if self.unknown is not None else f"<{key}>"


def fill(template: str, facts: Mapping[str, str], unknown: str | None = None) -> str:
    """Fill ``template``; an unknown fact reads ``unknown`` in prose but stays ``<name>`` inside a
    backtick span, where prose quotes a command (`kubectl describe node <node>`)."""
    if unknown is not None and "`" in template:
        parts = template.split("`")
        if len(parts) % 2 == 1:  # balanced: odd-numbered parts are code
            return "`".join(fill(part, facts, None if i % 2 else unknown) for i, part in enumerate(parts))
    values = _Facts({k: v for k, v in facts.items() if v}, unknown)
    try:
        return string.Formatter().vformat(template, (), values)
    except (ValueError, IndexError, KeyError):
        return template


@dataclass(frozen=True)
class LocalizedFinding:
    rule: str
    code: str
    cause: int | None
    layer: str
    severity: str
    title: str
    explanation: str
    subject: Subject
    evidence: list[Evidence]
    commands: list[str]
    fix: list[str]
    verify: list[str]


def facts_for(finding: Finding, cluster: str | None, namespace: str | None = None) -> dict[str, str]:
    facts = {
        "cluster": cluster or finding.params.get("raycluster", ""),
        "namespace": finding.subject.namespace or namespace or "",
        "kind": finding.subject.kind,
        "name": finding.subject.name or "",
    }
    facts.update({k: v for k, v in finding.params.items() if v})
    return facts


def localize(
    finding: Finding, catalogue: Catalogue, lang: Lang, cluster: str | None, namespace: str | None = None
) -> LocalizedFinding:
    rule = catalogue[finding.rule]
    text = rule.text[lang]
    facts = facts_for(finding, cluster, namespace)
    unknown = say("unknown", lang)
    return LocalizedFinding(
        rule=finding.rule,
        code=finding.code,
        cause=finding.cause,
        layer=finding.layer,
        severity=finding.severity,
        title=fill(text.title, facts, unknown),
        explanation=fill(text.explanation, facts, unknown),
        subject=finding.subject,
        evidence=list(finding.evidence),
        commands=[fill(c, facts) for c in rule.commands],
        fix=[fill(line, facts, unknown) for line in text.fix],
        verify=[fill(line, facts, unknown) for line in text.verify],
    )


def localize_all(diagnosis: Diagnosis, catalogue: Catalogue, lang: Lang) -> list[LocalizedFinding]:
    return [localize(f, catalogue, lang, diagnosis.cluster, diagnosis.namespace) for f in diagnosis.findings]


def verdict_summary(diagnosis: Diagnosis, findings: list[LocalizedFinding], lang: Lang) -> str:
    layer = diagnosis.verdict_layer
    if layer in ("kubernetes", "ray", "application"):
        top = next(f for f in findings if f.severity != "info")
        cause = say("cause", lang, cause=top.cause) if top.cause else say("no_cause", lang)
        return say(
            "verdict.found",
            lang,
            layer=say(f"layer.{layer}", lang),
            title=top.title,
            cause=cause,
            count=len(findings),
        )
    if layer == "healthy":
        return say("verdict.healthy", lang)
    return say("verdict.unknown_errors" if diagnosis.errors else "verdict.unknown", lang)
