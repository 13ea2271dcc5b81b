"""The Kubernetes API fails in every way a bad day brings; the diagnosis still comes, in time.

Each case of ``fault_matrix.KUBE_CASES`` runs the real collector (the official client, a kubeconfig,
HTTP) against the loopback API server with one fault injected, then classifies. For every case:
what could not be read is a ``collection-failed`` finding naming its source, the cause the readable
parts show is still named, the collection ends within its deadline (plus the call in flight), and
nothing raises. The tests after the matrix check what only some faults have: the retries, the
pages, the restarted list, the wording of the errors, and the ``raydiag diagnose`` command itself.

Loopback API server: every case needs a fault a real kube-apiserver cannot be made to give on demand
(a 500 or 429 with Retry-After, a slow or hanging answer, a body cut in half, a proxy's HTML page, a
reset connection, a restarted list).
"""

from __future__ import annotations

import json
import time
from functools import cache
from pathlib import Path

import pytest

from bot.cli import main
from tests.hardening.fault_matrix import (
    BATCH_NAMESPACE,
    DEADLINE_SLACK_S,
    KUBE_CASES,
    KubeFaultCase,
    Outcome,
    broken_promises,
    closed_port,
    run_kube_case,
)
from tests.hardening.recorded_dashboard import DashboardFault, recorded_answers, serve_dashboard
from tests.support import scenarios
from tests.support.cluster import CLUSTER, NS, healthy
from tests.support.kube_api import Fault, ObjectStore, serve

PENDING_LIST = "/api/v1/pods?fieldSelector=status.phase%3DPending"
BY_ID = {case.id: case for case in KUBE_CASES}


@cache
def run(case_id: str) -> Outcome:
    """Each case runs once per session; its outcome is plain data the tests only read."""
    return run_kube_case(BY_ID[case_id])


@pytest.mark.parametrize("case", KUBE_CASES, ids=[case.id for case in KUBE_CASES])
def test_fault_is_reported_and_the_readable_parts_still_diagnosed(case: KubeFaultCase) -> None:
    outcome = run(case.id)

    # Each unread source is an error and a finding, with the words that say why; the cause the
    # readable parts show is named; the collection ended within its deadline.
    assert broken_promises(case, outcome) == []
    json.loads(outcome.snapshot.to_json())  # what `raydiag collect` would write


def test_a_throttled_call_waits_for_retry_after_once_and_reads_the_nodes() -> None:
    outcome = run("nodes-throttled-once")

    assert outcome.request_paths.count("/api/v1/nodes?limit=500") == 2
    assert outcome.snapshot.kubernetes is not None and len(outcome.snapshot.kubernetes.nodes) == 5
    assert outcome.snapshot.kubernetes.nodes_complete


def test_a_call_throttled_again_after_retry_after_is_reported_not_retried_forever() -> None:
    outcome = run("nodes-throttled-always")

    assert outcome.request_paths.count("/api/v1/nodes?limit=500") == 2
    error = next(e for e in outcome.snapshot.errors if e.source == "kubernetes nodes")
    assert error.message.startswith("cannot list nodes: HTTP 429")
    assert error.hint is not None and "throttling" in error.hint


def test_a_retry_after_beyond_the_deadline_is_not_waited_for() -> None:
    outcome = run("nodes-throttled-retry-after-120s")

    assert outcome.request_paths.count("/api/v1/nodes?limit=500") == 1
    assert outcome.elapsed_s < BY_ID["nodes-throttled-retry-after-120s"].deadline_s


def test_a_list_longer_than_a_page_is_read_page_by_page() -> None:
    outcome = run("pending-pods-in-pages")

    pages = [p for p in outcome.request_paths if p.startswith(PENDING_LIST)]
    # 2,500 batch Pods plus this cluster's own Pending worker: six pages of at most 500.
    assert len(pages) == 6
    assert all("limit=500" in page for page in pages)
    assert all("continue=" in page for page in pages[1:])
    assert outcome.snapshot.kubernetes is not None
    batch = [p for p in outcome.snapshot.kubernetes.pods if p.namespace == BATCH_NAMESPACE]
    assert len(batch) == 2500


def test_an_expired_continue_token_restarts_the_list_once() -> None:
    outcome = run("continue-token-expires-once")

    pages = [p for p in outcome.request_paths if p.startswith(PENDING_LIST)]
    # The first page, the page refused with 410 Gone, then the whole list again from the start.
    assert len(pages) == 1 + 1 + 6
    assert "continue=" not in pages[2]
    assert outcome.snapshot.kubernetes is not None
    batch = [p for p in outcome.snapshot.kubernetes.pods if p.namespace == BATCH_NAMESPACE]
    assert len(batch) == 2500, "each Pod once: no page of the first pass is kept"


def test_a_continue_token_that_keeps_expiring_costs_that_list_only() -> None:
    outcome = run("continue-token-always-expires")

    error = next(e for e in outcome.snapshot.errors if e.source == "kubernetes pods")
    assert "HTTP 410" in error.message and "too old to display a consistent list" in error.message
    pods = outcome.snapshot.kubernetes.pods if outcome.snapshot.kubernetes else []
    assert not [p for p in pods if p.namespace == BATCH_NAMESPACE], "a half-read list is not used"
    assert any(p.labels.get("ray.io/cluster") == CLUSTER for p in pods), "the namespace's own list still is"


