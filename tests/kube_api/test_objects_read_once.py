"""The collector converts each Kubernetes answer once, as it arrives, and decides its next reads
from those models."""

from __future__ import annotations

from bot.collect.kubernetes import KubernetesObjects
from tests.support import k8s


def _pod(name: str, namespace: str = "ml") -> dict[str, object]:
    return {
        "metadata": {"name": name, "namespace": namespace, "labels": {"ray.io/cluster": "gpu"}},
        "spec": {"containers": [{"name": "ray-worker"}]},
        "status": {"phase": "Pending"},
    }


def test_answers_become_models_once_and_duplicates_are_kept_once() -> None:
    found = KubernetesObjects()
    found.add("pods", [_pod("gpu-worker-a"), _pod("gpu-worker-b")])
    found.add("pods", [_pod("gpu-worker-a"), _pod("gpu-worker-a", namespace="other")])
    pods = found.get("pods")
    assert [(p.namespace, p.name) for p in pods] == [
        ("ml", "gpu-worker-a"),
        ("ml", "gpu-worker-b"),
        ("other", "gpu-worker-a"),
    ]
    assert all(p.phase == "Pending" and p.containers[0].name == "ray-worker" for p in pods)


def test_an_item_the_reader_cannot_read_is_left_out_and_nothing_else_is_lost() -> None:
    found = KubernetesObjects()
    found.add("nodes", [{"metadata": {}}, "not an object", None, k8s.node("gpu-node-1")])
    found.add("pods", None)  # a list that could not be read
    assert [n.name for n in found.get("nodes")] == ["gpu-node-1"]
    assert found.get("pods") == []


def test_the_state_holds_what_was_read_and_says_whether_the_node_list_was() -> None:
    found = KubernetesObjects()
    found.add("pods", [_pod("gpu-worker-a")])
    assert found.state().nodes_complete is False
    found.add("nodes", [k8s.node("gpu-node-1")])
    state = found.state()
    assert state.nodes_complete is True
    assert [p.name for p in state.pods] == ["gpu-worker-a"] and [n.name for n in state.nodes] == [
        "gpu-node-1"
    ]
