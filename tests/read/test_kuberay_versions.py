"""RayCluster, RayJob and RayService objects of every KubeRay release, v1 and v1alpha1, are read.

The objects under ``tests/fixtures/kuberay/<release>/`` are built from each release's CRD schema by
``tools/build_kuberay_fixtures.py`` (no operator runs here; the folder's README says how), and each
release's ``expected.json`` says what the reader must get. Releases are found by walking the folder,
so a new one needs no change here.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.classify import classify
from bot.read.kubernetes_json import kubernetes_state, read_list
from bot.snapshot.kubernetes import RayClusterObject, RayJobObject, RayServiceObject
from bot.snapshot.model import Snapshot

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "kuberay"
RELEASES = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir())
KINDS = {"rayclusters": "raycluster", "rayjobs": "rayjob", "rayservices": "rayservice"}


def load(release: str, field: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((FIXTURES / release / f"{KINDS[field]}.json").read_text())
    return loaded


def expected(release: str) -> dict[str, dict[str, dict[str, Any]]]:
    loaded: dict[str, dict[str, dict[str, Any]]] = json.loads(
        (FIXTURES / release / "expected.json").read_text()
    )
    return loaded


def key(item: dict[str, Any]) -> str:
    return f"{item['apiVersion']} {item['metadata']['name']}"


def conditions(obj: RayClusterObject | RayServiceObject) -> dict[str, str]:
    return {c.type: c.status for c in obj.conditions}


def read_facts(field: str, obj: Any) -> dict[str, Any]:
    """The facts a diagnosis takes from one object, in expected.json's terms."""
    if isinstance(obj, RayClusterObject):
        return {
            "state": obj.state,
            "reason": obj.reason,
            "ready_workers": obj.ready_workers,
            "desired_workers": obj.desired_workers,
            "conditions": conditions(obj),
        }
    if isinstance(obj, RayJobObject):
        return {
            "job_status": obj.job_status,
            "deployment_status": obj.deployment_status,
            "reason": obj.reason,
            "message": obj.message,
            "cluster_name": obj.cluster_name,
            "submission_id": obj.submission_id,
        }
    assert isinstance(obj, RayServiceObject), field
    return {
        "service_status": obj.service_status,
        "cluster_name": obj.cluster_name,
        "app_statuses": obj.app_statuses,
        "conditions": conditions(obj),
    }


def test_every_kuberay_release_from_1_0_has_fixtures() -> None:
    assert RELEASES[0] == "v1.0.0"
    assert len(RELEASES) >= 8, RELEASES
    readme = (FIXTURES / "README.md").read_text()
    for release in RELEASES:
        assert f"| {release} |" in readme, f"{release} has no source row in the README"
        for field in KINDS:
            versions = {item["apiVersion"] for item in load(release, field)["items"]}
            assert versions == {"ray.io/v1", "ray.io/v1alpha1"}, (release, field, versions)


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("field", list(KINDS))
def test_the_reader_gets_what_each_release_wrote(release: str, field: str) -> None:
    raw = load(release, field)
    want = expected(release)[field]
    objects = read_list(field, raw)

    assert [o.name for o in objects] == [item["metadata"]["name"] for item in raw["items"]]
    assert set(want) == {key(item) for item in raw["items"]}
    for item, obj in zip(raw["items"], objects, strict=True):
        assert obj.namespace == "ml"
        assert read_facts(field, obj) == want[key(item)], key(item)


@pytest.mark.parametrize("release", RELEASES)
def test_each_release_builds_a_snapshot(release: str) -> None:
    state = kubernetes_state({field: load(release, field) for field in KINDS})

    jobs = 6 if release.startswith("v1.0.") else 8  # train-deadline from v1.1 (activeDeadlineSeconds)
    assert len(state.rayclusters) == 4 and len(state.rayjobs) == jobs and len(state.rayservices) == 4
    broken = [c for c in state.rayclusters if c.name == "gpu-cluster-quota"]
    assert all(c.worker_groups[0].name == "gpu" and c.head is not None for c in broken)


def test_a_first_rayservice_whose_app_fails_names_its_pending_cluster_and_app() -> None:
    """Every release leaves activeServiceStatus empty until the first cluster serves."""
    for release in RELEASES:
        for service in read_list("rayservices", load(release, "rayservices")):
            if service.name == "llm-serve-broken":
                assert service.cluster_name == "llm-serve-broken-raycluster-x5n8j", release
                assert service.app_statuses == {"llm": "DEPLOY_FAILED"}, release
                assert "No module named 'vllm'" in service.app_messages["llm"], release


