"""What ``raydiag lint`` prints: a line per finding for a terminal or CI log, the diagnosis JSON, or
SARIF 2.1.0 for code-scanning pages.

Every finding of a lint is about one object of one file, so it travels with its location
(``Located``). In the diagnosis (text and JSON) the location is the finding's first evidence line,
``manifest``: ``<file>:<line> <Kind>/<name>``; in SARIF it is the result's physical location (the
file and the line of the object's ``metadata.name``) and a logical one (the object). A finding
about the run itself (the live nodes could not be read) belongs to no file: it comes first, named
by what could not be read.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import PurePath
from typing import Any
from urllib.parse import quote

from bot.catalogue import Catalogue
from bot.diagnosis import Diagnosis, Evidence, Finding
from bot.render.localize import LocalizedFinding, localize
from bot.render.messages import Lang
from bot.render.template import fill
from bot.terms import SEVERITY_ORDER

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LOCATION_SOURCE = "manifest"
STDIN_NAME = "<stdin>"
# SARIF's levels for raydiag's severities.
SARIF_LEVEL = {"critical": "error", "warning": "warning", "info": "note"}

_WORDS: dict[str, dict[Lang, str]] = {
    "clean": {
        "en": "No findings in {objects} Ray object(s) of {files} file(s).",
        "zh": "{files} 个文件中的 {objects} 个 Ray 对象没有发现问题。",
    },
    "found": {
        "en": "{findings} finding(s) in {objects} Ray object(s) of {files} file(s).",
        "zh": "{files} 个文件中的 {objects} 个 Ray 对象共有 {findings} 项发现。",
    },
    "none": {
        "en": "No RayCluster, RayJob or RayService in {files} file(s); nothing to check.",
        "zh": "{files} 个文件中没有 RayCluster、RayJob 或 RayService，没有可检查的内容。",
    },
    "fix": {"en": "fix", "zh": "修复"},
    "error": {"en": "check failed", "zh": "检查失败"},
}


def _say(key: str, lang: Lang, **values: object) -> str:
    return _WORDS[key][lang].format(**values)


@dataclass(frozen=True)
class Located:
    """A finding and the manifest object it is about."""

    finding: Finding
    path: str
    line: int
    obj: str  # ``RayJob/train``
    namespace: str | None = None

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass(frozen=True)
class LintResult:
    located: list[Located]
    # The checks that could not run, as the errors of a diagnosis (a detector that failed, the
    # live nodes that could not be read).
    failures: Diagnosis
    files: int
    objects: int
    # Findings about the run rather than one object: what could not be read (collection-failed).
    general: list[Finding] = field(default_factory=list)

    @property
    def errors(self) -> list[Any]:
        return list(self.failures.errors)

    @property
    def unreported_errors(self) -> list[Any]:
        """The errors no finding of ``general`` already reports (a rule that failed)."""
        reported = {f.params.get("source") for f in self.general}
        return [e for e in self.errors if e.source not in reported]

    def reaches(self, fail_on: str) -> bool:
        """Whether a finding is at least as severe as ``fail_on``, or a check could not run."""
        limit = SEVERITY_ORDER[fail_on]
        findings = [x.finding for x in self.located] + self.general
        return bool(self.errors) or any(SEVERITY_ORDER[f.severity] <= limit for f in findings)


def sort_located(located: Sequence[Located]) -> list[Located]:
    """By file and line, then most severe first, then code: the order a reader walks the files."""
    return sorted(
        located,
        key=lambda x: (
            x.path,
            x.line,
            SEVERITY_ORDER[x.finding.severity],
            x.finding.code,
            x.finding.params.get("group", ""),
        ),
    )


def lint_diagnosis(result: LintResult) -> Diagnosis:
    """The findings as one diagnosis (the model ``explain --format json`` prints), each led by the
    evidence line that says where it is."""
    findings = [
        replace(
            x.finding,
            evidence=[Evidence(source=LOCATION_SOURCE, text=f"{x.where} {x.obj}"), *x.finding.evidence],
        )
        for x in sort_located(result.located)
    ]
    clusters = {x.finding.subject.name for x in result.located}
    return Diagnosis(
        cluster=next(iter(clusters)) if len(clusters) == 1 else None,
        findings=[*result.general, *findings],
        errors=list(result.failures.errors),
    )


def _detail(finding: LocalizedFinding, lang: Lang) -> list[str]:
    lines = [f"    {evidence.source}: {evidence.text}" for evidence in finding.evidence]
    if finding.fix:
        lines.append(f"    {_say('fix', lang)}: {finding.fix[0]}")
    return lines


def render_lint_text(result: LintResult, catalogue: Catalogue, lang: Lang) -> str:
    lines: list[str] = []
    for general in result.general:
        finding = localize(general, catalogue, lang, None)
        lines.append(
            f"{general.subject.name}: {finding.severity} {finding.code} {finding.rule}: {finding.title}"
        )
        lines.extend(_detail(finding, lang))
    for x in sort_located(result.located):
        finding = localize(x.finding, catalogue, lang, x.finding.subject.name, x.namespace)
        lines.append(f"{x.where}: {finding.severity} {finding.code} {finding.rule} {x.obj}: {finding.title}")
        lines.extend(_detail(finding, lang))
    for error in result.unreported_errors:
        lines.append(f"{_say('error', lang)}: {error.source}: {error.message}")
    if not result.objects:
        lines.append(_say("none", lang, files=result.files))
    elif result.located or result.general:
        count = len(result.located) + len(result.general)
        lines.append(_say("found", lang, findings=count, objects=result.objects, files=result.files))
    else:
        lines.append(_say("clean", lang, objects=result.objects, files=result.files))
    return "\n".join(lines) + "\n"


def artifact_uri(path: str) -> str:
    """A file's SARIF ``uri``: a relative path as a relative reference, an absolute one as file://."""
    pure = PurePath(path)
    if pure.is_absolute():
        return "file://" + quote(pure.as_posix())
    return quote(pure.as_posix())


