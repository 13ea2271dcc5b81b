"""The safe probes against a real local Ray cluster and the loopback Kubernetes API server.

One multi-raylet cluster runs for the whole module: a CPU-only head on 127.0.0.2, one logical GPU
with ``accelerator_type:A100`` on 127.0.0.3 and one with ``accelerator_type:T4`` on 127.0.0.4.
The raylets get this venv's ``bin`` first on PATH, so the probe job's ``python`` has Ray, as it does
in Ray's images. Tests that need no cluster come first.

Loopback API server, for what the real control plane cannot be made to show: the head check's
verdicts are read from the head Service's Endpoints (no endpoints, an address not Ready, an
address whose ports answer), and Endpoints are written by kube-controller-manager's endpoints and
EndpointSlice controllers, which tests/support/controlplane.py does not run. There every Service
has none, so each state here would be our hand-written Endpoints either way; the loopback server
serves them beside a real Ray head at the demo's IPs, and is also the "not a Ray dashboard" the
GPU probe refuses. The head check as the shipped ServiceAccount on the real control plane (the
Service and head Pod the operator made, no 403) is in tests/integration/test_compound_real_stack.py.
"""

from __future__ import annotations

import contextlib
import json
import shlex
import socket
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from bot.collect.deadline import Deadline
from bot.collect.kubernetes import READ_SCOPES, KubernetesReader
from bot.collect.live import Target, kubernetes_client
from bot.demo.local_ray import LocalCluster, dig_list, http_json
from bot.probes import HEAD_VERDICT_MESSAGES, OUTCOMES, PROBE_MESSAGES
from bot.probes.gpu import (
    MARK,
    SUBMISSION_PREFIX,
    TASK_NAME,
    gpu_resource,
    new_submission_id,
    parse_markers,
    probe_entrypoint,
    probe_script,
    run_gpu_probe,
)
from bot.probes.head import check_head, dashboard_host_port
from bot.probes.status import MAX_CHARS, clip, ray_status_text, status_text
from tests.support import scenarios
from tests.support.cluster import CLUSTER, HEAD, NS, Bundle
from tests.support.kube_api import KubeAPI, ObjectStore, serve
from tests.support.probe_cluster import probe_cluster

# Real Ray clusters on 127.0.0.2-.5: these modules run one after another in one pytest-xdist worker.
pytestmark = pytest.mark.xdist_group("real-ray")

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ray"
GPU_NODES = {"127.0.0.3", "127.0.0.4"}


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# --- without a cluster ---------------------------------------------------------------------------


def test_messages_cover_every_outcome_in_both_languages() -> None:
    assert set(PROBE_MESSAGES) == set(OUTCOMES)
    for entry in [*PROBE_MESSAGES.values(), *HEAD_VERDICT_MESSAGES.values()]:
        assert set(entry) == {"en", "zh"} and all(text.strip() for text in entry.values())
    pending, ran = PROBE_MESSAGES["pending_timeout"], PROBE_MESSAGES["ran"]
    assert all(f"cause {n}" in pending["en"] and f"原因 {n}" in pending["zh"] for n in (4, 5, 6, 7))
    assert "declared wrongly" in pending["en"] and "声明有误" in pending["zh"]
    assert "cause 5" in ran["en"] and "原因 5" in ran["zh"] and "actor" in ran["en"]


def test_gpu_type_accepts_both_forms() -> None:
    assert gpu_resource("A100") == "accelerator_type:A100"
    assert gpu_resource(" accelerator_type:A100 ") == "accelerator_type:A100"
    assert gpu_resource(None) is None and gpu_resource("  ") is None


def test_probe_script_is_python_and_survives_the_shell() -> None:
    resource = "accelerator_type:A'100\"$(touch /tmp/x)"
    script = probe_script(resource)
    compile(script, "<probe>", "exec")
    assert shlex.split(probe_entrypoint(resource)) == ["python", "-c", script]
    # The normal script has no single quote, so the dashboard shows it in one readable pair.
    assert "'" not in probe_script("accelerator_type:A100")
    assert "num_gpus" in script and TASK_NAME in script
    assert new_submission_id().startswith(SUBMISSION_PREFIX)


