"""The rule catalogue: one YAML file per rule in ``rules/``, validated when loaded.

A rule is data: its stable code, its cause number from CAUSES.md, the words shown to people in
English and Chinese, and the command templates. The logic that notices a problem lives in a named
detector (``bot.classify.detectors``); a rule says which detector feeds it and with what
parameters. Loading checks every file against the schema *and* against the detector it names, so a
typo in a template placeholder or a detector name stops start-up with the file and field, instead
of producing a half-filled message in a channel during an incident.
"""

from __future__ import annotations

import os
import re
import string
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from bot.diagnosis import Layer, Severity

if TYPE_CHECKING:
    from bot.classify.registry import DetectorSpec

Stage = Literal["pod-scheduling", "pod-health", "connectivity", "ray-resources", "application", "info"]
Language = Literal["en", "zh"]
LANGUAGES: tuple[Language, ...] = ("en", "zh")

# Triage order from CAUSES.md: the Kubernetes layer first, then connectivity, Ray's logical
# resources, and the application last.
STAGE_ORDER: dict[str, int] = {
    "pod-scheduling": 0,
    "pod-health": 1,
    "connectivity": 2,
    "ray-resources": 3,
    "application": 4,
    "info": 5,
}

RULE_ID = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
RULE_CODE = re.compile(r"^RD\d{4}$")


class RuleError(ValueError):
    """A rule file is invalid; the message names the file and the field."""


class RuleText(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    title: str = Field(min_length=3, max_length=140)
    explanation: str = Field(min_length=10)
    fix: list[str] = Field(min_length=1)
    verify: list[str] = Field(min_length=1)


class Rule(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    code: str
    cause: int | None = Field(ge=1, le=10)
    layer: Layer
    stage: Stage
    severity: Severity
    priority: int = Field(default=100, ge=0, le=1000)
    detector: str
    params: dict[str, Any] = Field(default_factory=dict)
    supersedes: list[str] = Field(default_factory=list)
    commands: list[str] = Field(default_factory=list)
    text: dict[Language, RuleText]

    @field_validator("id")
    @classmethod
    def _id_shape(cls, value: str) -> str:
        if not RULE_ID.match(value):
            raise ValueError("must be lower-case words joined by '-'")
        return value

    @field_validator("code")
    @classmethod
    def _code_shape(cls, value: str) -> str:
        if not RULE_CODE.match(value):
            raise ValueError("must look like RD0101 (RD, then the cause as two digits, then a number)")
        return value

    @model_validator(mode="after")
    def _every_language(self) -> Rule:
        missing = [lang for lang in LANGUAGES if lang not in self.text]
        if missing:
            raise ValueError(f"text is missing language(s): {', '.join(missing)}")
        expected_prefix = f"RD{self.cause or 0:02d}"
        if not self.code.startswith(expected_prefix):
            raise ValueError(f"code {self.code} does not start with {expected_prefix} for cause {self.cause}")
        return self

    def templates(self) -> Iterable[tuple[str, str]]:
        """Every (field path, template) pair, for placeholder checks."""
        for index, command in enumerate(self.commands):
            yield f"commands[{index}]", command
        for lang, text in self.text.items():
            yield f"text.{lang}.title", text.title
            yield f"text.{lang}.explanation", text.explanation
            for index, line in enumerate(text.fix):
                yield f"text.{lang}.fix[{index}]", line
            for index, line in enumerate(text.verify):
                yield f"text.{lang}.verify[{index}]", line


def placeholders(template: str) -> set[str]:
    names: set[str] = set()
    for _, field, _, _ in string.Formatter().parse(template):
        if field:
            names.add(field)
    return names


class Catalogue:
    """The loaded rules, in file-name order, looked up by id."""

    def __init__(self, rules: Iterable[Rule]) -> None:
        self.rules: tuple[Rule, ...] = tuple(rules)
        self._by_id = {rule.id: rule for rule in self.rules}

    def __iter__(self) -> Any:
        return iter(self.rules)

    def __len__(self) -> int:
        return len(self.rules)

    def __getitem__(self, rule_id: str) -> Rule:
        return self._by_id[rule_id]

    def get(self, rule_id: str) -> Rule | None:
        return self._by_id.get(rule_id)


def default_rules_dir() -> Path:
    """``$RAYDIAG_RULES_DIR``, else ``rules/`` beside the package in a checkout or installed with it."""
    configured = os.environ.get("RAYDIAG_RULES_DIR")
    if configured:
        return Path(configured)
    here = Path(__file__).resolve().parent
    for candidate in (here.parent / "rules", here / "rules"):
        if candidate.is_dir():
            return candidate
    raise RuleError(f"no rules directory found next to {here}")


def _describe(error: ValidationError) -> str:
    parts = []
    for item in error.errors():
        where = ".".join(str(p) for p in item["loc"]) or "(top level)"
        parts.append(f"{where}: {item['msg']}")
    return "; ".join(parts)


def parse_rule(path: Path, raw: object, detectors: Mapping[str, DetectorSpec]) -> Rule:
    if not isinstance(raw, dict):
        raise RuleError(f"{path.name}: expected a mapping at the top level")
    try:
        rule = Rule.model_validate(raw)
    except ValidationError as error:
        raise RuleError(f"{path.name}: {_describe(error)}") from error
    if rule.id != path.stem:
        raise RuleError(f"{path.name}: id: '{rule.id}' must equal the file name '{path.stem}'")
    spec = detectors.get(rule.detector)
    if spec is None:
        raise RuleError(f"{path.name}: detector: unknown detector '{rule.detector}'")
    problem = spec.check_params(rule.params)
    if problem:
        raise RuleError(f"{path.name}: params: {problem}")
    provided = spec.provides | _pattern_groups(rule)
    for where, template in rule.templates():
        unknown = placeholders(template) - provided
        if unknown:
            raise RuleError(
                f"{path.name}: {where}: unknown placeholder(s) {sorted(unknown)}; "
                f"detector '{rule.detector}' provides {sorted(provided)}"
            )
    return rule


def _pattern_groups(rule: Rule) -> frozenset[str]:
    """Named groups of a text rule's patterns are placeholders too."""
    names: set[str] = set()
    for pattern in rule.params.get("patterns", []) if isinstance(rule.params.get("patterns"), list) else []:
        try:
            names |= set(re.compile(str(pattern)).groupindex)
        except re.error:
            continue
    return frozenset(names)


def load_catalogue(directory: Path | None = None) -> Catalogue:
    from bot.classify.registry import DETECTORS

    directory = directory or default_rules_dir()
    rules: list[Rule] = []
    codes: dict[str, str] = {}
    for path in sorted(directory.glob("*.yaml")):
        try:
            raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError) as error:
            raise RuleError(f"{path.name}: cannot read YAML: {error}") from error
        rule = parse_rule(path, raw, DETECTORS)
        if rule.code in codes:
            raise RuleError(f"{path.name}: code: {rule.code} is already used by {codes[rule.code]}")
        codes[rule.code] = path.name
        rules.append(rule)
    known = {rule.id for rule in rules}
    for rule in rules:
        unknown = set(rule.supersedes) - known
        if unknown:
            raise RuleError(f"{rule.id}.yaml: supersedes: unknown rule(s) {sorted(unknown)}")
    if not rules:
        raise RuleError(f"no rule files (*.yaml) in {directory}")
    return Catalogue(rules)


@cache
def default_catalogue() -> Catalogue:
    return load_catalogue()
