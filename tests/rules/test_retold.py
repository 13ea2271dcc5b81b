"""Readings of a person's retelling are labelled as such and are never critical.

A rule says what it reads (``reads``: ``output``, ``retelling`` or both, ``bot.catalogue.Reading``).
A retelling ("Ray doesn't detect my GPUs", "scale-up was not triggered") is weaker evidence than
the output it retells, so a finding read from one is a warning at most. Its cases are named
``tests/cases/<rule>/fires/<name>-retold.txt``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from bot.catalogue import READINGS, RuleError, default_catalogue, default_rules_dir, load_catalogue
from bot.classify import classify
from bot.collect.paste import parse_paste

CASE_DIR = Path(__file__).resolve().parents[1] / "cases"
RETOLD = sorted(CASE_DIR.glob("*/fires/*-retold.txt"))
# Detectors that read only facts stated in words (bot/classify/detectors/stated.py).
STATED_PREFIX = "stated_"


@pytest.mark.parametrize("path", RETOLD, ids=[f"{p.parents[1].name}:{p.name}" for p in RETOLD])
def test_a_retold_case_is_read_by_a_rule_that_says_so_and_never_as_critical(path: Path) -> None:
    rule = default_catalogue()[path.parents[1].name]
    assert "retelling" in rule.reads, f"{rule.id} fires on a retelling; add `reads: [..., retelling]`"
    findings = [
        f for f in classify(parse_paste(path.read_text(encoding="utf-8"))).findings if f.rule == rule.id
    ]
    assert findings, f"{rule.id} did not fire on its retold case"
    assert all(f.severity != "critical" for f in findings), [(f.subject, f.severity) for f in findings]


def test_a_rule_over_output_and_retellings_has_a_retold_case() -> None:
    """A rule that reads both shows its retold reading in a case (named ``*-retold.txt``); a rule
    that reads only retellings has nothing else in its firing cases."""
    retold_rules = {path.parents[1].name for path in RETOLD}
    missing = [
        r.id for r in default_catalogue() if set(r.reads) == set(READINGS) and r.id not in retold_rules
    ]
    assert not missing, f"rules over output and retellings without a fires/*-retold.txt case: {missing}"


def test_no_firing_case_of_a_rule_over_retellings_alone_is_critical() -> None:
    critical = []
    for rule in default_catalogue():
        if rule.reads != ["retelling"]:
            continue
        for path in sorted((CASE_DIR / rule.id / "fires").glob("*.txt")):
            findings = classify(parse_paste(path.read_text(encoding="utf-8"))).findings
            critical += [str(path) for f in findings if f.rule == rule.id and f.severity == "critical"]
    assert not critical, critical


def test_a_text_rule_keeps_its_retold_patterns_apart() -> None:
    """``retold`` patterns are how text_match knows to cap a hit; ``reads`` must agree with them."""
    wrong = []
    for rule in default_catalogue():
        if rule.detector != "text_match":
            continue
        has = {"output": bool(rule.params.get("patterns")), "retelling": bool(rule.params.get("retold"))}
        if {reading for reading, present in has.items() if present} != set(rule.reads):
            wrong.append((rule.id, rule.reads, sorted(k for k, v in has.items() if v)))
    assert not wrong, f"`reads` disagrees with the patterns/retold the rule has: {wrong}"


def test_rules_over_stated_facts_read_retellings() -> None:
    unlabelled = [
        r.id
        for r in default_catalogue()
        if r.detector.startswith(STATED_PREFIX) and "retelling" not in r.reads
    ]
    assert not unlabelled, f"rules over facts stated in words must say `reads: [retelling]`: {unlabelled}"


def test_a_critical_rule_over_retellings_alone_is_refused(tmp_path: Path) -> None:
    rules = tmp_path / "rules"
    shutil.copytree(default_rules_dir(), rules)
    path = rules / "cluster-autoscaler-no-scale-up-reported.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert data["reads"] == ["retelling"]
    data["severity"] = "critical"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    with pytest.raises(RuleError, match=r"cluster-autoscaler-no-scale-up-reported\.yaml: .*never critical"):
        load_catalogue(rules)


def test_a_retold_hit_of_a_critical_rule_is_a_warning_and_its_output_hit_stays_critical() -> None:
    rule = default_catalogue()["ray-gpu-detection-failed"]
    assert rule.severity == "critical" and rule.reads == ["output", "retelling"]
    retold = classify(parse_paste("Ray doesn't detect my GPUs on this node"))
    shown = classify(parse_paste("Could not parse gpu information for GPU 0: nvidia-smi returned nothing"))
    assert [f.severity for f in retold.findings if f.rule == rule.id] == ["warning"]
    assert [f.severity for f in shown.findings if f.rule == rule.id] == ["critical"]