def _rule_descriptor(catalogue: Catalogue, rule_id: str, lang: Lang) -> dict[str, Any]:
    rule = catalogue[rule_id]
    text = rule.text[lang]
    return {
        "id": rule.code,
        "name": rule.id,
        "shortDescription": {"text": fill(text.title, {})},
        "fullDescription": {"text": fill(text.explanation, {})},
        "help": {"text": "\n".join(fill(line, {}) for line in text.fix)},
        "defaultConfiguration": {"level": SARIF_LEVEL[rule.severity]},
        "properties": {"cause": rule.cause, "layer": rule.layer, "tags": [rule.layer, f"cause-{rule.cause}"]},
    }


def sarif_log(result: LintResult, catalogue: Catalogue, lang: Lang, version: str) -> dict[str, Any]:
    """One SARIF run: the rules that fired (their code as ``ruleId``) and one result per finding."""
    located = sort_located(result.located)
    fired = {x.finding.rule for x in located} | {f.rule for f in result.general}
    rule_ids = sorted(fired, key=lambda r: catalogue[r].code)
    index = {rule_id: i for i, rule_id in enumerate(rule_ids)}
    results: list[dict[str, Any]] = []
    for general in result.general:
        finding = localize(general, catalogue, lang, None)
        name = general.subject.name or general.subject.kind
        results.append(
            {
                "ruleId": finding.code,
                "ruleIndex": index[finding.rule],
                "level": SARIF_LEVEL[finding.severity],
                "message": {"text": finding.title},
                "locations": [{"logicalLocations": [{"name": name, "kind": "resource"}]}],
                "partialFingerprints": {"raydiag/v1": f"{finding.code}|{name}"},
            }
        )
    for x in located:
        finding = localize(x.finding, catalogue, lang, x.finding.subject.name, x.namespace)
        location: dict[str, Any] = {"logicalLocations": [{"name": x.obj, "kind": "object"}]}
        if x.path != STDIN_NAME:
            location["physicalLocation"] = {
                "artifactLocation": {"uri": artifact_uri(x.path)},
                "region": {"startLine": x.line},
            }
        results.append(
            {
                "ruleId": finding.code,
                "ruleIndex": index[finding.rule],
                "level": SARIF_LEVEL[finding.severity],
                "message": {"text": finding.title},
                "locations": [location],
                "partialFingerprints": {
                    "raydiag/v1": f"{finding.code}|{x.obj}|{x.finding.params.get('group', '')}"
                    f"|{x.finding.params.get('resource', '')}"
                },
            }
        )
    notifications = [
        {"level": "error", "message": {"text": f"{error.source}: {error.message}"}} for error in result.errors
    ]
    invocation: dict[str, Any] = {"executionSuccessful": not result.errors}
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "raydiag",
                        "version": version,
                        "rules": [_rule_descriptor(catalogue, rule_id, lang) for rule_id in rule_ids],
                    }
                },
                "invocations": [invocation],
                "results": results,
            }
        ],
    }


def render_sarif(result: LintResult, catalogue: Catalogue, lang: Lang, version: str) -> str:
    return json.dumps(sarif_log(result, catalogue, lang, version), ensure_ascii=False, indent=2) + "\n"
