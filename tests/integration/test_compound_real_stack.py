"""The compound scenario on the real stack, diagnosed as the shipped ServiceAccount.

A RayCluster goes to the real kube-apiserver; the real KubeRay operator makes its Pods; the real
kube-scheduler places them on the stand-in kubelet's Nodes or refuses them with its own
FailedScheduling events; placed Ray Pods become real raylets on loopback, and a real driver leaves
Ray stuck. Then ``raydiag diagnose`` (the CLI, through the ``kubernetes`` client) reads it all with
a token of the ``raydiag`` ServiceAccount bound by deploy/base's own RBAC objects (rendered with
``kubectl kustomize``), never as admin. Planted, one per cause, each with its subject:

1. worker group ``bigmem`` asks for more memory than any Node has;
2. worker group ``pinned`` selects a node pool no Node is in;
3. worker group ``dark`` is pinned to ``gpu-dark``, a Node labelled as a GPU node that advertises no
   ``nvidia.com/gpu`` (its device plugin never registered);
5. the demo workload's detached actor holds the only A100 while another actor waits for it;
6. its four-GPU task on one-GPU nodes;
7. its H100 task, a GPU type no Ray node registers;
8. worker group ``lost``: its Pod runs, but its raylet is cut off from the GCS and never joins
   (its evidence, the raylet's own log, comes through kube-apiserver from the kubelet's log port).

The second half holds that identity to what it needs: the diagnosis met no 403 and left nothing
unread, and SelfSubjectRulesReview as that token, in the RayCluster's namespace and in the bot's
own, shows ``READ_SCOPES`` plus what the API server grants every authenticated user, and in the
bot's namespace the leader-election Lease of deploy/base/leader-election.yaml: nothing else. The
head check (the only probe that calls Kubernetes; the GPU probe goes through the Ray dashboard)
runs as that token too and meets no 403; two replicas elect a leader with it, and an account
without the Role meets kube-apiserver's own 403. Last, the shipped ClusterRole less ``events``:
the real 403 is a finding, and the fit replay still names the refused Pods.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bot.classify import classify
from bot.collect.deadline import Deadline
from bot.collect.kubernetes import READ_SCOPES, KubernetesReader
from bot.collect.live import Target, collect_live, kubernetes_client
from bot.demo import workload
from bot.leadership import Leadership, LeaseSettings
from bot.probes.head import check_head
from tests.deploy.manifests import BOT_NAMESPACE, render
from tests.support.controlplane import CONTEXT, ControlPlane, pid_alive
from tests.support.kubelet import KubeletNode, StandInKubelet
from tests.support.probe_cluster import wait_for_demands
from tests.support.rbac import install_shipped_rbac, service_account_kubeconfig
from tests.support.waiting import eventually

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("real-ray")]

REPO = Path(__file__).resolve().parents[2]
NS = "ml"
CLUSTER = "compound"
POOL = "raydiag.test/pool"
IMAGE = "rayproject/ray:2.9.3"
GPU_LABELS = {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}
NODES = [
    KubeletNode("cpu-node", {"cpu": "4", "memory": "16Gi", "pods": "110"}, labels={POOL: "cpu"}),
    KubeletNode(
        "gpu-a100",
        {"cpu": "8", "memory": "32Gi", "pods": "110", "nvidia.com/gpu": "1"},
        labels={**GPU_LABELS, POOL: "a100-a"},
    ),
    # Cause 3: the GPU operator's labels are there, the device plugin's nvidia.com/gpu is not.
    KubeletNode(
        "gpu-dark", {"cpu": "8", "memory": "32Gi", "pods": "110"}, labels={**GPU_LABELS, POOL: "a100-b"}
    ),
]


def worker_group(
    name: str, limits: dict[str, Any], pool: str, ray_start: dict[str, str] | None = None
) -> dict[str, Any]:
    container = {"name": "ray-worker", "image": IMAGE, "resources": {"limits": limits, "requests": limits}}
    return {
        "groupName": name,
        "replicas": 1,
        "minReplicas": 1,
        "maxReplicas": 1,
        "rayStartParams": ray_start or {},
        "template": {"spec": {"nodeSelector": {POOL: pool}, "containers": [container]}},
    }


def raycluster() -> dict[str, Any]:
    head = {"cpu": "1", "memory": "2Gi"}
    small = {"cpu": "1", "memory": "1Gi"}
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": CLUSTER, "namespace": NS},
        "spec": {
            "headGroupSpec": {
                "rayStartParams": {},
                "template": {
                    "spec": {
                        "nodeSelector": {POOL: "cpu"},
                        "containers": [{"name": "ray-head", "image": IMAGE, "resources": {"limits": head}}],
                    }
                },
            },
            "workerGroupSpecs": [
                # Healthy: the only A100 the cluster has, registered in Ray as GPU + its type.
                worker_group(
                    "a100",
                    {**small, "nvidia.com/gpu": "1"},
                    "a100-a",
                    {"num-gpus": "1", "resources": '"{\\"accelerator_type:A100\\": 1}"'},
                ),
                worker_group("bigmem", {"cpu": "1", "memory": "64Gi"}, "cpu"),  # cause 1
                worker_group("pinned", small, "spot-cpu"),  # cause 2: no Node is in that pool
                worker_group("dark", {**small, "nvidia.com/gpu": "1"}, "a100-b", {"num-gpus": "1"}),  # 3
                worker_group("lost", small, "cpu"),  # cause 8: cut off by the kubelet below
            ],
        },
    }


@dataclass(frozen=True)
class Stack:
    plane: ControlPlane
    dashboard_url: str
    kubeconfig: Path  # the ServiceAccount's token, context CONTEXT
    pods: dict[str, str]  # group (or "head") -> Pod name


@dataclass(frozen=True)
class Accounts:
    """Kubeconfigs of two ServiceAccounts of the bot's namespace: the shipped one, and ``default``,
    which nothing binds (what any authenticated identity may do)."""

    raydiag: Path
    unbound: Path


@pytest.fixture(scope="module")
def accounts(plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory) -> Accounts:
    install_shipped_rbac(plane)
    folder = tmp_path_factory.mktemp("accounts")
    return Accounts(
        service_account_kubeconfig(plane, folder / "raydiag"),
        service_account_kubeconfig(plane, folder / "unbound", "default"),
    )


@pytest.fixture(scope="module")
def stack(plane: ControlPlane, accounts: Accounts) -> Iterator[Stack]:
    from kubernetes import client

    kubeconfig = accounts.raydiag
    plane.namespace(NS)
    core: Any = client.CoreV1Api(plane.client())
    kubelet = StandInKubelet(plane, NODES, pod_ip_first=100, cut_off=(f"{CLUSTER}-lost-",))
    with kubelet, contextlib.ExitStack() as stack:
        client.CustomObjectsApi(plane.client()).create_namespaced_custom_object(
            "ray.io", "v1", NS, "rayclusters", raycluster()
        )

        def pods() -> dict[str, Any]:
            found = core.list_namespaced_pod(NS, label_selector=f"ray.io/cluster={CLUSTER}").items
            return {p.metadata.labels.get("ray.io/group", "head"): p for p in found}

        def settled() -> bool:
            now = pods()
            running = {g for g, p in now.items() if p.status.phase == "Running"}
            return len(now) == 6 and running == {"headgroup", "a100", "lost"}

        assert eventually(settled, timeout_s=180, poll_s=1), (
            f"pods: {[(g, p.status.phase) for g, p in pods().items()]}; kubelet errors: {kubelet.errors}"
        )
        (ray,) = kubelet.clusters.values()
        local = ray.local
        driver = [sys.executable, "-m", "bot.demo.workload", "--address", local.gcs_address]
        proc = local.spawn([*driver, "--node-ip", local.head_ip], "workload.log")
        stack.callback(proc.terminate)
        # Three wait: the actor behind the holder's A100, the four-GPU task, the H100 task.
        wait_for_demands(local.dashboard_url, lambda found: len(found) >= 3)
        # The cut-off raylet gives up on its first GCS connection after 5 s; wait until it has.
        (lost,) = [log for (_, name), log in kubelet.logs.items() if name.startswith(f"{CLUSTER}-lost-")]
        assert eventually(lambda: b"Failed to connect to GCS" in lost.read_bytes(), timeout_s=60, poll_s=0.5)
        yield Stack(
            plane,
            local.dashboard_url,
            kubeconfig,
            {group: p.metadata.name for group, p in pods().items()},
        )
        started = kubelet.started_pids()
    assert kubelet.errors == []
    assert not [pid for pid in started if pid_alive(pid)]
    assert kubelet.stragglers() == []


@pytest.fixture(scope="module")
def report(stack: Stack) -> dict[str, Any]:
    """``raydiag diagnose --format json`` as the ServiceAccount, in a process of its own."""
    command = [
        sys.executable, "-m", "bot", "diagnose", "--cluster", CLUSTER, "--namespace", NS,
        "--kubeconfig", str(stack.kubeconfig), "--context", CONTEXT,
        "--dashboard-url", stack.dashboard_url, "--format", "json",
    ]  # fmt: skip
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def named(report: dict[str, Any]) -> set[tuple[int | None, str]]:
    return {(f["cause"], f["subject"]["name"]) for f in report["findings"]}


def refused(message: str) -> bool:
    return "403" in message or "forbidden" in message.lower()


Scope = tuple[str, str, str, tuple[str, ...]]  # verb, API group, resource, resource names


def scopes(rules: list[Any]) -> set[Scope]:
    """RBAC rules (API objects or dicts) spelled out one (verb, group, resource, names) each."""
    out: set[Scope] = set()
    for rule in rules:
        raw = rule if isinstance(rule, dict) else rule.to_dict()
        names = tuple(sorted(raw.get("resource_names") or raw.get("resourceNames") or ()))
        for verb in raw["verbs"]:
            for group in raw.get("api_groups") or raw.get("apiGroups") or [""]:
                for resource in raw.get("resources") or []:
                    out.add((verb, group, resource, names))
    return out


def rules_review(api: Any, namespace: str) -> set[Scope]:
    """What kube-apiserver says the caller of ``api`` may do in ``namespace``, resource rules only."""
    from kubernetes import client

    body = client.V1SelfSubjectRulesReview(spec=client.V1SelfSubjectRulesReviewSpec(namespace=namespace))
    reviews: Any = client.AuthorizationV1Api(api)
    status = reviews.create_self_subject_rules_review(body=body).status
    assert not status.incomplete, status.evaluation_error
    return scopes(status.resource_rules)


def token_client(kubeconfig: Path) -> Any:
    from kubernetes import config

    return config.new_client_from_config(config_file=str(kubeconfig), context=CONTEXT)  # type: ignore[no-untyped-call]


def test_every_planted_cause_is_named_with_its_subject(stack: Stack, report: dict[str, Any]) -> None:
    pods = stack.pods
    found = named(report)
    assert (1, pods["bigmem"]) in found
    assert (2, pods["pinned"]) in found
    assert (3, pods["dark"]) in found
    assert (3, "gpu-dark") in found
    assert (8, pods["lost"]) in found
    # Its evidence is its raylet's own log, read through kube-apiserver from the kubelet.
    (lost,) = [f for f in report["findings"] if f["cause"] == 8]
    logs = [e["text"] for e in lost["evidence"] if e["source"] == f"log {pods['lost']}"]
    assert any("Failed to connect to GCS" in text for text in logs), lost["evidence"]
    # The Ray layer's subjects are the workload's: the detached actor holding the A100, and the
    # shapes of the demands that wait (four GPUs on one-GPU nodes; an H100 no node registers).
    assert (5, workload.HOLDER) in found
    assert any(cause == 6 and "GPU: 4" in name for cause, name in found), found
    assert any(cause == 7 and "accelerator_type:H100" in name for cause, name in found), found


def test_the_diagnosis_as_the_service_account_met_no_refusal(report: dict[str, Any]) -> None:
    assert report["findings"], "an empty report proves nothing about RBAC"
    assert [e for e in report["errors"] if refused(e["message"])] == []
    assert report["errors"] == []  # nor anything else left unread: logs too came through
    unread = [f for f in report["findings"] if f["rule"] == "collection-failed"]
    assert [f["title"] for f in unread if refused(json.dumps(f["evidence"]))] == []


def test_the_service_account_may_do_nothing_beyond_read_scopes_and_its_lease(accounts: Accounts) -> None:
    """The rules kube-apiserver reports for the token, less those of a ServiceAccount bound to
    nothing (what every authenticated identity gets: self reviews), are READ_SCOPES everywhere,
    and in the bot's own namespace the leader-election Role as well."""
    account = token_client(accounts.raydiag)
    unbound = token_client(accounts.unbound)
    read_scopes = {(verb, group, resource, ()) for verb, group, resource in READ_SCOPES}
    (lease_role,) = [o for o in render("base") if o["kind"] == "Role"]
    lease = scopes(lease_role["rules"])
    assert {(verb, group, resource) for verb, group, resource, _ in lease} <= {
        ("create", "coordination.k8s.io", "leases"),
        ("get", "coordination.k8s.io", "leases"),
        ("update", "coordination.k8s.io", "leases"),
    }

    for namespace, expected in ((NS, read_scopes), (BOT_NAMESPACE, read_scopes | lease)):
        everyone = rules_review(unbound, namespace)
        granted = rules_review(account, namespace) - everyone
        assert granted == expected, (namespace, granted ^ expected)


