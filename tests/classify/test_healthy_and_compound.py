"""A healthy cluster is quiet; a cluster with several faults names each, in triage order."""

from __future__ import annotations

from bot.classify import classify
from bot.read.snapshot_file import parse_snapshot
from bot.snapshot.model import CollectionError, Snapshot
from tests.support import scenarios
from tests.support.cluster import GPU_WORKERS, healthy


def test_healthy_cluster_has_no_warning_or_critical_finding() -> None:
    diagnosis = classify(parse_snapshot(healthy().to_json()))
    loud = [(f.rule, f.subject.name) for f in diagnosis.findings if f.severity != "info"]
    assert loud == []
    assert diagnosis.verdict_layer == "healthy"
    assert diagnosis.figures["ray_nodes_alive"] == "5"
    assert diagnosis.figures["gpus_given_to_ray_pods"] == "8"
    assert diagnosis.figures["gpus_registered_in_ray"] == "8"


def test_compound_incident_orders_kubernetes_before_ray() -> None:
    bundle = scenarios.third_gpu_worker_no_free_gpu()
    scenarios._drop_ray_node(bundle, GPU_WORKERS[1])
    bundle = scenarios._with_demand(bundle, {"GPU": 1.0, "accelerator_type:H100": 0.001}, 2)
    diagnosis = classify(parse_snapshot(bundle.to_json()))
    rules = [f.rule for f in diagnosis.findings]
    assert rules[0] == "k8s-insufficient-resources"
    assert "ray-worker-not-joined" in rules
    assert "ray-gpu-type-unregistered" in rules
    assert rules.index("ray-worker-not-joined") < rules.index("ray-gpu-type-unregistered")
    assert diagnosis.verdict_layer == "kubernetes"


def test_more_specific_rule_supersedes_on_the_same_subject() -> None:
    diagnosis = classify(parse_snapshot(scenarios.device_plugin_gone_on_free_node().to_json()))
    pending = [f.rule for f in diagnosis.findings if f.subject.name == scenarios.PENDING]
    assert pending == ["k8s-pod-waits-for-unadvertised-gpu"]


def test_worker_that_never_joined_is_cause_8_not_4() -> None:
    bundle = scenarios.gpu_worker_runs_but_never_joined()
    diagnosis = classify(parse_snapshot(bundle.to_json()))
    about_pod = {f.rule for f in diagnosis.findings if f.subject.name == GPU_WORKERS[1]}
    assert about_pod == {"ray-worker-not-joined"}


def test_collection_errors_are_findings_and_errors() -> None:
    snapshot = Snapshot(
        cluster="c",
        errors=[
            CollectionError(source="kubernetes events", message="403 forbidden", hint="grant list events")
        ],
    )
    diagnosis = classify(snapshot)
    assert [f.rule for f in diagnosis.findings] == ["collection-failed"]
    assert diagnosis.errors[0].message == "403 forbidden"
    dashboard = classify(
        Snapshot(errors=[CollectionError(source="ray dashboard", message="connection refused")])
    )
    assert [f.rule for f in dashboard.findings] == ["ray-dashboard-unreachable"]


def test_empty_snapshot_is_unknown_not_healthy() -> None:
    diagnosis = classify(Snapshot())
    assert diagnosis.findings == []
    assert diagnosis.verdict_layer == "unknown"


def test_a_broken_detector_costs_only_its_rule(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from bot.classify import registry

    spec = registry.DETECTORS["gpu_nodes"]

    def explode(ctx, rule):  # type: ignore[no-untyped-def]
        raise ZeroDivisionError("boom")

    monkeypatch.setitem(
        registry.DETECTORS,
        "gpu_nodes",
        registry.DetectorSpec("gpu_nodes", explode, spec.provides, spec.params_model),
    )
    diagnosis = classify(parse_snapshot(scenarios.third_gpu_worker_no_free_gpu().to_json()))
    assert diagnosis.findings[0].rule == "k8s-insufficient-resources"
    assert any(
        e.source.startswith("rule k8s-") and "ZeroDivisionError" in e.message for e in diagnosis.errors
    )


def test_workers_of_another_raycluster_are_not_missing_from_this_one() -> None:
    bundle = scenarios.healthy()
    other = bundle.find("pods", GPU_WORKERS[1])
    other["metadata"]["labels"]["ray.io/cluster"] = "someone-elses-cluster"
    scenarios._drop_ray_node(bundle, GPU_WORKERS[1])
    diagnosis = classify(parse_snapshot(bundle.to_json()))
    assert "ray-worker-not-joined" not in [f.rule for f in diagnosis.findings]
    # Without a cluster name every RayCluster's Pods are in scope, as for a paste.
    bundle.cluster = None
    unnamed = classify(parse_snapshot(bundle.to_json()))
    assert "ray-worker-not-joined" in [f.rule for f in unnamed.findings]
