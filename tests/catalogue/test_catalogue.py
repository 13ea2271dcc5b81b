"""The rule catalogue loads, covers every cause, and refuses bad rule files by name and field."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from bot.catalogue import RuleError, default_catalogue, default_rules_dir, load_catalogue
from bot.render.template import fill

RULES = default_rules_dir()


def test_every_cause_has_a_rule_and_codes_follow_causes() -> None:
    catalogue = default_catalogue()
    causes = {rule.cause for rule in catalogue}
    assert set(range(1, 11)) <= causes
    for rule in catalogue:
        assert rule.code.startswith(f"RD{rule.cause or 0:02d}")


def test_every_rule_speaks_both_languages_with_commands() -> None:
    for rule in default_catalogue():
        assert set(rule.text) == {"en", "zh"}
        assert rule.commands, rule.id
        assert any("\u4e00" <= ch <= "\u9fff" for ch in rule.text["zh"].explanation), rule.id


def test_templates_render_without_leftover_braces() -> None:
    for rule in default_catalogue():
        for where, template in rule.templates():
            rendered = fill(template, {})
            assert "{}" not in rendered, (rule.id, where)


def _copy_rules(tmp_path: Path) -> Path:
    target = tmp_path / "rules"
    shutil.copytree(RULES, target)
    return target


def _edit(path: Path, change: dict[str, object]) -> None:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data.update(change)
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"cause": 11}, "cause"),
        ({"severity": "fatal"}, "severity"),
        ({"detector": "no_such_detector"}, "detector: unknown detector"),
        ({"commands": ["kubectl describe pod {podd}"]}, "commands[0]: unknown placeholder(s) ['podd']"),
        ({"code": "RD0301"}, "does not start with RD02"),
        ({"params": {"verdict": "sideways"}}, "params: verdict"),
        ({"id": "another-name"}, "must equal the file name"),
        ({"supersedes": ["not-a-rule"]}, "supersedes: unknown rule"),
    ],
)
def test_bad_rule_file_is_refused_with_file_and_field(
    tmp_path: Path, change: dict[str, object], expected: str
) -> None:
    rules = _copy_rules(tmp_path)
    _edit(rules / "k8s-untolerated-taint.yaml", change)
    with pytest.raises(RuleError) as error:
        load_catalogue(rules)
    assert "k8s-untolerated-taint.yaml" in str(error.value)
    assert expected in str(error.value)


def test_missing_language_is_refused(tmp_path: Path) -> None:
    rules = _copy_rules(tmp_path)
    path = rules / "ray-resources-held.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    del data["text"]["zh"]
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    with pytest.raises(RuleError, match=r"ray-resources-held.yaml: .*zh"):
        load_catalogue(rules)


def test_duplicate_code_is_refused(tmp_path: Path) -> None:
    rules = _copy_rules(tmp_path)
    _edit(rules / "k8s-node-cordoned.yaml", {"code": "RD0201"})
    with pytest.raises(RuleError, match="already used"):
        load_catalogue(rules)


def test_unparsable_yaml_is_refused(tmp_path: Path) -> None:
    rules = _copy_rules(tmp_path)
    (rules / "k8s-node-cordoned.yaml").write_text("id: [unclosed\n", encoding="utf-8")
    with pytest.raises(RuleError, match=r"k8s-node-cordoned\.yaml: cannot read YAML"):
        load_catalogue(rules)


def test_bad_pattern_is_refused(tmp_path: Path) -> None:
    rules = _copy_rules(tmp_path)
    _edit(rules / "ray-version-mismatch.yaml", {"params": {"patterns": ["(unclosed"]}})
    with pytest.raises(RuleError, match=r"ray-version-mismatch\.yaml: params: patterns"):
        load_catalogue(rules)
