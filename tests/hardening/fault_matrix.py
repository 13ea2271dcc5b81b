"""The collection fault matrix: one broken cluster, read through every way an API can fail.

Each case is one fault a real incident brings (a slow or throttling API server, a 500 from etcd,
missing RBAC, a proxy's HTML page, a list too long for one answer, an expired ``continue``
token, a dashboard that hangs or answers in another Ray version's shapes) and what the diagnosis
must still do with it: say what it could not read, name the cause the readable parts show, and
finish within the deadline. ``tests/hardening/test_kubernetes_faults.py`` and
``test_dashboard_faults.py`` assert that; ``benchmarks/bench_faults.py`` runs the same cases and
writes the figures into ``RELIABILITY.md``.

The Kubernetes cases read ``scenarios.third_gpu_worker_no_free_gpu()`` from the loopback API
server (``tests/support/kube_api.py``): a third A100 worker of ``raycluster-gpu`` stays Pending
because both A100 nodes are full, which the fit replay shows from Pods + Nodes and the
``FailedScheduling`` event shows on its own, so losing either source still names cause 1. The
dashboard cases replay the recorded ``broken`` Ray 2.60 cluster (``recorded_dashboard.py``).
"""

from __future__ import annotations

import contextlib
import socket
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Literal

from bot.classify import classify
from bot.collect.deadline import Deadline
from bot.collect.live import Target, collect_live
from bot.collect.ray_dashboard import DashboardReader, collect_ray
from bot.diagnosis import Diagnosis
from bot.read.ray_json import ray_state
from bot.snapshot.model import Snapshot
from tests.hardening.recorded_dashboard import (
    Answer,
    DashboardFault,
    newer_answers,
    ray_2_2_answers,
    ray_2_9_answers,
    recorded_answers,
    serve_dashboard,
)
from tests.support import k8s, scenarios
from tests.support.cluster import CLUSTER, NS, Bundle
from tests.support.kube_api import EXPIRED_CONTINUE, Fault, ObjectStore, serve

# What a collection may overrun its deadline by: the call in flight when it expires gets only the
# time left (at least 50 ms), then the answers are turned into a snapshot.
DEADLINE_SLACK_S = 2.0
STUCK_WORKER = "k8s-insufficient-resources"
BATCH_NAMESPACE = "batch"
BATCH_MESSAGE = (
    "0/5 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, "
    "2 Insufficient cpu, 2 node(s) had untolerated taint {nvidia.com/gpu: present}. preemption: 0/5 "
    "nodes are available: 5 Preemption is not helpful for scheduling."
)


@dataclass(frozen=True)
class KubeFaultCase:
    """One fault of the Kubernetes API, and what the diagnosis must still say.

    ``unread``: error sources that must be reported (each also a ``collection-failed`` finding);
    empty means no Kubernetes source may be reported at all. ``says``: words one of those errors
    must contain. ``still_named``: a rule the readable parts must still fire. ``unrelated_pending``:
    that many Pending Pods of another team (a 20,000-Pod batch Job) in the cluster-wide list.
    """

    id: str
    faults: tuple[Fault, ...] = ()
    unread: tuple[str, ...] = ()
    says: str = ""
    still_named: str | None = STUCK_WORKER
    deadline_s: float = 10.0
    call_timeout_s: float = 2.0
    api: Literal["loopback", "refused"] = "loopback"
    dashboard: Literal["dead", "broken"] = "dead"
    unrelated_pending: int = 0
    build: Callable[[], Bundle] = scenarios.third_gpu_worker_no_free_gpu


@dataclass(frozen=True)
class DashboardFaultCase:
    """One fault of the Ray dashboard; ``answers`` builds what the healthy dashboard would send.

    ``down``: nothing listens at the dashboard's address (the head Pod is gone).
    """

    id: str
    faults: tuple[DashboardFault, ...] = ()
    unread: tuple[str, ...] = ()
    says: str = ""
    still_named: tuple[str, ...] = ("ray-demand-infeasible",)
    answers: Callable[[], dict[str, Answer]] = recorded_answers
    deadline_s: float = 10.0
    call_timeout_s: float = 1.0
    down: bool = False


@dataclass
class Outcome:
    snapshot: Snapshot
    diagnosis: Diagnosis
    elapsed_s: float  # the collection alone, which the deadline bounds
    requests: int
    request_paths: list[str] = field(default_factory=list)

    @property
    def rules(self) -> set[str]:
        return {f.rule for f in self.diagnosis.findings}

    def unread_sources(self) -> set[str]:
        """Sources the diagnosis reports as not read, as findings (not only as errors)."""
        return {
            str(f.subject.name)
            for f in self.diagnosis.findings
            if f.rule in ("collection-failed", "ray-dashboard-unreachable")
        }


