"""Every rule fires on its incident and stays quiet on its near miss.

Every rule's cases live in one folder, ``tests/cases/<rule-id>/fires/`` and ``.../quiet/``, at least
one of each, as polaris keeps its checks; a case is one of three kinds of file:

- ``*.txt``: pasted text, which must make the rule fire (or not) through ``parse_paste`` +
  ``classify``, as ``raydiag explain`` reads it;
- ``*.scenario.yaml``: a scenario on the realistic cluster, naming its builder in
  ``tests/support/scenarios.py`` and, for a firing case, the subject the rule must report;
- ``*.yaml``: a manifest for rules that need what only ``raydiag lint`` gives (a node list, the
  config's conventions), run by tests/lint/test_lint_context.py with the options on its first line.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.catalogue import default_catalogue
from bot.classify import classify
from bot.collect.paste import parse_paste
from bot.diagnosis import Diagnosis
from bot.read.cleaning import clean
from bot.read.snapshot_file import parse_snapshot
from bot.render.rules_doc import SCENARIO_SUFFIX
from tests.support.scenarios import BUILDERS, CASES, Case

CASE_DIR = Path(__file__).resolve().parents[1] / "cases"
OUTCOMES = ("fires", "quiet")


def _paste_cases() -> list[tuple[str, str, Path]]:
    return [
        (path.parents[1].name, path.parent.name, path)
        for outcome in OUTCOMES
        for path in sorted(CASE_DIR.glob(f"*/{outcome}/*.txt"))
    ]


PASTES = _paste_cases()
LINT_CASES = [
    (path.parents[1].name, path.parent.name)
    for outcome in OUTCOMES
    for path in sorted(CASE_DIR.glob(f"*/{outcome}/*.yaml"))
    if not path.name.endswith(SCENARIO_SUFFIX)
]


def diagnose_case(case: Case) -> Diagnosis:
    return classify(parse_snapshot(case.build().to_json()))


def _fired(diagnosis: Diagnosis, rule: str) -> list[str | None]:
    return [f.subject.name for f in diagnosis.findings if f.rule == rule]


def _squeezed(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@pytest.mark.parametrize("case", CASES, ids=[f"{c.rule}:{c.expect}:{c.name}" for c in CASES])
def test_scenario(case: Case) -> None:
    diagnosis = diagnose_case(case)
    assert not [e for e in diagnosis.errors if e.source.startswith("rule ")], diagnosis.errors
    subjects = _fired(diagnosis, case.rule)
    if case.expect == "fires":
        assert subjects, f"{case.rule} did not fire; got {[f.rule for f in diagnosis.findings]}"
        assert case.subject in subjects, f"{case.rule} fired on {subjects}, expected {case.subject}"
        finding = next(
            f for f in diagnosis.findings if f.rule == case.rule and f.subject.name == case.subject
        )
        assert finding.evidence, "a finding without evidence"
        assert finding.cause == default_catalogue()[case.rule].cause
    else:
        assert not subjects, f"{case.rule} fired on {subjects} in a near miss"


@pytest.mark.parametrize("rule,expect,path", PASTES, ids=[f"{r}:{e}:{p.name}" for r, e, p in PASTES])
def test_pasted_case(rule: str, expect: str, path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    diagnosis = classify(parse_paste(text))
    assert not [e for e in diagnosis.errors if e.source.startswith("rule ")], diagnosis.errors
    findings = [f for f in diagnosis.findings if f.rule == rule]
    if expect == "quiet":
        assert not findings, f"{rule} fired in a near miss: {[f.evidence for f in findings]}"
        return
    assert findings, f"{rule} did not fire; got {[f.rule for f in diagnosis.findings]}"
    catalogue_rule = default_catalogue()[rule]
    for finding in findings:
        assert finding.cause == catalogue_rule.cause
        assert finding.evidence, "a finding without evidence"
    if catalogue_rule.detector == "text_match":
        # A phrase rule quotes the paste itself; wrapped lines may have been joined by a space.
        pasted = _squeezed("\n".join(clean(text).lines))
        for finding in findings:
            for evidence in finding.evidence:
                assert _squeezed(evidence.text) in pasted, f"not quoted verbatim: {evidence.text!r}"


def test_case_files_are_filed_under_fires_or_quiet() -> None:
    misplaced = [
        str(path.relative_to(CASE_DIR))
        for path in CASE_DIR.rglob("*")
        if path.is_file()
        and not (
            path.suffix in (".txt", ".yaml")
            and len(path.relative_to(CASE_DIR).parts) == 3
            and path.parent.name in OUTCOMES
        )
    ]
    assert not misplaced, (
        f"case files must be tests/cases/<rule-id>/(fires|quiet)/<name>.(txt|yaml|scenario.yaml): {misplaced}"
    )


def test_every_rule_has_its_case_folder() -> None:
    """One home for every rule's cases: tests/cases/<rule-id>/fires and quiet, a file in each."""
    gaps = {
        rule.id: [o for o in OUTCOMES if not any((CASE_DIR / rule.id / o).glob("*"))]
        for rule in default_catalogue()
    }
    missing = {rule: gap for rule, gap in gaps.items() if gap}
    assert not missing, f"rules without tests/cases/<rule-id>/(fires|quiet)/ cases: {missing}"


def test_every_scenario_is_a_case() -> None:
    """A builder in tests/support/scenarios.py registered with ``@scenario`` is named by a case file."""
    named = {case.name for case in CASES}
    assert not set(BUILDERS) - named, f"scenarios no case file names: {sorted(set(BUILDERS) - named)}"


def test_every_rule_has_a_firing_and_a_quiet_case() -> None:
    covered: dict[str, set[str]] = {}
    for case in CASES:
        covered.setdefault(case.rule, set()).add(case.expect)
    for rule, expect, _ in PASTES:
        covered.setdefault(rule, set()).add(expect)
    for rule, expect in LINT_CASES:
        covered.setdefault(rule, set()).add(expect)
    catalogue = {rule.id for rule in default_catalogue()}
    missing = {rule: set(OUTCOMES) - covered.get(rule, set()) for rule in catalogue}
    missing = {rule: sorted(gap) for rule, gap in missing.items() if gap}
    assert not missing, f"rules without cases: {missing}"
    folders = {path.name for path in CASE_DIR.iterdir() if path.is_dir()}
    unknown = (set(covered) | folders) - catalogue
    assert not unknown, f"cases for rules that do not exist: {unknown}"
