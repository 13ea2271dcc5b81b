"""The rule cases as data (``tests/cases/<rule>/{fires,quiet}/*.txt``) for tests that read them."""

from __future__ import annotations

from pathlib import Path

from bot.classify import classify
from bot.collect.paste import parse_paste
from bot.diagnosis import Diagnosis

CASES = Path(__file__).resolve().parents[1] / "cases"


def case_text(rule: str, outcome: str, name: str) -> str:
    """One case file: ``outcome`` is ``fires`` or ``quiet``."""
    return (CASES / rule / outcome / name).read_text(encoding="utf-8")


def diagnose_paste(text: str) -> Diagnosis:
    return classify(parse_paste(text))


def rules_of(diagnosis: Diagnosis) -> list[str]:
    return [f.rule for f in diagnosis.findings]
