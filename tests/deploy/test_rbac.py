"""The ClusterRole grants exactly what the collectors call: nothing they call is refused, nothing
granted goes unused, and nothing granted writes or reads secrets.

Two checks meet here. The declared one: the ClusterRole's (verb, group, resource) triples equal
``READ_SCOPES``, the list every Kubernetes call in ``bot/`` is made from. The observed one: the
collectors run against the loopback API server over scenarios chosen to reach every call they can
make (a RayJob's and a RayService's cluster, a Pending Pod with an unbound claim, a head Service
without an Endpoints object, a mistyped cluster name, Kueue installed, the head check button), and
every request the server received is authorised against the rendered RBAC like kube-apiserver
would. The union of what was used must cover every rule, so a stale grant fails too. The same
holds for the Lease: a replica running the real leader election takes and renews the Lease named
in the shipped config, and needs exactly what the Role grants.

Loopback API server: it keeps every request the collectors send, for the check that the calls cover
every rule; a real kube-apiserver shows that only in an audit log the test plane does not keep. The
same identity on the real control plane, refused or allowed by kube-apiserver's own RBAC (a full
diagnosis, SelfSubjectRulesReview, the Lease), is tests/integration/test_compound_real_stack.py.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path

import pytest

from bot.collect.deadline import Deadline
from bot.collect.kubernetes import READ_SCOPES, KubernetesReader
from bot.collect.live import Target, collect_live, kubernetes_client
from bot.config import load_config
from bot.leadership import Leadership, LeaseSettings
from bot.probes.head import check_head
from tests.deploy.manifests import BOT_NAMESPACE, OVERLAYS, bot_container, mounted_file, render
from tests.deploy.rbac import (
    ESCALATING_VERBS,
    SENSITIVE_RESOURCES,
    WRITE_VERBS,
    Grants,
    Request,
    request_of,
)
from tests.support import scenarios
from tests.support.cluster import CLUSTER, NS, Bundle, healthy
from tests.support.kube_api import ObjectStore, RequestRecord, serve
from tests.support.waiting import eventually

SERVICE_ACCOUNT = "raydiag"
LEADER_LEASE = "raydiag-leader"


def grants(overlay: str = "base") -> Grants:
    return Grants.for_service_account(render(overlay), BOT_NAMESPACE, SERVICE_ACCOUNT)


def cluster_scopes(overlay: str = "base") -> set[tuple[str, str, str]]:
    return {scope for rule in grants(overlay).cluster_rules for scope in rule.scopes()}


def _owned_by(bundle: Bundle, kind: str, name: str, owner: dict[str, object]) -> Bundle:
    """The RayCluster as KubeRay creates it for a RayJob or RayService: owned by that object."""
    bundle.items(f"{kind.lower()}s").append(owner)
    cluster = bundle.find("rayclusters", CLUSTER)
    cluster["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "ray.io/v1",
            "kind": kind,
            "name": name,
            "uid": "6f1c0f4e-2b4d-4c57-9a43-0d8f1d1f3b2a",
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    return bundle


def rayjob_cluster_waiting_for_a_claim() -> Bundle:
    bundle = scenarios.worker_waits_for_unbound_checkpoint_claim()
    return _owned_by(
        bundle,
        "RayJob",
        "nightly-eval",
        {
            "apiVersion": "ray.io/v1",
            "kind": "RayJob",
            "metadata": {"name": "nightly-eval", "namespace": NS},
            "spec": {"entrypoint": "python eval.py", "shutdownAfterJobFinishes": True},
            "status": {"jobStatus": "RUNNING", "jobDeploymentStatus": "Running", "rayClusterName": CLUSTER},
        },
    )


def rayservice_cluster_without_endpoints_object() -> Bundle:
    bundle = _owned_by(
        healthy(),
        "RayService",
        "llm-service",
        {
            "apiVersion": "ray.io/v1",
            "kind": "RayService",
            "metadata": {"name": "llm-service", "namespace": NS},
            "spec": {"serveConfigV2": "applications: []"},
            "status": {"serviceStatus": "Running"},
        },
    )
    # Clusters whose API server serves EndpointSlices only: the head is found through those.
    bundle.remove("endpoints", f"{CLUSTER}-head-svc")
    return bundle


@pytest.fixture(scope="module")
def requests_sent(tmp_path_factory: pytest.TempPathFactory) -> list[RequestRecord]:
    """Every request the collectors and the head check sent, over scenarios reaching every call."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead_dashboard = f"http://127.0.0.1:{sock.getsockname()[1]}"  # closed once the block ends
    runs: list[tuple[Callable[[], Bundle], str, bool]] = [
        (rayjob_cluster_waiting_for_a_claim, CLUSTER, False),
        (rayservice_cluster_without_endpoints_object, CLUSTER, True),
        (scenarios.rayjob_waits_for_kueue_quota, CLUSTER, False),
        (healthy, "raycluster-gpu-typo", False),
    ]
    sent: list[RequestRecord] = []
    for build, cluster, head_check in runs:
        with serve(ObjectStore.from_bundle(build())) as api:
            kubeconfig = api.kubeconfig(tmp_path_factory.mktemp("kubeconfig"))
            target = Target(
                cluster=cluster,
                namespace=NS,
                kubeconfig=str(kubeconfig),
                context="loopback",
                dashboard_url=dead_dashboard,
            )
            collect_live(target, deadline_s=20)
            if head_check:
                reader = KubernetesReader(kubernetes_client(target), Deadline(20))
                check_head(reader, NS, cluster, None, connect_timeout=0.2)
            sent += api.requests.snapshot()
    return sent