def test_the_head_check_as_the_service_account_meets_no_refusal(stack: Stack) -> None:
    """The one probe that reads Kubernetes (the GPU probe only talks to the Ray dashboard)."""
    target = Target(cluster=CLUSTER, namespace=NS, kubeconfig=str(stack.kubeconfig), context=CONTEXT)
    reader = KubernetesReader(kubernetes_client(target), Deadline(20))
    result = check_head(reader, NS, CLUSTER, stack.dashboard_url, connect_timeout=0.5)
    assert result.service_found is True
    assert [p.name for p in result.head_pods] == [stack.pods["headgroup"]]
    assert [e for e in result.errors if refused(e)] == []
    assert [e for e in reader.errors if refused(e.message)] == []
    assert {call.scope for call in reader.made} <= READ_SCOPES


def test_leader_election_as_the_service_account_takes_over_and_without_the_role_is_refused(
    accounts: Accounts,
) -> None:
    """The Lease of deploy/base/leader-election.yaml, on the real API server as the shipped
    identity: one replica leads, the other takes over when it stops; the ``default`` account,
    which the Role is not bound to, meets kube-apiserver's own 403 and never leads."""
    from kubernetes import client

    fast = LeaseSettings(namespace=BOT_NAMESPACE, lease_duration_s=3, renew_deadline_s=2, retry_period_s=1)
    first, second, refused_one = (
        Leadership(fast, token_client(kubeconfig), on_lead=lambda: None, on_lose=lambda: None, identity=who)
        for kubeconfig, who in (
            (accounts.raydiag, "raydiag-a"),
            (accounts.raydiag, "raydiag-b"),
            (accounts.unbound, "unbound"),
        )
    )
    leases: Any = client.CoordinationV1Api(token_client(accounts.raydiag))
    others = set(threading.enumerate())
    try:
        first.start()
        refused_one.start()
        assert eventually(lambda: first.leading, timeout_s=20)
        second.start()
        assert leases.read_namespaced_lease(fast.name, BOT_NAMESPACE).spec.holder_identity == "raydiag-a"
        first.stop()  # leaves the Lease to expire, as a replica that goes away does
        assert eventually(lambda: second.leading, timeout_s=30)
        assert leases.read_namespaced_lease(fast.name, BOT_NAMESPACE).spec.holder_identity == "raydiag-b"
        assert not refused_one.leading
    finally:
        for elector in (first, second, refused_one):
            elector.stop()
        for elector in (first, second, refused_one):
            elector.stop(timeout_s=10)
    # Stopped means stopped: the refused follower too, which the client's loop retries for ever.
    assert [t.name for t in set(threading.enumerate()) - others if t.name == "raydiag-leader"] == []
    with pytest.raises(client.exceptions.ApiException) as refusal:
        client.CoordinationV1Api(token_client(accounts.unbound)).read_namespaced_lease(
            fast.name, BOT_NAMESPACE
        )
    assert refusal.value.status == 403


