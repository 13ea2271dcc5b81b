"""docs/rules.md is the catalogue as ``raydiag rules --format markdown`` writes it, never older."""

from __future__ import annotations

import io
from pathlib import Path

from bot.catalogue import default_catalogue
from bot.cli import run
from bot.render.rules_doc import rules_markdown

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "rules.md"
CASE_DIR = ROOT / "tests" / "cases"


def test_docs_rules_md_is_fresh() -> None:
    expected = rules_markdown(default_catalogue(), CASE_DIR)
    committed = PAGE.read_text(encoding="utf-8") if PAGE.exists() else ""
    assert committed == expected, (
        "docs/rules.md is stale: regenerate it with `make rules-doc` "
        "(raydiag rules --format markdown > docs/rules.md) and commit it"
    )


def _rules(*args: str) -> str:
    out = io.StringIO()
    assert run(["rules", *args], io.StringIO(""), out) == 0
    return out.getvalue()


def test_the_page_lists_every_rule_with_its_cause_reading_and_cases() -> None:
    page = _rules("--format", "markdown")
    catalogue = default_catalogue()
    for rule in catalogue:
        assert f"## {rule.code} `{rule.id}`" in page
        fires = sorted((CASE_DIR / rule.id / "fires").iterdir())
        assert f"fires cases ({len(fires)}): " in page
        assert f"(../tests/cases/{rule.id}/fires/{fires[0].name})" in page
    retold = catalogue["ray-gpu-detection-failed"]
    section = page.split(f"## {retold.code} ")[1].split("\n## ")[0]
    assert "Cause 4: Ray node did not register its GPUs" in section
    assert "reads: `output`, `retelling`" in section
    assert retold.params["retold"][0] in section  # the patterns, verbatim


def test_the_page_speaks_chinese_too_and_names_no_cases_it_cannot_find(tmp_path: Path) -> None:
    page = _rules("--format", "markdown", "--lang", "zh", "--cases", str(tmp_path / "none"))
    assert page.startswith("# 规则目录\n")
    assert "原因 4：Ray 节点没有登记 GPU" in page
    assert "本次安装不含规则用例" in page
    assert "fires cases" not in page and "应触发的用例 (" not in page