def _requests(records: list[RequestRecord]) -> list[Request]:
    found = [request_of(r.method, r.path, r.query) for r in records]
    return [r for r in found if r is not None]


def test_cluster_role_is_exactly_the_declared_read_scopes() -> None:
    granted = cluster_scopes()
    assert not granted - READ_SCOPES, (
        f"granted, but no collector declares it: {sorted(granted - READ_SCOPES)}"
    )
    assert not READ_SCOPES - granted, (
        f"declared by the collectors, not granted: {sorted(READ_SCOPES - granted)}"
    )


def test_every_request_the_collectors_send_is_allowed(requests_sent: list[RequestRecord]) -> None:
    bot = grants()
    refused = sorted({str(r) for r in _requests(requests_sent) if not bot.allows(r)})
    assert refused == [], f"kube-apiserver would answer 403 to: {refused}"
    # Reads only, and no discovery or other non-resource path needed.
    assert {r.method for r in requests_sent} == {"GET"}
    assert all(request_of(r.method, r.path, r.query) is not None for r in requests_sent)


def test_every_granted_rule_is_used_by_some_request(requests_sent: list[RequestRecord]) -> None:
    used = {r.scope for r in _requests(requests_sent)}
    unused = cluster_scopes() - used
    assert unused == set(), f"granted but never requested by any scenario: {sorted(unused)}"
    # What was used is what is declared: READ_SCOPES is not stale either.
    assert used == READ_SCOPES


def test_the_walk_reached_the_calls_only_rare_clusters_need(requests_sent: list[RequestRecord]) -> None:
    used = {r.scope for r in _requests(requests_sent)}
    assert ("get", "", "pods/log") in used  # head and autoscaler log tails
    assert ("list", "ray.io", "rayclusters") in used  # naming the clusters that exist
    assert ("list", "discovery.k8s.io", "endpointslices") in used
    assert {("get", "ray.io", "rayjobs"), ("get", "ray.io", "rayservices")} <= used


@pytest.mark.parametrize("overlay", ["base", *OVERLAYS])
def test_nothing_granted_writes_reads_secrets_or_escalates(overlay: str) -> None:
    for rule in grants(overlay).cluster_rules:
        assert rule.verbs <= {"get", "list"}, (
            f"{overlay}: cluster-wide verbs beyond get/list: {sorted(rule.verbs)}"
        )
        assert not rule.resources & SENSITIVE_RESOURCES, f"{overlay}: {sorted(rule.resources)}"
        assert "*" not in rule.api_groups
        assert not rule.resource_names
    for rule in grants(overlay).rules:
        assert not rule.verbs & ESCALATING_VERBS
        assert "watch" not in rule.verbs, "nothing in raydiag watches; a watch grant would be unused"
    bot = grants(overlay)
    for forbidden in (
        Request("get", "", "secrets", "ml", "slack-token"),
        Request("list", "", "secrets", None, None),
        Request("create", "", "pods/exec", "ml", "raycluster-gpu-head-8x2kq"),
        Request("delete", "", "pods", "ml", "raycluster-gpu-head-8x2kq"),
        Request("patch", "ray.io", "rayclusters", "ml", "raycluster-gpu"),
        Request("create", "batch", "jobs", "ml", None),
    ):
        assert not bot.allows(forbidden), f"{overlay} allows {forbidden}"


