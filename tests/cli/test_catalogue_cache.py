"""The compiled rule catalogue is cached on disk, and the cache never changes what raydiag does.

A hit gives the same rules as a fresh compile; a changed rule file, or a missing, stale, damaged or
foreign cache file, compiles (and checks) the rules again; a cache that cannot be written is only
slower. And `raydiag --help` loads none of it.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

import bot.catalogue as catalogue_module
from bot.catalogue import (
    CACHE_DIR_ENV,
    Catalogue,
    RuleError,
    cache_file,
    cached_catalogue,
    catalogue_key,
    default_cache_dir,
    default_rules_dir,
    load_catalogue,
)
from bot.snapshot.data import dump
from bot.snapshot.model import Snapshot

REPO = Path(__file__).resolve().parents[2]
RULES = default_rules_dir()
# Modules that `raydiag --help` must not pay for.
HEAVY = ("bot.catalogue", "bot.classify", "bot.diagnosis", "bot.snapshot", "pydantic", "yaml", "numpy")
HEAVY += ("slack_sdk", "slack_bolt", "kubernetes", "matplotlib", "bot.collect", "bot.render")
# The live commands' progress line: the standard library only, imported with the command line.
LIGHT = frozenset({"bot.collect", "bot.collect.progress"})


@pytest.fixture
def rules(tmp_path: Path) -> Path:
    target = tmp_path / "rules"
    shutil.copytree(RULES, target)
    return target


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "cache"


@pytest.fixture
def no_compile(monkeypatch: pytest.MonkeyPatch) -> None:
    """From here on, a catalogue can only come from the cache."""

    def refuse(directory: Path | None = None) -> Catalogue:
        raise AssertionError(f"compiled {directory} although the cache should have answered")

    monkeypatch.setattr(catalogue_module, "load_catalogue", refuse)


def _same(first: Catalogue, second: Catalogue) -> None:
    assert first.rules == second.rules
    assert [dump(rule) for rule in first] == [dump(rule) for rule in second]
    for one, other in zip(first, second, strict=True):
        assert all(type(one.text[lang]) is type(other.text[lang]) for lang in one.text), one.id
    assert [rule.id for rule in first] == [rule.id for rule in second]
    assert all(first[rule.id] == rule for rule in second)


def _edit(path: Path, change: dict[str, object]) -> None:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data.update(change)
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")


def _warm(rules: Path, cache: Path) -> Path:
    cached_catalogue(rules, cache)
    path = cache_file(rules, cache)
    assert path.is_file()
    return path


def test_a_hit_gives_the_catalogue_a_fresh_compile_gives(
    rules: Path, cache: Path, request: pytest.FixtureRequest
) -> None:
    fresh = load_catalogue(rules)
    _same(cached_catalogue(rules, cache), fresh)  # a miss: compiled, then written
    request.getfixturevalue("no_compile")
    hit = cached_catalogue(rules, cache)
    _same(hit, fresh)
    assert len(hit) == len(fresh) > 100


def test_the_real_catalogue_round_trips_through_the_cache(
    cache: Path, request: pytest.FixtureRequest
) -> None:
    fresh = load_catalogue(RULES)
    cached_catalogue(RULES, cache)
    request.getfixturevalue("no_compile")
    _same(cached_catalogue(RULES, cache), fresh)


def test_changing_a_rule_file_compiles_again(rules: Path, cache: Path) -> None:
    path = _warm(rules, cache)
    before = path.read_bytes()
    target = rules / "k8s-untolerated-taint.yaml"
    data = yaml.safe_load(target.read_text(encoding="utf-8"))
    data["text"]["en"]["title"] = "A new title for the untolerated taint"
    target.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")

    changed = cached_catalogue(rules, cache)

    assert changed["k8s-untolerated-taint"].text["en"].title == "A new title for the untolerated taint"
    _same(changed, load_catalogue(rules))
    assert path.read_bytes() != before  # rewritten for the new rules


def test_a_bad_rule_is_refused_even_with_a_warm_cache(rules: Path, cache: Path) -> None:
    _warm(rules, cache)
    _edit(rules / "k8s-untolerated-taint.yaml", {"commands": ["kubectl describe pod {podd}"]})
    with pytest.raises(RuleError, match=r"k8s-untolerated-taint\.yaml: commands\[0\]: unknown placeholder"):
        cached_catalogue(rules, cache)


def test_a_new_or_removed_rule_file_changes_the_key(rules: Path) -> None:
    key = catalogue_key(rules)
    (rules / "k8s-node-cordoned.yaml").rename(rules / "k8s-node-cordoned.yaml.off")
    assert catalogue_key(rules) != key
    (rules / "k8s-node-cordoned.yaml.off").rename(rules / "k8s-node-cordoned.yaml")
    assert catalogue_key(rules) == key
    # The same bytes under another name are another catalogue (the id must equal the file name).
    shutil.copy(rules / "k8s-node-cordoned.yaml", rules / "zz-copy.yaml")
    assert catalogue_key(rules) != key


def test_changing_the_code_that_checks_rules_changes_the_key(
    rules: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "detector.py"
    source.write_text("PROVIDES = ('node',)\n", encoding="utf-8")
    monkeypatch.setattr(catalogue_module, "_compiled_form_sources", lambda: [source])
    key = catalogue_key(rules)
    source.write_text("PROVIDES = ('node', 'pod')\n", encoding="utf-8")
    assert catalogue_key(rules) != key


def test_the_detectors_and_models_are_part_of_the_key() -> None:
    sources = {path.relative_to(REPO).as_posix() for path in catalogue_module._compiled_form_sources()}
    assert {"bot/catalogue.py", "bot/diagnosis.py", "bot/classify/registry.py"} <= sources
    assert "bot/classify/detectors/text.py" in sources


def _truncated(data: bytes) -> bytes:
    return data[: len(data) // 2]


def _emptied(data: bytes) -> bytes:
    return b""


def _garbage(data: bytes) -> bytes:
    return b"\x00\xff not a cache \x80" * 100


def _payload_edited(data: bytes) -> bytes:
    # One letter of a title changed: valid JSON, same length, right key; only the checksum tells.
    at = data.index(b'"title":"') + len(b'"title":"')
    letter = b"Q" if data[at : at + 1] != b"Q" else b"R"
    return data[:at] + letter + data[at + 1 :]


def _header_lost(data: bytes) -> bytes:
    return data.split(b"\n", 1)[1]


def _stale(data: bytes) -> bytes:
    meta = json.loads(data.split(b"\n", 1)[0])
    meta["key"] = "0" * 64
    return json.dumps(meta).encode() + b"\n" + data.split(b"\n", 1)[1]


def _other_format(data: bytes) -> bytes:
    meta = json.loads(data.split(b"\n", 1)[0])
    meta["format"] = -1
    return json.dumps(meta).encode() + b"\n" + data.split(b"\n", 1)[1]


def _wrong_shape(data: bytes) -> bytes:
    payload = json.dumps([{"id": "no-text"}]).encode()
    meta = json.loads(data.split(b"\n", 1)[0])
    meta["sha256"] = hashlib.sha256(payload).hexdigest()
    return json.dumps(meta).encode() + b"\n" + payload


@pytest.mark.parametrize(
    "damage",
    [_truncated, _emptied, _garbage, _payload_edited, _header_lost, _stale, _other_format, _wrong_shape],
)
def test_a_damaged_or_stale_cache_file_compiles_and_is_rewritten(
    rules: Path, cache: Path, damage: Callable[[bytes], bytes], request: pytest.FixtureRequest
) -> None:
    fresh = load_catalogue(rules)
    path = _warm(rules, cache)
    good = path.read_bytes()
    path.write_bytes(damage(good))
    assert path.read_bytes() != good

    _same(cached_catalogue(rules, cache), fresh)

    assert path.read_bytes() == good
    request.getfixturevalue("no_compile")
    _same(cached_catalogue(rules, cache), fresh)


def test_a_cache_file_of_another_user_is_not_read(
    rules: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _warm(rules, cache)
    owner = path.stat().st_uid
    monkeypatch.setattr(os, "getuid", lambda: owner + 1)
    compiled: list[Path | None] = []
    real = catalogue_module.load_catalogue

    def counting(directory: Path | None = None) -> Catalogue:
        compiled.append(directory)
        return real(directory)

    monkeypatch.setattr(catalogue_module, "load_catalogue", counting)
    _same(cached_catalogue(rules, cache), real(rules))
    assert compiled == [rules]


def test_an_unwritable_cache_dir_still_gives_the_catalogue(rules: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory\n", encoding="utf-8")
    cache = blocker / "raydiag"  # cannot be created, whoever runs the test
    fresh = load_catalogue(rules)
    _same(cached_catalogue(rules, cache), fresh)
    _same(cached_catalogue(rules, cache), fresh)
    assert not cache.exists()


def test_rules_that_json_cannot_hold_are_not_cached(rules: Path, cache: Path) -> None:
    rule = load_catalogue(rules)["k8s-node-cordoned"]
    odd = Catalogue([replace(rule, params={"since": datetime.date(2024, 1, 2)})])
    catalogue_module._write_cache(cache_file(rules, cache), "key", odd)
    assert not cache_file(rules, cache).exists()
    keyed = Catalogue([replace(rule, params={"names": {1: "one"}})])
    catalogue_module._write_cache(cache_file(rules, cache), "key", keyed)
    assert not cache_file(rules, cache).exists()
    catalogue_module._write_cache(cache_file(rules, cache), "key", Catalogue([rule]))
    assert cache_file(rules, cache).exists()


def test_no_temporary_file_is_left_behind(rules: Path, cache: Path) -> None:
    _warm(rules, cache)
    (rules / "k8s-node-cordoned.yaml").write_bytes((rules / "k8s-node-cordoned.yaml").read_bytes() + b"\n")
    cached_catalogue(rules, cache)
    assert [p.name for p in cache.iterdir()] == [cache_file(rules, cache).name]


def test_the_cache_dir_follows_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CACHE_DIR_ENV, raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "raydiag"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/is/ignored")
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "raydiag"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "raydiag"
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "own"))
    assert default_cache_dir() == tmp_path / "own"


def _python(code: str, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


# Runs `raydiag ARGS...` (its `main`, which the entry point calls before its quick exit) and prints
# the modules it loaded, as JSON, last.
_LOADED = """
import json, sys
sys.argv = ["raydiag", *sys.argv[1:]]
from bot.cli import main
try:
    code = main()
