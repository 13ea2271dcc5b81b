"""Raw Kubernetes JSON becomes lenient snapshot models; nothing malformed crashes the reader."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.read.kubernetes_json import kubernetes_state, pod_from_json, read_list
from bot.read.quantity import format_amount, parse_quantity
from bot.snapshot.data import dump_json
from tests.support import k8s
from tests.support.cluster import GPU_WORKERS, healthy


def test_quantities_in_every_suffix() -> None:
    assert parse_quantity("500m") == 0.5
    assert parse_quantity("2") == 2.0
    assert parse_quantity("16Gi") == 16 * 2**30
    assert parse_quantity("65843184Ki") == 65843184 * 1024
    assert parse_quantity("1e3") == 1000.0
    assert parse_quantity("95491281146") == 95491281146.0
    assert parse_quantity("1.5G") == 1.5e9
    assert parse_quantity("12 cores") is None
    assert parse_quantity(None) is None
    assert format_amount("memory", 16 * 2**30) == "16Gi"
    assert format_amount("cpu", 0.25) == "250m"


def test_pod_requests_follow_scheduler_rules() -> None:
    body = k8s.pod(
        "p",
        "ns",
        [
            k8s.container("a", "img", limits={"cpu": "1", "nvidia.com/gpu": "2"}),
            k8s.container("b", "img", requests={"cpu": "500m"}),
        ],
    )
    body["spec"]["initContainers"] = [k8s.container("init", "img", requests={"cpu": "4"})]
    body["spec"]["overhead"] = {"cpu": "100m"}
    pod = pod_from_json(body)
    assert pod is not None
    # max(1 + 0.5, 4) + 0.1 overhead; limits count as requests when requests are absent.
    assert pod.requests["cpu"] == 4.1
    assert pod.requests["nvidia.com/gpu"] == 2.0


def test_real_shapes_round_trip_to_models() -> None:
    state = kubernetes_state(healthy().to_json()["kubernetes"])
    worker = next(p for p in state.pods if p.name == GPU_WORKERS[0])
    assert worker.phase == "Running" and worker.ready
    assert worker.pod_ip == "10.8.3.10"
    assert worker.gpu_limit() == 4.0
    assert worker.owner is not None and worker.owner.kind == "RayCluster"
    gpu_node = next(n for n in state.nodes if n.name == "gpu-a100-1")
    assert gpu_node.allocatable["nvidia.com/gpu"] == 4.0
    assert gpu_node.taints[0].key == "nvidia.com/gpu"
    assert state.endpoints[0].addresses[0].pod is not None
    cluster = state.rayclusters[0]
    assert [g.name for g in cluster.worker_groups] == ["cpu-workers", "gpu-a100"]
    assert cluster.worker_groups[1].max_replicas == 4


def test_env_values_never_enter_the_snapshot() -> None:
    body = k8s.pod(
        "p", "ns", [k8s.container("a", "img", env=[{"name": "HF_TOKEN", "value": "hf_s3cr3tT0k3n"}])]
    )
    pod = pod_from_json(body)
    assert pod is not None
    assert pod.containers[0].env_names == ["HF_TOKEN"]
    assert "hf_s3cr3tT0k3n" not in dump_json(pod)


def test_events_in_both_api_groups() -> None:
    new_style = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": "x", "namespace": "ml"},
        "regarding": {"kind": "Pod", "name": "w", "namespace": "ml"},
        "reason": "FailedScheduling",
        "note": "0/3 nodes are available: 3 Insufficient cpu.",
        "reportingController": "default-scheduler",
        "series": {"count": 7, "lastObservedTime": "2026-11-30T09:00:00.000000Z"},
        "type": "Warning",
    }
    (event,) = read_list("events", {"items": [new_style]})
    assert (event.object_name, event.count, event.source) == ("w", 7, "default-scheduler")
    assert event.message.startswith("0/3")


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=5)
    ),
    max_leaves=25,
)
FIELDS = [
    "nodes",
    "pods",
    "events",
    "services",
    "endpoints",
    "rayclusters",
    "rayjobs",
    "rayservices",
    "resource_quotas",
    "pvcs",
    "network_policies",
    "device_plugin_pods",
]


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(FIELDS), JSON)
def test_arbitrary_json_never_crashes_a_reader(field: str, raw: Any) -> None:
    read_list(field, raw)
    read_list(field, {"items": [raw]})


def _mutations(obj: Any) -> list[Any]:
    """Every way of deleting one key or nulling one value in a real object."""
    out: list[Any] = []
    if isinstance(obj, dict):
        for key in obj:
            dropped = {k: v for k, v in obj.items() if k != key}
            out.append(dropped)
            out.append({**obj, key: None})
            out += [{**obj, key: m} for m in _mutations(obj[key])[:30]]
    elif isinstance(obj, list):
        out += [[m, *obj[1:]] for m in _mutations(obj[0])[:30]] if obj else []
    return out


def test_real_objects_with_any_field_missing_or_null_still_read() -> None:
    bundle = healthy().to_json()["kubernetes"]
    for field in ("pods", "nodes", "rayclusters", "endpoints", "events"):
        original = bundle[field]["items"][0]
        for mutated in _mutations(json.loads(json.dumps(original))):
            read_list(field, {"items": [mutated]})