def test_markers_are_parsed_from_noisy_logs() -> None:
    logs = "\n".join(
        [
            "2026-01-01 INFO worker.py:1 -- Connecting to existing Ray cluster",
            f'{MARK}STARTED {{"ray_version": "2.60.0", "cluster_gpus": 2.0}}',
            "(raydiag_gpu_probe pid=1) some worker output",
            f"{MARK}RESULT not json",
            f'{MARK}RESULT {{"node_ip": "10.0.0.1"}}',
        ]
    )
    found = parse_markers(logs)
    assert found["STARTED"]["cluster_gpus"] == 2.0
    assert found["RESULT"] == {"node_ip": "10.0.0.1"}


def test_status_text_is_found_in_recorded_answers_and_clipped_at_the_middle() -> None:
    for path in sorted(FIXTURES.glob("*/cluster_status_formatted.json")):
        text = status_text(json.loads(path.read_text()))
        assert text is not None and "Node status" in text, path
    lines = [
        "Node status",
        *(f" 1 node_{i:056d}" for i in range(200)),
        "Pending Demands:",
        " {'GPU': 8.0}: 1+",
    ]
    shown, clipped = clip("\n".join(lines))
    assert clipped and len(shown) <= MAX_CHARS
    assert shown.startswith("Node status") and shown.endswith("{'GPU': 8.0}: 1+")
    assert "characters left out" in shown
    assert clip("short") == ("short", False)


def test_dashboard_host_port() -> None:
    assert dashboard_host_port("http://10.0.0.5:8265/") == ("10.0.0.5", 8265)
    assert dashboard_host_port("localhost:8265") == ("localhost", 8265)
    assert dashboard_host_port("https://ray.example.com") == ("ray.example.com", 443)


def test_dead_dashboard_is_unreachable_quickly() -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    began = time.monotonic()
    probe = run_gpu_probe(url, timeout_s=30)
    status = ray_status_text(url, timeout_s=5)
    assert time.monotonic() - began < 10
    assert probe.outcome == "unreachable" and probe.submission_id is None and probe.error
    assert status.outcome == "unreachable" and status.text is None


class FakeJobs:
    """Stands in for the Job Submission client: answers ``statuses`` in turn, records stops."""

    def __init__(self, *statuses: str | BaseException) -> None:
        self.statuses = list(statuses)
        self.stopped: list[str] = []

    def submit_job(self, **_: object) -> str:
        return "ignored"

    def get_job_status(self, submission_id: str) -> str:
        answer = self.statuses.pop(0) if len(self.statuses) > 1 else self.statuses[0]
        if isinstance(answer, BaseException):
            raise answer
        return answer

    def stop_job(self, submission_id: str) -> bool:
        self.stopped.append(submission_id)
        return True

    def get_job_logs(self, submission_id: str) -> str:
        return ""


def test_lost_dashboard_and_interruption_still_stop_the_job(monkeypatch: pytest.MonkeyPatch) -> None:
    from bot.probes import gpu

    lost = FakeJobs("PENDING", "RUNNING", ConnectionError("connection reset"))
    monkeypatch.setattr(gpu, "_client", lambda *_: lost)
    result = run_gpu_probe("http://ray:8265", timeout_s=10, poll_s=0.01)
    assert result.outcome == "unreachable" and result.job_status == "RUNNING"
    assert lost.stopped == [result.submission_id]

    interrupted = FakeJobs("RUNNING", KeyboardInterrupt())
    monkeypatch.setattr(gpu, "_client", lambda *_: interrupted)
    with pytest.raises(KeyboardInterrupt):
        run_gpu_probe("http://ray:8265", timeout_s=10, poll_s=0.01)
    assert len(interrupted.stopped) == 1 and interrupted.stopped[0].startswith(SUBMISSION_PREFIX)

    stubborn = FakeJobs("RUNNING")  # never ends, even when asked to stop
    monkeypatch.setattr(gpu, "_client", lambda *_: stubborn)
    result = run_gpu_probe("http://ray:8265", timeout_s=0.1, poll_s=0.01, stop_wait_s=0.2)
    assert result.outcome == "pending_timeout" and not result.stopped_after_timeout
    assert any("still RUNNING" in note for note in result.notes) and stubborn.stopped