except SystemExit as end:
    code = end.code
print("\\nMODULES " + json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def _loaded(env: dict[str, str], *args: str) -> tuple[int, set[str], str]:
    result = _python(_LOADED, env, *args)
    assert "MODULES " in result.stdout, result.stderr
    head, _, tail = result.stdout.rpartition("\nMODULES ")
    report = json.loads(tail)
    return report["code"], set(report["modules"]), head + result.stderr


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules - LIGHT if any(m == h or m.startswith(h + ".") for h in HEAVY))


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, CACHE_DIR_ENV: str(tmp_path / "cache")}


def test_help_and_bad_usage_load_no_catalogue_model_or_client(env: dict[str, str]) -> None:
    code, modules, output = _loaded(env, "--help")
    assert code == 0
    assert "explain" in output
    assert "bot.cli" in modules
    assert _heavy(modules) == []

    code, modules, output = _loaded(env, "explain", "--format", "sideways")
    assert code == 2
    assert "raydiag: error:" in output
    assert _heavy(modules) == []


def test_a_warm_cache_spares_rules_the_yaml_and_the_detectors(env: dict[str, str]) -> None:
    code, modules, output = _loaded(env, "rules")  # cold: compiles, so it reads YAML
    assert code == 0
    assert "RD0" in output
    assert {"bot.catalogue", "yaml", "bot.classify.detectors"} <= modules

    code, modules, output = _loaded(env, "rules")  # warm
    assert code == 0
    assert "RD0" in output
    assert "bot.catalogue" in modules
    assert "yaml" not in modules
    assert not any(m.startswith("bot.classify") for m in modules)