PENDING_POD_LIST = r"^/api/v1/pods$"

KUBE_CASES: list[KubeFaultCase] = [
    KubeFaultCase(
        "events-answer-after-4s",
        (Fault(r"/namespaces/ml/events$", delay_s=4.0),),
        unread=("kubernetes events",),
        says="timed out",
        deadline_s=8.0,
        call_timeout_s=1.0,
    ),
    KubeFaultCase(
        # A slow API server uses up the deadline, but the Ray layer is read beside it (here the
        # dead dashboard is found at once): the parts still to read when time runs out, the log
        # tails last of all, say the deadline was reached. The first round of reads (six at a
        # time) takes two answers' time, so the second round and the log tails find the
        # deadline reached.
        "every-answer-takes-1s",
        (Fault(r"^/api", delay_s=1.0),),
        unread=("ray dashboard", "kubernetes logs raycluster-gpu-head-8x2kq"),
        says="deadline was reached",
        deadline_s=2.5,
    ),
    KubeFaultCase(
        "api-server-hangs",
        (Fault(r"^/api", delay_s=30.0),),
        unread=("kubernetes rayclusters", "kubernetes pods"),
        says="timed out",
        still_named=None,
        deadline_s=2.0,
        call_timeout_s=0.8,
    ),
    KubeFaultCase("nodes-throttled-once", (Fault(r"/nodes$", status=429, retry_after=1, times=1),)),
    KubeFaultCase(
        "nodes-throttled-always",
        (Fault(r"/nodes$", status=429, retry_after=1),),
        unread=("kubernetes nodes",),
        says="429",
    ),
    KubeFaultCase(
        "nodes-throttled-retry-after-120s",
        (Fault(r"/nodes$", status=429, retry_after=120),),
        unread=("kubernetes nodes",),
        says="429",
    ),
    KubeFaultCase(
        "everything-throttled",
        (Fault(r"^/api", status=429, retry_after=1),),
        unread=("kubernetes rayclusters", "kubernetes pods", "kubernetes nodes"),
        says="Too many requests",
        still_named=None,
        deadline_s=3.0,
    ),
    KubeFaultCase(
        "pods-500", (Fault(r"/pods$", status=500),), unread=("kubernetes pods",), says="etcdserver"
    ),
    KubeFaultCase(
        "nodes-500", (Fault(r"/nodes$", status=500),), unread=("kubernetes nodes",), says="etcdserver"
    ),
    KubeFaultCase(
        "events-500", (Fault(r"/events$", status=500),), unread=("kubernetes events",), says="etcdserver"
    ),
    KubeFaultCase(
        "raycluster-500",
        (Fault(r"/rayclusters/", status=500),),
        unread=("kubernetes rayclusters",),
        says="etcdserver",
    ),
    KubeFaultCase(
        "forbidden-nodes-quotas-policies-kueue",
        (
            Fault(r"/nodes$", status=403),
            Fault(r"/resourcequotas$", status=403),
            Fault(r"/networkpolicies$", status=403),
            Fault(r"/workloads$", status=403),
        ),
        unread=(
            "kubernetes nodes",
            "kubernetes resourcequotas",
            "kubernetes networkpolicies",
            "kubernetes kueue workloads",
        ),
        says="forbidden",
    ),
    KubeFaultCase(
        "raycluster-404-pods-remain",
        unread=("kubernetes rayclusters",),
        says="RayCluster raycluster-gpu not found in namespace ml",
        build=lambda: _without_raycluster(scenarios.third_gpu_worker_no_free_gpu()),
    ),
    KubeFaultCase(
        # One error stands for the whole API server: after the first refusal no call is made.
        "api-server-refuses-connections",
        api="refused",
        dashboard="broken",
        unread=("kubernetes api",),
        says="connection refused",
        still_named="ray-demand-infeasible",
    ),
    KubeFaultCase(
        "pods-connection-reset",
        (Fault(r"/pods$", reset=True),),
        unread=("kubernetes pods",),
        says="reset",
    ),
    KubeFaultCase(
        "events-truncated-json",
        (Fault(r"/events$", status=200, body="truncated"),),
        unread=("kubernetes events",),
        says="not valid JSON",
    ),
    KubeFaultCase(
        "nodes-proxy-502-html",
        (Fault(r"/nodes$", body="html"),),
        unread=("kubernetes nodes",),
        says='HTML page ("502 Bad Gateway")',
    ),
    KubeFaultCase("pending-pods-in-pages", unrelated_pending=2500, deadline_s=25.0),
    KubeFaultCase(
        "continue-token-expires-once",
        (Fault(PENDING_POD_LIST, status=410, query_regex="continue=", times=1, message=EXPIRED_CONTINUE),),
        unrelated_pending=2500,
        deadline_s=25.0,
    ),
    KubeFaultCase(
        "continue-token-always-expires",
        (Fault(PENDING_POD_LIST, status=410, query_regex="continue=", message=EXPIRED_CONTINUE),),
        unread=("kubernetes pods",),
        says="expired twice",
        unrelated_pending=2500,
        deadline_s=25.0,
    ),
]

