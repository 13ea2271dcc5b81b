"""Every rule fires on its incident and stays quiet on its near miss.

Cases come from two places, walked the same way: Python scenarios on the realistic cluster
(``tests/support/scenarios.py``) and pasted-text files ``tests/cases/<rule-id>/{fires,quiet}-*.txt``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.catalogue import default_catalogue
from bot.classify import classify
from bot.collect.paste import parse_paste
from bot.diagnosis import Diagnosis
from bot.snapshot.files import parse_snapshot
from tests.support.scenarios import CASES, Case

CASE_DIR = Path(__file__).resolve().parents[1] / "cases"


def _paste_cases() -> list[tuple[str, str, Path]]:
    found = []
    for path in sorted(CASE_DIR.glob("*/*.txt")):
        expect = path.name.split("-", 1)[0]
        found.append((path.parent.name, expect, path))
    return found


PASTES = _paste_cases()


def diagnose_case(case: Case) -> Diagnosis:
    return classify(parse_snapshot(case.build().to_json()))


def _fired(diagnosis: Diagnosis, rule: str) -> list[str | None]:
    return [f.subject.name for f in diagnosis.findings if f.rule == rule]


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


@pytest.mark.parametrize("rule,expect,path", PASTES, ids=[f"{r}:{p.name}" for r, _, p in PASTES])
def test_pasted_case(rule: str, expect: str, path: Path) -> None:
    diagnosis = classify(parse_paste(path.read_text(encoding="utf-8")))
    fired = _fired(diagnosis, rule)
    if expect == "fires":
        assert fired, f"{rule} did not fire; got {[f.rule for f in diagnosis.findings]}"
    else:
        assert not fired, f"{rule} fired in a near miss: {fired}"


def test_every_rule_has_a_firing_and_a_quiet_case() -> None:
    covered: dict[str, set[str]] = {}
    for case in CASES:
        covered.setdefault(case.rule, set()).add(case.expect)
    for rule, expect, _ in PASTES:
        covered.setdefault(rule, set()).add(expect)
    catalogue = {rule.id for rule in default_catalogue()}
    missing = {rule: {"fires", "quiet"} - covered.get(rule, set()) for rule in catalogue}
    missing = {rule: sorted(gap) for rule, gap in missing.items() if gap}
    assert not missing, f"rules without cases: {missing}"
    unknown = set(covered) - catalogue
    assert not unknown, f"cases for rules that do not exist: {unknown}"
