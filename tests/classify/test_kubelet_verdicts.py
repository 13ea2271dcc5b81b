"""The kubelet's admission, eviction and shutdown wordings, each read to one verdict.

Messages are the kubelet's own formats (pkg/kubelet/lifecycle/predicate.go, the eviction and node
shutdown managers) as users pasted them in public threads.
"""

from __future__ import annotations

import pytest

from bot.read import kubelet_message as kubelet


@pytest.mark.parametrize(
    ("reason", "message", "kind"),
    [
        # kubernetes/kubernetes#130145 (describe pod)
        (
            "UnexpectedAdmissionError",
            "Pod Allocate failed due to requested number of devices unavailable for nvidia.com/gpu. "
            "Requested:1, Available: 0, which is unexpected",
            "gpu-allocation",
        ),
        # Project-HAMi/HAMi#71: a device plugin's gRPC error names no device
        (
            None,
            "Allocate failed due to rpc error: code = Unavailable desc = error reading from server: EOF, "
            "which is unexpected",
            "gpu-allocation",
        ),
        # a `kubectl get pods` row: the reason alone
        ("UnexpectedAdmissionError", None, "gpu-allocation"),
        # ray-project/kuberay#1414: the container named is KubeRay's injected init container
        (
            "UnexpectedAdmissionError",
            "Pod Allocate failed due to pod d65f09ad-cca3-4631-a0a3-d5ba850f8a69 container wait-gcs-ready "
            "unable to find GPU device allocation by scheduler, which is unexpected",
            "init-container-gpu",
        ),
        # the CPU manager answers through Allocate too
        (
            "UnexpectedAdmissionError",
            "Allocate failed due to not enough cpus available to satisfy request, which is unexpected",
            "out-of-resource",
        ),
        (
            "OutOfcpu",
            "Pod was rejected: Node didn't have enough resource: cpu, requested: 500000, used: 100, capacity: 24000",
            "out-of-resource",
        ),
        (
            "OutOfnvidia.com/gpu",
            "Node didn't have enough resource: nvidia.com/gpu, requested: 1, used: 0, capacity: 0",
            "gpu-not-advertised",
        ),
        ("OutOfpods", None, "out-of-resource"),
        ("NodeAffinity", "Pod was rejected: Predicate NodeAffinity failed", "node-constraint"),
        ("MatchNodeSelector", "Predicate MatchNodeSelector failed", "node-constraint"),
        (
            "Evicted",
            "The node was low on resource: memory. Threshold quantity: 1Gi, available: 991045Ki. ",
            "evicted-node-pressure",
        ),
        (None, "The node had condition: [MemoryPressure].", "evicted-node-pressure"),
        (
            "Evicted",
            "The node was low on resource: ephemeral-storage. Container codis-proxy was using 10619440Ki, "
            "which exceeds its request of 0.",
            "evicted-own-usage",
        ),
        (
            "Evicted",
            "Pod ephemeral local storage usage exceeds the total limit of containers 1Gi. ",
            "evicted-own-usage",
        ),
        ("Terminated", "Pod was terminated in response to imminent node shutdown.", "node-stopped"),
        ("Shutdown", "Node is shutting, evicting pods", "node-stopped"),
        ("NodeShutdown", "Pod was rejected as the node is shutting down.", "node-stopped"),
        ("Preempting", "Preempted in order to admit critical pod", "node-stopped"),
    ],
)
def test_each_wording_reads_to_its_verdict(reason: str | None, message: str | None, kind: str) -> None:
    verdict = kubelet.read(reason, message)
    assert verdict is not None
    assert verdict.kind == kind


def test_the_container_named_in_an_allocation_error_is_kept() -> None:
    verdict = kubelet.read(
        None,
        "Allocate failed due to pod x container trainer unable to find GPU device allocation, which is unexpected",
        frozenset({"trainer"}),
    )
    assert verdict is not None and verdict.kind == "init-container-gpu" and verdict.container == "trainer"


def test_the_eviction_names_the_container_and_its_usage() -> None:
    verdict = kubelet.read(
        "Evicted",
        "The node was low on resource: memory. Container egg was using 5053216Ki, which exceeds its request of 0.",
    )
    assert verdict is not None
    assert (verdict.resource, verdict.container, verdict.used, verdict.requested) == (
        "memory",
        "egg",
        "5053216Ki",
        "0",
    )


@pytest.mark.parametrize("reason", ["Running", "CrashLoopBackOff", "Completed", None])
def test_other_states_are_not_the_kubelets_refusal(reason: str | None) -> None:
    assert kubelet.read(reason, None) is None
