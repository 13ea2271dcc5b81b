"""Every recorded Ray version and scenario gets the judgement Ray 2.60 gets.

``tools/record_ray_versions.py VERSION`` records each scenario from a real loopback cluster of that
Ray version (``tests/fixtures/ray/<version>/<scenario>/``): the dashboard answers the collector
reads and the text a user would paste. The dashboard path (answers → snapshot → classify) and the
paste path (``ray status -v`` → parse_paste → classify) must both name the scenario's cause, with the
same causes and subjects as on the newest recorded version; no answer of any version may crash
them, and the healthy scenario raises no warning.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import pytest

from bot.catalogue import default_catalogue
from bot.classify import classify
from bot.collect.deadline import Deadline
from bot.collect.paste import parse_paste
from bot.collect.ray_dashboard import DashboardReader, read_ray_layer
from bot.diagnosis import Diagnosis
from bot.render.text_report import render_text
from bot.snapshot.model import Snapshot
from tests.hardening.recorded_dashboard import recorded_answers, serve_dashboard

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ray"
_VERSION = re.compile(r"^\d+\.\d+\.\d+$")

# The cause each scenario is built to show (CAUSES.md), and a cause the paste path may give first
# when the text cannot settle it (a plain `ray status` hides `accelerator_type:` totals).
CAUSE = {
    "held-a100": 5,
    "detached-leftover": 5,
    "too-many-gpus": 6,
    "strict-pack-pg": 6,
    "gpu-type-missing": 7,
    "serve-constructor-fails": 10,
}


# The endpoints a scenario's cause is read from. A release that answers none of them (Ray 2.5's
# dashboard has no Serve REST API) cannot show that cause: the test then holds it to everything else.
NEEDS = {"serve-constructor-fails": ("serve_applications", "serve_applications_fallback")}


@cache
def _endpoints(version: str, scenario: str) -> dict[str, dict[str, object]]:
    """What the recorder asked each endpoint and what it answered (``_recording.json``)."""
    recording = (FIXTURES / version / scenario / "_recording.json").read_text(encoding="utf-8")
    endpoints: dict[str, dict[str, object]] = json.loads(recording)["endpoints"]
    return endpoints


def _unreadable(version: str, scenario: str) -> bool:
    endpoints = _endpoints(version, scenario)
    needed = NEEDS.get(scenario, ())
    return bool(needed) and all(endpoints.get(key, {}).get("status") != 200 for key in needed)


def _version_key(name: str) -> tuple[int, ...]:
    return tuple(int(part) for part in name.split("."))


VERSIONS = sorted(
    (p.name for p in FIXTURES.iterdir() if p.is_dir() and _VERSION.match(p.name)), key=_version_key
)
NEWEST = VERSIONS[-1] if VERSIONS else None
RECORDINGS = [(v, s.name) for v in VERSIONS for s in sorted((FIXTURES / v).iterdir()) if s.is_dir()]


@cache
def _collected(version: str, scenario: str) -> tuple[Diagnosis, tuple[str, ...]]:
    """The real collector against a loopback dashboard that answers every path as the release did
    (status and body), and the paths it asked."""
    with serve_dashboard(recorded_answers(f"{version}/{scenario}")) as server:
        reader = DashboardReader(server.url, Deadline(30))
        ray = read_ray_layer(reader)
        asked = tuple(path for path, _ in server.requests)
    return classify(Snapshot(origin="live", ray=ray, errors=reader.errors)), asked


def dashboard(version: str, scenario: str) -> Diagnosis:
    return _collected(version, scenario)[0]


@cache
def pasted(version: str, scenario: str, name: str = "ray_status_v.txt") -> Diagnosis:
    return classify(parse_paste((FIXTURES / version / scenario / name).read_text(encoding="utf-8")))


def _judgement(diagnosis: Diagnosis) -> set[tuple[int | None, str, str | None]]:
    return {(f.cause, f.subject.kind, f.subject.name) for f in diagnosis.findings if f.severity != "info"}


def test_at_least_two_versions_are_recorded() -> None:
    assert len(VERSIONS) >= 2, VERSIONS


@pytest.mark.parametrize(("version", "scenario"), RECORDINGS)
def test_the_dashboard_path_names_the_scenarios_cause(version: str, scenario: str) -> None:
    diagnosis = dashboard(version, scenario)
    if scenario == "healthy":
        assert _judgement(diagnosis) == set()
        return
    if _unreadable(version, scenario):
        assert CAUSE[scenario] not in {f.cause for f in diagnosis.findings}, "read from an endpoint it lacks"
        return
    assert diagnosis.findings, f"{version}/{scenario}: nothing found"
    assert CAUSE[scenario] in {f.cause for f in diagnosis.findings}, _judgement(diagnosis)


@pytest.mark.parametrize(("version", "scenario"), RECORDINGS)
def test_the_dashboard_path_judges_as_on_the_newest_version(version: str, scenario: str) -> None:
    if NEWEST is None or not (FIXTURES / NEWEST / scenario).is_dir():
        pytest.fail(f"{scenario} is not recorded for the newest version {NEWEST}")
    here, newest = _judgement(dashboard(version, scenario)), _judgement(dashboard(NEWEST, scenario))
    if _unreadable(version, scenario):
        lost = CAUSE[scenario]
        here, newest = {j for j in here if j[0] != lost}, {j for j in newest if j[0] != lost}
    assert here == newest


@pytest.mark.parametrize(("version", "scenario"), RECORDINGS)
def test_every_endpoint_of_the_release_is_read_without_an_error(version: str, scenario: str) -> None:
    diagnosis, asked = _collected(version, scenario)
    assert diagnosis.errors == [], diagnosis.errors
    recorded = {entry["path"] for entry in _endpoints(version, scenario).values()}
    assert set(asked) <= recorded, set(asked) - recorded  # the recorder asked what the collector asks


@pytest.mark.parametrize(("version", "scenario"), RECORDINGS)
def test_what_the_release_cannot_show_is_said(version: str, scenario: str) -> None:
    """A release without the Serve REST API on its dashboard gets a note that Serve was not read,
    naming the paths that answered 404; a release with it never does."""
    diagnosis = dashboard(version, scenario)
    notes = [f for f in diagnosis.findings if f.rule == "ray-serve-not-read"]
    if _unreadable(version, "serve-constructor-fails"):
        assert [f.severity for f in notes] == ["info"], _judgement(diagnosis)
        for lang in ("en", "zh"):
            report = render_text(diagnosis, default_catalogue(), lang)
            assert f"Ray {version}" in report and "`/api/serve/applications/`" in report, report
    else:
        assert notes == []


# What a user pastes: each recorded text must judge as the newest release's same text does.
TEXTS = (
    "ray_status.txt",
    "ray_status_v.txt",
    "ray_list_actors.txt",
    "ray_list_tasks.txt",
    "ray_list_placement_groups.txt",
    "serve_status.txt",
    "driver.stderr.txt",
)


@pytest.mark.parametrize(("version", "scenario"), RECORDINGS)
def test_every_pasted_text_judges_as_on_the_newest_version(version: str, scenario: str) -> None:
    compared = 0
    for name in TEXTS:
        if not (FIXTURES / version / scenario / name).exists():
            continue
        assert NEWEST is not None and (FIXTURES / NEWEST / scenario / name).exists(), name
        assert _judgement(pasted(version, scenario, name)) == _judgement(pasted(NEWEST, scenario, name)), name
        compared += 1
    assert compared >= 5, f"only {compared} texts recorded"


@pytest.mark.parametrize(
    ("version", "scenario"), [r for r in RECORDINGS if r[1] != "serve-constructor-fails"]
)
def test_pasted_ray_status_v_names_the_scenarios_cause(version: str, scenario: str) -> None:
    diagnosis = pasted(version, scenario)
    if scenario == "healthy":
        assert _judgement(diagnosis) == set()
        return
    assert diagnosis.findings and diagnosis.findings[0].cause == CAUSE[scenario], _judgement(diagnosis)


@pytest.mark.parametrize(("version", "scenario"), RECORDINGS)
def test_every_recorded_text_is_read_without_crashing(version: str, scenario: str) -> None:
    for path in sorted((FIXTURES / version / scenario).glob("*.txt")):
        classify(parse_paste(path.read_text(encoding="utf-8", errors="replace")))


def _kinds(version: str, scenario: str) -> set[str]:
    """The files of one recording by what they hold (``nodes``, ``ray_status``...), whatever their
    extension says about the body. Left out: the agent's Serve answers, recorded only for releases
    whose dashboard lacks them (2.0-2.7), and ``.stderr`` files, written only where a command wrote
    to stderr."""
    stems = {path.name.split(".", 1)[0] for path in (FIXTURES / version / scenario).iterdir()}
    return {stem for stem in stems if not stem.endswith("_agent") and ".stderr" not in stem} - {""}


def _asked(version: str, scenario: str) -> set[str]:
    return {key for key in _endpoints(version, scenario) if not key.endswith("_agent")}


@pytest.mark.parametrize("scenario", sorted({s for _, s in RECORDINGS}))
def test_every_release_records_the_same_kinds_of_files(scenario: str) -> None:
    """One recorder, one set of files per scenario: a release differs in what it answered (status,
    body), never in what was asked."""
    assert NEWEST is not None
    for version in VERSIONS:
        assert _kinds(version, scenario) == _kinds(NEWEST, scenario), version
        assert _asked(version, scenario) == _asked(NEWEST, scenario), version