def test_events_refused_by_rbac_are_a_finding_and_the_causes_still_named(
    stack: Stack, tmp_path: Path
) -> None:
    """The shipped ClusterRole less ``events``, bound to an account of its own: kube-apiserver's own
    403 becomes a finding naming what could not be read, and the fit replay still names the
    Pods the scheduler refused, without the scheduler's words."""
    from kubernetes import client

    plane, account = stack.plane, "raydiag-no-events"
    rbac: Any = client.RbacAuthorizationV1Api(plane.client())
    core: Any = client.CoreV1Api(plane.client())
    (shipped,) = [dict(o) for o in render("base") if o["kind"] == "ClusterRole"]
    rules = [
        {**rule, "resources": [r for r in rule["resources"] if r != "events"]}
        for rule in shipped["rules"]
        if rule["resources"] != ["events"]
    ]
    assert scopes(rules) == scopes(shipped["rules"]) - {("list", "", "events", ())}
    core.create_namespaced_service_account(BOT_NAMESPACE, body={"metadata": {"name": account}})
    rbac.create_cluster_role(body={"metadata": {"name": account}, "rules": rules})
    rbac.create_cluster_role_binding(
        body={
            "metadata": {"name": account},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": account},
            "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": BOT_NAMESPACE}],
        }
    )
    kubeconfig = service_account_kubeconfig(plane, tmp_path / "kubeconfig", account)
    target = Target(
        cluster=CLUSTER,
        namespace=NS,
        kubeconfig=str(kubeconfig),
        context=CONTEXT,
        dashboard_url=stack.dashboard_url,
    )
    diagnosis = classify(collect_live(target))

    (error,) = [e for e in diagnosis.errors if e.source == "kubernetes events"]
    assert "403" in error.message and "forbidden" in error.message, error.message
    assert f"system:serviceaccount:{BOT_NAMESPACE}:{account}" in error.message
    assert [e for e in diagnosis.errors if e is not error] == []
    assert ("collection-failed", "kubernetes events") in {
        (f.rule, f.subject.name) for f in diagnosis.findings
    }
    found = {(f.cause, f.subject.name) for f in diagnosis.findings}
    assert (1, stack.pods["bigmem"]) in found
    assert (3, stack.pods["dark"]) in found
