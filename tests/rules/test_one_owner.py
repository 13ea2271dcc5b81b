"""One owner per message: a line of any firing case is read as one cause, not two.

Every non-empty line of every ``tests/cases/<rule>/fires/*.txt`` is diagnosed on its own, the way
``raydiag explain`` reads a paste (``parse_paste`` + ``classify``, which already drops what a rule's
``supersedes`` beats). The findings that remain must not name two numbered causes, unless

- one of the two rules ``supersedes`` the other (the catalogue records which reading wins), or
- both are verdicts of one analysis that ranks its own readings: rules that pick a ``verdict``
  (or ``verdicts``) of the same detector, such as ``pending_pod_fit`` reading a FailedScheduling
  message once. Such a detector reports the reading it ranks first at the rule's severity and the
  others, which the text alone cannot rule out, below it with the commands that settle them
  (CAUSES.md: "when text cannot settle the cause, say what's missing"): two of its findings of
  different causes may not both have the top severity it gives on that line.

Two independent readings of one line (two phrase rules, or a phrase rule beside a structural
one) fail here: make one of them the owner (the other ``exclude``s the wording or is
``supersedes``'d), following CAUSES.md's tie-breaks.
"""

from __future__ import annotations

import dataclasses
from itertools import combinations
from pathlib import Path

from bot.catalogue import Catalogue, Rule, default_catalogue
from bot.classify import classify
from bot.collect.paste import parse_paste
from bot.diagnosis import Finding
from bot.terms import SEVERITY_ORDER

CASE_DIR = Path(__file__).resolve().parents[1] / "cases"


def _firing_lines() -> list[tuple[Path, str]]:
    return [
        (path, line)
        for path in sorted(CASE_DIR.glob("*/fires/*.txt"))
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]


def _ranks_verdicts(rule: Rule) -> bool:
    return "verdict" in rule.params or "verdicts" in rule.params


def reconciled(first: Finding, second: Finding, findings: list[Finding], catalogue: Catalogue) -> bool:
    """Whether two findings of different causes on one line have a single owner."""
    a, b = catalogue[first.rule], catalogue[second.rule]
    if a.id in b.supersedes or b.id in a.supersedes:
        return True
    if not (a.detector == b.detector and _ranks_verdicts(a) and _ranks_verdicts(b)):
        return False
    # One analysis: its first reading has the top severity of its findings, the others less.
    top = min(SEVERITY_ORDER[f.severity] for f in findings if catalogue[f.rule].detector == a.detector)
    return not SEVERITY_ORDER[first.severity] == SEVERITY_ORDER[second.severity] == top


def overlaps(line: str, catalogue: Catalogue) -> list[tuple[str, int | None, str, int | None]]:
    """The pairs of rules of different causes that one line fires without one owner."""
    findings = [f for f in classify(parse_paste(line), catalogue).findings if f.cause is not None]
    pairs = {
        (a.rule, a.cause, b.rule, b.cause)
        for a, b in combinations(findings, 2)
        if a.cause != b.cause and not reconciled(a, b, findings, catalogue)
    }
    return sorted(pairs, key=str)


def test_every_line_of_a_firing_case_has_one_owner() -> None:
    catalogue = default_catalogue()
    lines = _firing_lines()
    assert lines, f"no firing cases under {CASE_DIR}"
    found = []
    for path, line in lines:
        for pair in overlaps(line, catalogue):
            found.append(f"{path.relative_to(CASE_DIR)}: {line.strip()[:160]!r} fires {pair}")
    assert not found, (
        "one line read as two causes; make one rule the owner (exclude the wording in the other, "
        "or `supersedes`), following CAUSES.md's tie-breaks:\n" + "\n".join(found)
    )


def test_the_check_sees_an_overlap_it_is_not_told_about() -> None:
    """A line two independent rules of different causes read (the go-nvml error, once read both
    as the device plugin's, cause 3, and as Ray's driver error, cause 4) is reported as soon as
    the owner's claim is taken away: here by dropping the exclusion in the other rule."""
    catalogue = default_catalogue()
    line = "Failed to initialize NVML: could not load NVML library"
    assert not overlaps(line, catalogue)
    ray_rule = catalogue["ray-gpu-driver-error"]
    unexcluded = {**ray_rule.params, "exclude": []}
    loosened = Catalogue(
        dataclasses.replace(rule, params=unexcluded) if rule.id == ray_rule.id else rule for rule in catalogue
    )
    assert ("gpu-stack-device-plugin-failed", 3, "ray-gpu-driver-error", 4) in overlaps(line, loosened)