DASHBOARD_CASES: list[DashboardFaultCase] = [
    DashboardFaultCase(
        "dashboard-down",
        (),
        unread=("ray dashboard",),
        says="connection refused",
        still_named=(),
        down=True,
    ),
    DashboardFaultCase(
        "dashboard-hangs",
        (DashboardFault(r".", delay_s=30.0),),
        unread=("ray dashboard",),
        says="timed out",
        still_named=(),
    ),
    DashboardFaultCase(
        "state-api-nodes-answer-after-5s",
        (DashboardFault(r"^/api/v0/nodes", delay_s=5.0),),
        unread=("ray api nodes",),
        says="timed out",
        still_named=("ray-demand-infeasible", "ray-leftover-actor", "ray-serve-unhealthy"),
    ),
    DashboardFaultCase(
        "actors-500-gcs-timeout",
        (DashboardFault(r"^/api/v0/actors", status=500, body="ray"),),
        unread=("ray api actors",),
        says="DEADLINE_EXCEEDED",
        still_named=("ray-demand-infeasible", "ray-serve-unhealthy"),
    ),
    DashboardFaultCase(
        "cluster-status-500",
        (DashboardFault(r"^/api/cluster_status$", status=500, body="aiohttp"),),
        unread=("ray api cluster_status",),
        says="500",
        still_named=("ray-demand-infeasible", "ray-leftover-actor", "ray-serve-unhealthy"),
    ),
    DashboardFaultCase(
        "proxy-502-html-page",
        (DashboardFault(r".", status=502, body="html"),),
        unread=("ray dashboard",),
        says='HTML page ("502 Bad Gateway")',
        still_named=(),
    ),
    DashboardFaultCase(
        "sso-login-page",
        (DashboardFault(r".", status=200, body="login"),),
        unread=("ray dashboard",),
        says="Sign in - ml-platform SSO",
        still_named=(),
    ),
    DashboardFaultCase(
        "nodes-truncated-json",
        (DashboardFault(r"^/api/v0/nodes", body="truncated"),),
        unread=("ray api nodes",),
        says="not valid JSON",
        still_named=("ray-demand-infeasible", "ray-leftover-actor"),
    ),
    DashboardFaultCase(
        "ray-2.9-shapes",
        answers=ray_2_9_answers,
        still_named=("ray-gpu-type-unregistered", "ray-autoscaler-launch-failed"),
    ),
    DashboardFaultCase("ray-2.2-shapes", answers=ray_2_2_answers, still_named=("ray-serve-unhealthy",)),
    DashboardFaultCase(
        "newer-ray-shapes",
        answers=newer_answers,
        still_named=("ray-demand-infeasible", "ray-leftover-actor", "ray-gpu-type-unregistered"),
    ),
]


def _without_raycluster(bundle: Bundle) -> Bundle:
    """The RayCluster was deleted (or never applied here) while its Pods are still around."""
    bundle.remove("rayclusters", CLUSTER)
    return bundle


def batch_job_pod(index: int) -> dict[str, object]:
    """The index-th Pod of another team's 20,000-way batch Job, Pending for want of CPU."""
    return k8s.pod(
        f"nightly-etl-{index:05d}-{k8s.uid('etl', str(index))[:5]}",
        BATCH_NAMESPACE,
        [
            k8s.container(
                "etl",
                "ghcr.io/acme/etl:2026.11",
                limits={"cpu": "2", "memory": "4Gi"},
                requests={"cpu": "2", "memory": "4Gi"},
            )
        ],
        labels={"batch.kubernetes.io/job-name": "nightly-etl", "job-name": "nightly-etl"},
        owner=("batch/v1", "Job", "nightly-etl"),
        status=k8s.pending_status(BATCH_MESSAGE),
    )


@cache
def _store(build: Callable[[], Bundle], unrelated_pending: int) -> ObjectStore:
    store = ObjectStore.from_bundle(build())
    pods = store.resource("", "v1", "pods")
    for index in range(unrelated_pending):
        store.add(batch_job_pod(index), pods)
    store.ensure_namespaces()
    return store