def test_leader_election_may_only_take_and_renew_its_own_lease() -> None:
    bot = grants()
    lease = ("coordination.k8s.io", "leases")
    assert bot.allows(Request("create", *lease, BOT_NAMESPACE, None))
    assert bot.allows(Request("get", *lease, BOT_NAMESPACE, LEADER_LEASE))
    assert bot.allows(Request("update", *lease, BOT_NAMESPACE, LEADER_LEASE))
    # Not another component's Lease, not in another namespace, and never deleted or watched.
    assert not bot.allows(Request("update", *lease, BOT_NAMESPACE, "kube-scheduler"))
    assert not bot.allows(Request("get", *lease, "kube-system", LEADER_LEASE))
    assert not bot.allows(Request("create", *lease, "kube-system", None))
    assert not bot.allows(Request("delete", *lease, BOT_NAMESPACE, LEADER_LEASE))
    assert not bot.allows(Request("list", *lease, BOT_NAMESPACE, None))
    for rule in bot.namespaced_rules:
        assert rule.namespace == BOT_NAMESPACE
        assert rule.api_groups == {"coordination.k8s.io"} and rule.resources == {"leases"}
        assert rule.verbs <= {"get", "create", "update"} and not rule.verbs & (
            WRITE_VERBS - {"create", "update"}
        )


def test_the_deployment_runs_as_the_bound_service_account() -> None:
    for overlay in ("base", *OVERLAYS):
        rendered = render(overlay)
        pod = rendered.one("Deployment", "raydiag")["spec"]["template"]["spec"]
        assert pod["serviceAccountName"] == SERVICE_ACCOUNT
        account = rendered.one("ServiceAccount", SERVICE_ACCOUNT)
        assert account["metadata"]["namespace"] == BOT_NAMESPACE


def test_request_attributes_follow_the_api_server() -> None:
    assert request_of("GET", "/api/v1/namespaces/ml/pods/head-0/log", "tailLines=200") == Request(
        "get", "", "pods/log", "ml", "head-0"
    )
    assert request_of("GET", "/api/v1/pods", "fieldSelector=status.phase%3DPending") == Request(
        "list", "", "pods", None, None
    )
    assert request_of("GET", "/apis/ray.io/v1/namespaces/ml/rayclusters", "watch=true") == Request(
        "watch", "ray.io", "rayclusters", "ml", None
    )
    assert request_of(
        "PUT", "/apis/coordination.k8s.io/v1/namespaces/raydiag/leases/raydiag-leader"
    ) == Request("update", "coordination.k8s.io", "leases", "raydiag", "raydiag-leader")
    assert request_of("GET", "/version") is None


def test_the_leader_election_needs_only_what_the_role_grants(tmp_path: Path) -> None:
    """A replica takes the configured Lease and renews it, against the loopback API server."""
    rendered = render("base")
    config_file = tmp_path / "config.yaml"
    container = bot_container(rendered)
    config_file.write_text(mounted_file(rendered, container, "/etc/raydiag/config.yaml"), encoding="utf-8")
    lease_name = load_config(config_file).leader_election.lease_name
    # The smallest timings the client accepts, so the first renewal comes within about a second.
    settings = LeaseSettings(
        namespace=BOT_NAMESPACE, name=lease_name, lease_duration_s=3, renew_deadline_s=2, retry_period_s=1
    )
    store = ObjectStore.from_bundle(healthy())
    store.ensure_namespaces(BOT_NAMESPACE)
    with serve(store) as api:
        target = Target(cluster="lease", kubeconfig=str(api.kubeconfig(tmp_path)), context="loopback")
        replica = Leadership(settings, kubernetes_client(target), on_lead=lambda: None, on_lose=lambda: None)
        replica.start()
        try:
            assert eventually(lambda: replica.leading), "the replica never took the Lease"
            assert eventually(lambda: api.requests.count(method="PUT", path=r"/leases/") >= 1), (
                "never renewed"
            )
        finally:
            replica.stop(timeout_s=5)
        sent = _requests(api.requests.snapshot())
    bot = grants()
    refused = sorted({str(r) for r in sent if not bot.allows(r)})
    assert refused == [], f"kube-apiserver would answer 403 to: {refused}"
    lease_scopes = {r.scope for r in sent}
    granted = {scope for rule in bot.namespaced_rules for scope in rule.scopes()}
    assert (
        lease_scopes
        == granted
        == {
            ("create", "coordination.k8s.io", "leases"),
            ("get", "coordination.k8s.io", "leases"),
            ("update", "coordination.k8s.io", "leases"),
        }
    )