class SlowStart(FakeJobs):
    """A job RUNNING from the start whose driver connects (prints STARTED) only after a while."""

    def __init__(self, connects_after_s: float) -> None:
        super().__init__("RUNNING")
        self.connects_at = time.monotonic() + connects_after_s

    def get_job_logs(self, submission_id: str) -> str:
        if time.monotonic() < self.connects_at:
            return "starting the driver\n"
        return MARK + 'STARTED {"ray_version": "2.9.3", "cluster_gpus": 2, "resource_total": null}\n'


def test_a_slow_driver_start_does_not_count_against_the_wait_for_a_gpu(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from bot.probes import gpu

    slow = SlowStart(connects_after_s=0.4)
    monkeypatch.setattr(gpu, "_client", lambda *_: slow)
    began = time.monotonic()
    result = run_gpu_probe("http://ray:8265", timeout_s=0.3, start_timeout_s=5, poll_s=0.02, stop_wait_s=0.1)
    # The task waited 0.3 s after the driver connected at 0.4 s: pending, with the driver started.
    assert result.outcome == "pending_timeout" and result.driver_started
    assert time.monotonic() - began >= 0.7 and slow.stopped

    never = SlowStart(connects_after_s=60)
    monkeypatch.setattr(gpu, "_client", lambda *_: never)
    result = run_gpu_probe("http://ray:8265", timeout_s=5, start_timeout_s=0.2, poll_s=0.02, stop_wait_s=0.1)
    assert result.outcome == "pending_timeout" and not result.driver_started
    assert any("driver had not connected" in note for note in result.notes)


def test_something_that_is_not_a_ray_dashboard_rejects_the_probe() -> None:
    with serve(ObjectStore.from_bundle(scenarios.healthy())) as api:
        probe = run_gpu_probe(api.url, timeout_s=10)
    assert probe.outcome == "rejected", probe
    assert probe.error


# --- Kubernetes: the head Service ---------------------------------------------------------------


@contextlib.contextmanager
def kube_reader(bundle: Bundle, tmp_path: Path) -> Iterator[tuple[KubernetesReader, KubeAPI]]:
    with serve(ObjectStore.from_bundle(bundle)) as api:
        config = api.kubeconfig(tmp_path / "kubeconfig")
        target = Target(cluster=CLUSTER, namespace=NS, kubeconfig=str(config), context="loopback")
        yield KubernetesReader(kubernetes_client(target), Deadline(20)), api


def test_head_service_without_endpoints(tmp_path: Path) -> None:
    with kube_reader(scenarios.head_service_selector_typo(), tmp_path) as (reader, api):
        result = check_head(reader, NS, CLUSTER, None, connect_timeout=0.5)
        assert {call.scope for call in reader.made} <= READ_SCOPES
        assert {request.method for request in api.requests} == {"GET"}
    assert result.outcome == "ran"
    assert result.verdict == "no_endpoints", result
    assert result.service_found is True and result.addresses == ()
    # The head Pod exists and is Ready; it is the Service's selector that misses it.
    assert [(p.name, p.ready, p.selected) for p in result.head_pods] == [(HEAD, True, False)]
    assert ("ray.io/node-type", "Head") in result.selector
    dns = [c for c in result.ports if c.via == "service_dns"]
    assert {c.port for c in dns} == {6379, 8265, 10001} and not any(c.reachable for c in dns)
    assert result.elapsed_s < 5


def test_head_pod_not_ready_behind_its_service(tmp_path: Path) -> None:
    bundle = scenarios.healthy()
    for condition in bundle.find("pods", HEAD)["status"]["conditions"]:
        if condition["type"] in ("Ready", "ContainersReady"):
            condition["status"] = "False"
    with kube_reader(bundle, tmp_path) as (reader, _api):
        result = check_head(reader, NS, CLUSTER, None, connect_timeout=0.3)
    assert result.verdict == "pod_not_ready", result
    assert [a.pod for a in result.addresses] == [HEAD]


def test_missing_head_service(tmp_path: Path) -> None:
    bundle = scenarios.healthy()
    bundle.remove("services", f"{CLUSTER}-head-svc")
    with kube_reader(bundle, tmp_path) as (reader, _api):
        result = check_head(reader, NS, CLUSTER, None, connect_timeout=0.3)
    assert result.verdict == "no_service" and result.service_found is False


def test_kubernetes_unreachable_and_nothing_else_to_check() -> None:
    from kubernetes import client

    configuration = client.Configuration()
    configuration.host = f"http://127.0.0.1:{closed_port()}"
    configuration.retries = False
    reader = KubernetesReader(client.ApiClient(configuration), Deadline(5), call_timeout=2)
    result = check_head(reader, NS, CLUSTER, None)
    assert result.outcome == "unreachable" and result.verdict == "unknown"
    assert result.errors and "refused" in result.errors[0]


# --- a real Ray cluster --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[LocalCluster]:
    with probe_cluster() as cluster:
        yield cluster


def _ray_node_ids(url: str) -> dict[str, str]:
    _, body = http_json(url, "/api/v0/nodes?limit=100", timeout=10)
    rows = dig_list(body, "data", "result", "result")
    return {row["node_ip"]: row["node_id"] for row in rows if row.get("state") == "ALIVE"}


@pytest.mark.slow
def test_gpu_probe_runs_on_a_gpu_node(ray_cluster: LocalCluster) -> None:
    result = run_gpu_probe(ray_cluster.dashboard_url, timeout_s=60, poll_s=0.5)
    assert result.outcome == "ran", result
    assert result.node_ip in GPU_NODES
    assert result.node_id == _ray_node_ids(ray_cluster.dashboard_url)[result.node_ip]
    # Ray sets CUDA_VISIBLE_DEVICES for the logical GPU it hands out.
    assert result.cuda_visible_devices == "0" and result.gpu_ids == ("0",)
    assert result.job_status == "SUCCEEDED" and not result.stopped_after_timeout
    assert result.submission_id is not None and result.submission_id.startswith("raydiag-probe-")
    assert result.driver_started and result.cluster_gpus == 2.0
    # No torch, nvidia-smi or NVML here: the count stays unknown and the note says why.
    if result.device_count is None:
        assert result.device_note and "torch" in result.device_note
    assert 0 < result.elapsed_s < 60


@pytest.mark.slow
def test_gpu_type_lands_the_probe_on_that_node(ray_cluster: LocalCluster) -> None:
    result = run_gpu_probe(ray_cluster.dashboard_url, gpu_type="A100", timeout_s=60, poll_s=0.5)
    assert result.outcome == "ran", result
    assert result.node_ip == "127.0.0.3"
    assert result.gpu_resource == "accelerator_type:A100" and result.resource_total == 1.0


def _probe_leftovers(url: str, submission_id: str) -> list[str]:
    """What of the probe still waits or holds something: a live job actor, a task, a demand."""
    left: list[str] = []
    _, actors = http_json(url, "/api/v0/actors?detail=1&limit=1000", timeout=10)
    for actor in dig_list(actors, "data", "result", "result"):
        if submission_id in str(actor.get("name")) and actor.get("state") != "DEAD":
            left.append(f"actor {actor.get('name')} {actor.get('state')}")
    _, tasks = http_json(url, "/api/v0/tasks?detail=1&limit=1000", timeout=10)
    for task in dig_list(tasks, "data", "result", "result"):
        if task.get("name") == TASK_NAME and task.get("state") == "RUNNING":
            left.append(f"task {task.get('task_id')} RUNNING")
    status = ray_status_text(url, timeout_s=10).text or ""
    left += [line for line in status.splitlines() if "accelerator_type:H100" in line]
    return left


@pytest.mark.slow
def test_probe_that_cannot_be_placed_is_stopped_and_leaves_nothing(ray_cluster: LocalCluster) -> None:
    url = ray_cluster.dashboard_url
    with ThreadPoolExecutor(1) as pool:
        running = pool.submit(run_gpu_probe, url, gpu_type="H100", timeout_s=10, poll_s=0.5)
        # While it waits, its demand is what `ray status` shows: the leftover check below can see it.
        seen = False
        while not running.done() and not seen:
            seen = "accelerator_type:H100" in (ray_status_text(url, timeout_s=5).text or "")
            time.sleep(0.5)
        result = running.result()
    assert seen
    assert result.outcome == "pending_timeout", result
    assert result.stopped_after_timeout and result.job_status == "STOPPED"
    assert result.driver_started and result.resource_total == 0.0
    assert any("no Ray node registers accelerator_type:H100" in note for note in result.notes)
    assert result.node_id is None and 10 <= result.elapsed_s < 30
    assert result.submission_id is not None
    status, job = http_json(url, f"/api/jobs/{result.submission_id}", timeout=10)
    assert status == 200 and isinstance(job, dict) and job["status"] == "STOPPED"
    assert not job.get("entrypoint_num_gpus")
    # The demand disappears once the raylet drops the dead driver's request (a few seconds).
    deadline = time.monotonic() + 20
    while (left := _probe_leftovers(url, result.submission_id)) and time.monotonic() < deadline:
        time.sleep(1)
    assert left == []


@pytest.mark.slow
def test_probe_job_that_fails_reports_its_last_log_lines(ray_cluster: LocalCluster) -> None:
    result = run_gpu_probe(ray_cluster.dashboard_url, timeout_s=30, python="no-such-python-token=s3cr3t")
    assert result.outcome == "failed", result
    assert result.job_status == "FAILED" and not result.driver_started
    text = "\n".join(result.log_tail)
    assert "not found" in text
    assert "s3cr3t" not in text + (result.error or "")  # redacted like every quoted log line


@pytest.mark.slow
def test_head_check_with_only_a_dashboard_url(ray_cluster: LocalCluster) -> None:
    ok = check_head(None, None, None, ray_cluster.dashboard_url)
    assert (ok.outcome, ok.verdict) == ("ran", "ok")
    [check] = ok.ports
    assert check.reachable and check.via == "dashboard_url" and check.latency_ms is not None
    down = check_head(None, None, None, f"http://127.0.0.2:{closed_port()}")
    assert down.verdict == "port_unreachable"
    assert down.ports[0].error is not None and "refused" in down.ports[0].error


def _client_port(cluster: LocalCluster) -> int:
    args: Any = cluster.procs[0].args
    flag = next(a for a in args if str(a).startswith("--ray-client-server-port="))
    return int(str(flag).split("=", 1)[1])


@pytest.mark.slow
def test_head_check_through_kubernetes_reaches_the_real_head(
    ray_cluster: LocalCluster, tmp_path: Path
) -> None:
    """The recorded KubeRay state, its head endpoint rewired to the local head's address and ports."""
    bundle = scenarios.healthy()
    ports = {"gcs-server": ray_cluster.gcs_port, "dashboard": ray_cluster.dashboard_port}
    ports["client"] = _client_port(ray_cluster)
    endpoints = bundle.find("endpoints", f"{CLUSTER}-head-svc")
    for subset in endpoints["subsets"]:
        for address in subset["addresses"]:
            address["ip"] = ray_cluster.head_ip
        for port in subset["ports"]:
            port["port"] = ports.get(port["name"], port["port"])
    with kube_reader(bundle, tmp_path) as (reader, _api):
        result = check_head(reader, NS, CLUSTER, ray_cluster.dashboard_url)
    assert (result.outcome, result.verdict) == ("ran", "ok"), result
    assert [(a.ip, a.pod, a.ready) for a in result.addresses] == [(ray_cluster.head_ip, HEAD, True)]
    by_name = {c.port_name: c for c in result.ports if c.via == "endpoint"}
    assert {name: c.port for name, c in by_name.items()} == {
        "gcs": ray_cluster.gcs_port,
        "dashboard": ray_cluster.dashboard_port,
        "client": ports["client"],
    }
    assert all(c.reachable and c.pod == HEAD for c in by_name.values())


@pytest.mark.slow
def test_ray_status_text(ray_cluster: LocalCluster) -> None:
    result = ray_status_text(ray_cluster.dashboard_url, timeout_s=10)
    assert result.outcome == "ran", result
    assert result.text is not None and ("Node status" in result.text or "Resources" in result.text)
    assert not result.clipped and result.total_chars == len(result.text)