def store_for(case: KubeFaultCase) -> ObjectStore:
    """The objects ``case`` serves; stores are only read, so one per shape serves every case."""
    return _store(case.build, case.unrelated_pending)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def refused_kubeconfig(folder: Path) -> Path:
    """A kubeconfig whose API server address nobody listens on."""
    path = folder / "kubeconfig-refused"
    path.write_text(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: gone\n  cluster:\n"
        f"    server: https://127.0.0.1:{closed_port()}\n    insecure-skip-tls-verify: true\n"
        "contexts:\n- name: gone\n  context:\n    cluster: gone\n    user: gone\n"
        "current-context: gone\nusers:\n- name: gone\n  user:\n    token: loopback-token\n",
        encoding="utf-8",
    )
    return path


@contextlib.contextmanager
def dashboard_url(kind: Literal["dead", "broken"]) -> Iterator[str]:
    if kind == "dead":
        yield f"http://127.0.0.1:{closed_port()}"
        return
    with serve_dashboard(recorded_answers("broken")) as dashboard:
        yield dashboard.url


def collect_and_classify(
    case: KubeFaultCase, kubeconfig: Path, url: str
) -> tuple[Snapshot, Diagnosis, float]:
    """What ``raydiag diagnose`` does, with the collection timed on its own."""
    target = Target(cluster=CLUSTER, namespace=NS, kubeconfig=str(kubeconfig), dashboard_url=url)
    started = time.monotonic()
    snapshot = collect_live(target, deadline_s=case.deadline_s, call_timeout_s=case.call_timeout_s)
    elapsed = time.monotonic() - started
    return snapshot, classify(snapshot), elapsed


def run_kube_case(case: KubeFaultCase, folder: Path | None = None) -> Outcome:
    """Collect and classify ``case`` against a fresh loopback server; never raises for the fault."""
    api = None
    with contextlib.ExitStack() as stack:
        if folder is None:
            folder = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        url = stack.enter_context(dashboard_url(case.dashboard))
        if case.api == "refused":
            kubeconfig = refused_kubeconfig(folder)
        else:
            api = stack.enter_context(serve(store_for(case), faults=case.faults))
            kubeconfig = api.kubeconfig(folder / f"kubeconfig-{case.id}")
        snapshot, diagnosis, elapsed = collect_and_classify(case, kubeconfig, url)
    # Read once the server has stopped: a request it was still sleeping on is logged by then.
    records = api.requests.snapshot() if api is not None else []
    paths = [f"{r.path}?{r.query}" if r.query else r.path for r in records]
    return Outcome(snapshot, diagnosis, elapsed, len(records), paths)


def run_dashboard_case(case: DashboardFaultCase) -> Outcome:
    """The Ray half of ``collect_live`` (reader, ``collect_ray``, ``ray_state``) and ``classify``."""
    with contextlib.ExitStack() as stack:
        if case.down:
            url, dashboard = f"http://127.0.0.1:{closed_port()}", None
        else:
            dashboard = stack.enter_context(serve_dashboard(case.answers(), case.faults))
            url = dashboard.url
        reader = DashboardReader(url, Deadline(case.deadline_s), case.call_timeout_s)
        started = time.monotonic()
        answers = collect_ray(reader)
        state = ray_state(answers) if answers else None
        elapsed = time.monotonic() - started
        snapshot = Snapshot(
            cluster=CLUSTER, namespace=NS, origin="live", ray=state, errors=list(reader.errors)
        )
        paths = [path for path, _ in dashboard.requests] if dashboard is not None else []
        return Outcome(snapshot, classify(snapshot), elapsed, reader.requests, paths)


def broken_promises(case: KubeFaultCase | DashboardFaultCase, outcome: Outcome) -> list[str]:
    """What the diagnosis of ``case`` failed to do; empty when it kept every promise."""
    problems: list[str] = []
    errors = outcome.snapshot.errors
    reported = outcome.unread_sources()
    for source in case.unread:
        if not any(e.source == source for e in errors):
            problems.append(f"no error for {source}; errors: {sorted({e.source for e in errors})}")
        elif source not in reported:
            problems.append(f"{source} is an error but no finding says it could not be read")
    if case.says and not any(case.says in e.message for e in errors if e.source in case.unread):
        problems.append(f"no error of {list(case.unread)} says {case.says!r}: {[e.message for e in errors]}")
    layer = "kubernetes" if isinstance(case, KubeFaultCase) else ""
    if not case.unread and [e for e in errors if e.source.startswith(layer)]:
        problems.append(f"unexpected errors: {[(e.source, e.message) for e in errors]}")
    named = [case.still_named] if isinstance(case.still_named, str) else list(case.still_named or ())
    problems += [
        f"{rule} not named; findings: {sorted(outcome.rules)}" for rule in named if rule not in outcome.rules
    ]
    if outcome.elapsed_s >= case.deadline_s + DEADLINE_SLACK_S:
        problems.append(
            f"took {outcome.elapsed_s:.2f}s, deadline {case.deadline_s:g}s + {DEADLINE_SLACK_S:g}s"
        )
    return problems