def test_a_failing_pod_list_is_reported_once_not_once_per_device_plugin_selector() -> None:
    outcome = run("pods-500")

    plugin_errors = [e for e in outcome.snapshot.errors if e.source == "kubernetes device plugin pods"]
    assert len(plugin_errors) == 1


def test_forbidden_resources_each_name_the_grant_that_is_missing() -> None:
    outcome = run("forbidden-nodes-quotas-policies-kueue")
    hints = {e.source: e.hint for e in outcome.snapshot.errors}

    assert (
        hints["kubernetes nodes"]
        == 'grant `list` on `nodes` (apiGroup "") cluster-wide to raydiag\'s identity'
    )
    assert hints["kubernetes resourcequotas"] == (
        'grant `list` on `resourcequotas` (apiGroup "") in namespace ml to raydiag\'s identity'
    )
    assert hints["kubernetes networkpolicies"] == (
        "grant `list` on `networkpolicies` (apiGroup networking.k8s.io) in namespace ml to raydiag's identity"
    )
    assert hints["kubernetes kueue workloads"] == (
        "grant `list` on `workloads` (apiGroup kueue.x-k8s.io) in namespace ml to raydiag's identity"
    )


def test_a_proxy_error_page_is_named_by_its_title_not_quoted_as_html() -> None:
    outcome = run("nodes-proxy-502-html")

    error = next(e for e in outcome.snapshot.errors if e.source == "kubernetes nodes")
    assert error.message == (
        'cannot list nodes: HTTP 502: an HTML page ("502 Bad Gateway") instead of the API\'s JSON '
        "(a proxy or load balancer in front of the API server answered)"
    )


def test_a_reset_connection_is_named_as_such() -> None:
    outcome = run("pods-connection-reset")

    error = next(e for e in outcome.snapshot.errors if e.source == "kubernetes pods")
    assert error.message.endswith("the connection was closed or reset before an answer came")


def test_a_refusing_api_server_leaves_the_ray_half_of_the_diagnosis() -> None:
    outcome = run("api-server-refuses-connections")

    assert outcome.snapshot.kubernetes is None
    assert outcome.snapshot.ray is not None and len(outcome.snapshot.ray.nodes) == 4
    assert {"ray-demand-infeasible", "ray-leftover-actor", "ray-serve-unhealthy"} <= outcome.rules


def test_a_refusing_api_server_costs_one_error_not_one_per_call() -> None:
    outcome = run("api-server-refuses-connections")

    kubernetes = [e for e in outcome.snapshot.errors if e.source.startswith("kubernetes")]
    assert [e.source for e in kubernetes] == ["kubernetes api"]
    [error] = kubernetes
    assert error.message.startswith("cannot reach the Kubernetes API server at https://127.0.0.1:")
    assert error.message.endswith("connection refused; no other Kubernetes call was made")
    assert error.hint is not None and "kubectl cluster-info" in error.hint
    unread = [f for f in outcome.diagnosis.findings if f.rule == "collection-failed"]
    assert [f.subject.name for f in unread] == ["kubernetes api"]


def test_raydiag_diagnose_reports_both_layers_faults_and_both_layers_causes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = ObjectStore.from_bundle(scenarios.third_gpu_worker_no_free_gpu())
    dashboard_fault = DashboardFault(r"^/api/v0/actors", status=500, body="ray")
    with (
        serve(store, faults=[Fault(r"/events$", status=403)]) as api,
        serve_dashboard(recorded_answers("broken"), [dashboard_fault]) as dashboard,
    ):
        kubeconfig = api.kubeconfig(tmp_path / "kubeconfig")
        code = main(
            [
                "diagnose",
                *("--cluster", CLUSTER, "--namespace", NS, "--kubeconfig", str(kubeconfig)),
                *("--context", "loopback", "--dashboard-url", dashboard.url, "--deadline", "15"),
                *("--format", "json"),
            ]
        )
    result = json.loads(capsys.readouterr().out)

    assert code == 0
    assert {"kubernetes events", "ray api actors"} <= {e["source"] for e in result["errors"]}
    rules = {f["rule"] for f in result["findings"]}
    assert {"k8s-insufficient-resources", "ray-gpu-type-unregistered", "collection-failed"} <= rules


def test_raydiag_diagnose_honours_its_deadline_against_a_hung_api_server(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = ObjectStore.from_bundle(healthy())
    with serve(store, faults=[Fault(r"^/api", delay_s=60.0)]) as api:
        kubeconfig = api.kubeconfig(tmp_path / "kubeconfig")
        started = time.monotonic()
        code = main(
            [
                "diagnose",
                *("--cluster", CLUSTER, "--namespace", NS, "--kubeconfig", str(kubeconfig)),
                *("--context", "loopback", "--dashboard-url", f"http://127.0.0.1:{closed_port()}"),
                *("--deadline", "2", "--format", "json"),
            ]
        )
        elapsed = time.monotonic() - started
    result = json.loads(capsys.readouterr().out)

    assert code == 0
    assert elapsed < 2 + DEADLINE_SLACK_S
    messages = [e["message"] for e in result["errors"]]
    assert any("timed out" in m for m in messages) and any("2s collection deadline" in m for m in messages)