def test_a_paste_is_explained_without_pydantic_which_a_snapshot_file_loads(
    env: dict[str, str], tmp_path: Path
) -> None:
    # The snapshot, diagnosis and rule records are dataclasses; pydantic checks only data from
    # outside: a cold catalogue's rule files, and a snapshot file.
    code, modules, _ = _loaded(env, "rules")
    assert code == 0 and "pydantic" in modules  # cold: the rule files are validated
    paste = REPO / "tests/corpus/recorded/v1-pg-held-status-and-python.txt"
    for form in ("text", "json"):
        code, modules, output = _loaded(env, "explain", str(paste), "--format", form)
        assert code == 0
        assert "RD0" in output
        assert not any(m == "pydantic" or m.startswith(("pydantic.", "pydantic_core")) for m in modules)

    snapshot = tmp_path / "snapshot.json"
    snapshot.write_text(Snapshot(cluster="c", origin="file").to_json(), encoding="utf-8")
    code, modules, _ = _loaded(env, "diagnose", "--snapshot", str(snapshot))
    assert code == 0 and "pydantic" in modules


def test_an_invalid_rule_file_still_stops_the_command(env: dict[str, str], rules: Path) -> None:
    _loaded(env, "rules")  # a warm cache for the real rules must not hide the broken copy
    _edit(rules / "k8s-untolerated-taint.yaml", {"detector": "no_such_detector"})
    code, _, output = _loaded({**env, "RAYDIAG_RULES_DIR": str(rules)}, "rules")
    assert code == 2
    assert "raydiag: invalid rule catalogue: k8s-untolerated-taint.yaml: detector" in output