def test_workers_refused_by_quota_count_zero_ready_from_kuberay_1_2() -> None:
    """readyWorkerReplicas is omitempty: absent means 0 once the operator is one that writes it."""
    for release in RELEASES:
        minor = int(release.split(".")[1])
        raw = load(release, "rayclusters")
        for item, cluster in zip(raw["items"], read_list("rayclusters", raw), strict=True):
            if cluster.name == "gpu-cluster-quota" and minor >= 2:
                # v1alpha1 keeps no field that tells a v1.2+ operator from an older one: not read.
                assert cluster.ready_workers == (0 if item["apiVersion"] == "ray.io/v1" else None), release


HEALTHY = {"gpu-cluster", "train-ok", "llm-serve"}


@pytest.mark.parametrize("release", RELEASES)
def test_broken_objects_are_diagnosed_and_healthy_ones_are_quiet(release: str) -> None:
    """What the reader keeps is enough for the classifier, alone, on every release."""
    for field in KINDS:
        want = expected(release)[field]
        for item in load(release, field)["items"]:
            diagnosis = classify(Snapshot(kubernetes=kubernetes_state({field: {"items": [item]}})))
            named = {(f.subject.kind, f.subject.name) for f in diagnosis.findings if f.severity != "info"}
            name, facts = item["metadata"]["name"], want[key(item)]
            if name in HEALTHY:
                assert not named, (key(item), named)
            elif name == "train-oom":
                assert ("RayJob", name) in named, key(item)
            elif name == "train-deadline":
                # Read as v1alpha1 (status.reason pruned) KubeRay's message still says it.
                rules = {f.rule for f in diagnosis.findings}
                assert "ray-job-deadline-before-start" in rules, key(item)
                assert "ray-job-failed" not in rules, key(item)
            elif name == "llm-serve-broken":
                assert ("ServeApplication", "llm") in named, key(item)
            elif name == "gpu-cluster-quota" and (facts["reason"] or "ReplicaFailure" in facts["conditions"]):
                # KubeRay v1.2 (conditions gate off) and v1alpha1 of v1.3+ keep the refusal only in Events.
                assert ("RayCluster", name) in named, key(item)


def _future_fields(value: Any) -> Any:
    """``value`` with a field no release has beside every field it has, as a newer KubeRay might add."""
    if isinstance(value, dict):
        grown = {k: _future_fields(v) for k, v in value.items()}
        grown["fieldFromAFutureRelease"] = {"nested": [1, "two", None], "count": 3}
        return grown
    if isinstance(value, list):
        return [_future_fields(v) for v in value]
    return value


def _status_paths(value: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield (*path, k)
            yield from _status_paths(v, (*path, k))


def _without(item: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    trimmed = copy.deepcopy(item)
    holder = trimmed["status"]
    for step in path[:-1]:
        holder = holder[step]
    del holder[path[-1]]
    return trimmed


@pytest.mark.parametrize("field", list(KINDS))
def test_fields_from_a_future_release_change_nothing(field: str) -> None:
    release = RELEASES[-1]
    raw = load(release, field)
    grown = {**raw, "items": [{**item, "status": _future_fields(item["status"])} for item in raw["items"]]}

    before = [read_facts(field, o) for o in read_list(field, raw)]
    after = [read_facts(field, o) for o in read_list(field, grown)]

    assert after == before


@pytest.mark.parametrize("field", list(KINDS))
def test_no_missing_or_mistyped_status_field_crashes_the_reader(field: str) -> None:
    mangle: list[Callable[[Any], Any]] = [
        lambda v: None,
        lambda v: [v],
        lambda v: "not-a-number",
        lambda v: 7,
    ]
    for release in (RELEASES[0], RELEASES[-1]):
        for item in load(release, field)["items"]:
            for path in _status_paths(item["status"]):
                read_list(field, _without(item, path))
                for change in mangle:
                    changed = copy.deepcopy(item)
                    holder = changed["status"]
                    for step in path[:-1]:
                        holder = holder[step]
                    holder[path[-1]] = change(holder[path[-1]])
                    assert len(read_list(field, changed)) == 1
            assert len(read_list(field, {**item, "status": None})) == 1
            assert len(read_list(field, {k: v for k, v in item.items() if k != "status"})) == 1
