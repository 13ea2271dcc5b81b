"""The rule catalogue: one YAML file per rule in ``rules/``, validated when loaded.

A rule is data: its stable code, its cause number from CAUSES.md, the words shown to people in
English and Chinese, and the command templates. The logic that notices a problem lives in a named
detector (``bot.classify.detectors``); a rule says which detector feeds it and with what
parameters. Loading checks every file against the schema *and* against the detector it names, so a
typo in a template placeholder or a detector name stops start-up with the file and field, instead
of producing a half-filled message in a channel during an incident.

Compiling the catalogue (reading the YAML, validating every rule) costs more than the rest of a
short command, so the compiled rules are cached on disk (``cached_catalogue``), keyed by a hash of
the rule files' bytes and of the code that defines and checks them. Any change to either compiles
and checks the rules again; a cache that is missing, stale, damaged or cannot be written is only
slower, never different.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import re
import string
import tempfile
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path
from typing import Any, Literal, Protocol

from bot.snapshot.base import StrictRecord, problems
from bot.snapshot.data import load
from bot.terms import Layer, Severity

Stage = Literal["pod-scheduling", "pod-health", "connectivity", "ray-resources", "application", "info"]
Language = Literal["en", "zh"]
# What a rule reads: a tool's own output (a log line, an event, a table), or a person's retelling of
# it in prose ("Ray doesn't detect my GPUs", "scale-up was not triggered"). A retelling is weaker
# evidence than the output it retells: a finding read from one is never `critical` (a rule that
# reads only retellings may not be; a detector that reads both caps its retold hits at `warning`).
Reading = Literal["output", "retelling"]
READINGS: tuple[Reading, ...] = ("output", "retelling")
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


# A rule file is checked by pydantic against these annotations (types, Literal values, no unknown
# keys) and by ``__post_init__`` (shapes, lengths, every language), which also runs when a rule is
# rebuilt from the compiled cache.
class RuleText(StrictRecord):
    title: str
    explanation: str
    fix: list[str]
    verify: list[str]

    def __post_init__(self) -> None:
        if not 3 <= len(self.title) <= 140:
            raise ValueError(f"title: must be 3 to 140 characters, not {len(self.title)}")
        if len(self.explanation) < 10:
            raise ValueError("explanation: must be at least 10 characters")
        for name in ("fix", "verify"):
            if not getattr(self, name):
                raise ValueError(f"{name}: must have at least one line")


class Rule(StrictRecord):
    id: str
    code: str
    cause: int | None
    layer: Layer
    stage: Stage
    severity: Severity
    priority: int = 100
    detector: str
    params: dict[str, Any] = dataclasses.field(default_factory=dict)
    supersedes: list[str] = dataclasses.field(default_factory=list)
    reads: list[Reading] = dataclasses.field(default_factory=lambda: ["output"])
    commands: list[str] = dataclasses.field(default_factory=list)
    text: dict[Language, RuleText]

    def __post_init__(self) -> None:
        if not RULE_ID.match(self.id):
            raise ValueError("id: must be lower-case words joined by '-'")
        if not RULE_CODE.match(self.code):
            raise ValueError("code: must look like RD0101 (RD, then the cause as two digits, then a number)")
        if self.cause is not None and not 1 <= self.cause <= 10:
            raise ValueError(f"cause: must be 1 to 10, not {self.cause}")
        if not 0 <= self.priority <= 1000:
            raise ValueError(f"priority: must be 0 to 1000, not {self.priority}")
        missing = [lang for lang in LANGUAGES if lang not in self.text]
        if missing:
            raise ValueError(f"text is missing language(s): {', '.join(missing)}")
        if not self.reads or len(set(self.reads)) != len(self.reads):
            raise ValueError("reads: name output, retelling or both, each once")
        if self.reads == ["retelling"] and self.severity == "critical":
            raise ValueError("severity: a rule that reads only a person's retelling is never critical")
        expected_prefix = f"RD{self.cause or 0:02d}"
        if not self.code.startswith(expected_prefix):
            raise ValueError(f"code {self.code} does not start with {expected_prefix} for cause {self.cause}")

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


class DetectorCheck(Protocol):
    """What checking a rule needs of the detector it names (``bot.classify.registry.DetectorSpec``
    is one): the placeholders it fills, and a check of the rule's params. Named here, so the
    catalogue does not import the classifier to say what it checks against."""

    @property
    def provides(self) -> frozenset[str]: ...

    def check_params(self, params: Mapping[str, Any]) -> str | None: ...


def parse_rule(path: Path, raw: object, detectors: Mapping[str, DetectorCheck]) -> Rule:
    if not isinstance(raw, dict):
        raise RuleError(f"{path.name}: expected a mapping at the top level")
    from pydantic import ValidationError  # noqa: PLC0415 - lazy: only compiling the rules needs pydantic

    try:
        rule = load(Rule, raw)
    except ValidationError as error:
        raise RuleError(f"{path.name}: {problems(error)}") from error
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
    patterns = [
        pattern
        for key in ("patterns", "retold")
        if isinstance(rule.params.get(key), list)
        for pattern in rule.params[key]
    ]
    for pattern in patterns:
        try:
            names |= set(re.compile(str(pattern)).groupindex)
        except re.error:
            continue
    return frozenset(names)


def load_catalogue(directory: Path | None = None) -> Catalogue:
    """Compile the rules of ``directory``: read every file and check it. No cache."""
    import yaml  # noqa: PLC0415 - lazy: only compiling reads YAML; a cached catalogue does not

    from bot.classify.registry import DETECTORS  # noqa: PLC0415 - lazy: the detectors import the classifier

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


# Bump when the cache file's layout or the way rules are rebuilt from it changes.
CACHE_FORMAT = 1
CACHE_DIR_ENV = "RAYDIAG_CACHE_DIR"


def default_cache_dir() -> Path | None:
    """``$RAYDIAG_CACHE_DIR``, else ``$XDG_CACHE_HOME/raydiag``, else ``~/.cache/raydiag``."""
    configured = os.environ.get(CACHE_DIR_ENV)
    if configured:
        return Path(configured)
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "raydiag"
    try:
        return Path.home() / ".cache" / "raydiag"
    except RuntimeError:  # no home directory to be found
        return None


def _compiled_form_sources() -> list[Path]:
    """The code that defines a compiled rule and decides whether a rule file is valid.

    The rule and text models (this file), the layers and severities they allow (bot/diagnosis.py),
    and the detectors with their parameter models and placeholders (bot/classify/).
    """
    package = Path(__file__).resolve().parent
    return [package / "catalogue.py", package / "diagnosis.py", *sorted((package / "classify").rglob("*.py"))]


def catalogue_key(directory: Path) -> str:
    """A hash of the rule files (names and bytes) and of the code that compiles and checks them."""
    digest = hashlib.sha256(f"raydiag catalogue cache {CACHE_FORMAT}\n".encode())
    for kind, paths in (("rule", sorted(directory.glob("*.yaml"))), ("code", _compiled_form_sources())):
        for path in paths:
            data = path.read_bytes()
            digest.update(f"{kind}\0{path.name}\0{len(data)}\0".encode())
            digest.update(data)
    return digest.hexdigest()


def cache_file(directory: Path, cache_dir: Path) -> Path:
    """One cache file per rules directory: a changed rule replaces it rather than adding one."""
    where = hashlib.sha256(str(directory.resolve()).encode()).hexdigest()[:16]
    return cache_dir / f"catalogue-{where}.json"


def _rule_data(rule: Rule) -> dict[str, Any]:
    return dataclasses.asdict(rule)


def _rebuilt(data: Mapping[str, Any]) -> Rule:
    fields = dict(data)
    fields["text"] = {lang: RuleText(**text) for lang, text in data["text"].items()}
    return Rule(**fields)


def _read_cache(path: Path, key: str) -> Catalogue | None:
    """The cached catalogue when the file is ours, is for ``key`` and is whole; else None."""
    try:
        with open(path, "rb") as handle:
            if hasattr(os, "getuid") and os.fstat(handle.fileno()).st_uid != os.getuid():
                return None
            header, _, payload = handle.read().partition(b"\n")
        meta = json.loads(header)
        if not isinstance(meta, dict) or meta.get("format") != CACHE_FORMAT or meta.get("key") != key:
            return None
        if meta.get("sha256") != hashlib.sha256(payload).hexdigest():
            return None
        return Catalogue(_rebuilt(item) for item in json.loads(payload))
    except Exception:  # whatever is wrong with the file, it is only a cache miss
        return None


def _write_cache(path: Path, key: str, catalogue: Catalogue) -> None:
    """Write the compiled rules for ``key``; skipped when they do not survive JSON or cannot be written."""
    data = [_rule_data(rule) for rule in catalogue]
    try:
        payload = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()
    except (TypeError, ValueError):  # a YAML value JSON cannot hold (a date, a set)
        return
    if json.loads(payload) != data:  # e.g. an integer mapping key, which JSON turns into text
        return
    meta = {"format": CACHE_FORMAT, "key": key, "sha256": hashlib.sha256(payload).hexdigest()}
    header = json.dumps(meta).encode()
    temporary: str | None = None
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=".catalogue-", suffix=".tmp", dir=path.parent)
        with os.fdopen(handle, "wb") as out:
            out.write(header + b"\n" + payload)
        os.replace(temporary, path)
        temporary = None
    except OSError:
        pass
    finally:
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)


def cached_catalogue(directory: Path | None = None, cache_dir: Path | None = None) -> Catalogue:
    """The catalogue of ``directory``, from the cache when its rules and code are unchanged.

    Otherwise the rules are compiled and checked (``load_catalogue``, which raises ``RuleError``
    for a bad rule) and the cache is rewritten. ``cache_dir`` defaults to ``default_cache_dir()``.
    """
    directory = directory or default_rules_dir()
    cache_dir = cache_dir or default_cache_dir()
    try:
        key = catalogue_key(directory)
    except OSError:  # a rule file that cannot be read: compiling names it
        return load_catalogue(directory)
    path = cache_file(directory, cache_dir) if cache_dir is not None else None
    if path is not None:
        cached = _read_cache(path, key)
        if cached is not None:
            return cached
    catalogue = load_catalogue(directory)
    if path is not None:
        _write_cache(path, key, catalogue)
    return catalogue


@cache
def default_catalogue() -> Catalogue:
    return cached_catalogue()
