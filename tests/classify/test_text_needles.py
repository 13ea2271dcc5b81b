"""The text rules' literal prefilter skips only lines their patterns cannot match.

Every line of the corpus and of the rule cases that a text rule's pattern matches contains one of
that rule's needles (the prefilter is sound on real text), the needles read each regular
expression construct as it is, and a diagnosis is the same with the prefilter as without it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.catalogue import Rule, default_catalogue
from bot.classify import classify, lines
from bot.classify.lines import needles
from bot.collect.paste import parse_paste
from bot.snapshot.data import dump

TESTS = Path(__file__).resolve().parents[1]
SAMPLES = sorted([*TESTS.glob("corpus/*/*.txt"), *TESTS.glob("cases/*/fires/*")])
TEXT_RULES = [rule for rule in default_catalogue() if rule.detector == "text_match"]


def _searched(rule: Rule) -> tuple[str, ...]:
    """A text rule's patterns over tool output and over retellings: the detector searches both."""
    return (*rule.params.get("patterns", []), *rule.params.get("retold", []))


def test_every_text_rule_has_needles() -> None:
    assert TEXT_RULES
    assert [rule.id for rule in TEXT_RULES if needles(_searched(rule)) is None] == []


def test_every_line_a_pattern_matches_holds_a_needle() -> None:
    lines = [
        line[:20_000]
        for path in SAMPLES
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines()
    ]
    assert len(lines) > 5_000
    checked = 0
    for rule in TEXT_RULES:
        wanted = needles(_searched(rule))
        assert wanted is not None
        compiled = [re.compile(p) for p in _searched(rule)]
        for line in lines:
            if any(p.search(line) for p in compiled):
                checked += 1
                assert any(n in line.lower() for n in wanted), (rule.id, line[:200])
    assert checked > 300  # the rules do match real lines here


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        (r"Failed to connect to GCS at (?P<address>\S+)", {"failed to connect to gcs at "}),
        (r"(?i)NO such HOST", {"no such host"}),
        (r"(?:could not|cannot) resolve", {" resolve"}),
        (r"(?:could not|can't) load libnvidia", {" load libnvidia"}),  # the longer run wins
        (r"(?:refused|timed out)", {"refused", "timed out"}),
        (r"abc(?:defghij)?", {"abc"}),  # the optional part is not required
        (r"ab(?:cdefg)*x", None),  # `ab`, `x` too short; the repeated part may be absent
        (r"(?:xyz)+", {"xyz"}),  # repeated at least once
        (r"(?=lookahead)\w+", None),
        (r"[Ee]rror: \d+ pods", {"rror: "}),  # a character class ends a run
        (r"a|bcd", None),  # a branch with nothing long enough
    ],
)
def test_needles_read_each_construct(pattern: str, expected: set[str] | None) -> None:
    assert needles((pattern,)) == (frozenset(expected) if expected is not None else None)


def test_a_pattern_the_parser_cannot_read_searches_every_line() -> None:
    assert needles(("(unclosed",)) is None
    assert needles(("fine words", "(unclosed")) is None


def test_the_diagnosis_is_the_same_without_the_prefilter(monkeypatch: pytest.MonkeyPatch) -> None:
    catalogue = default_catalogue()
    pastes = [path.read_text(encoding="utf-8", errors="replace") for path in SAMPLES[::7]]
    with_filter = [dump(classify(parse_paste(text), catalogue)) for text in pastes]
    monkeypatch.setattr(lines, "needles", lambda patterns: None)
    without = [dump(classify(parse_paste(text), catalogue)) for text in pastes]
    assert with_filter == without
    assert sum(len(d["findings"]) for d in with_filter) > 50
