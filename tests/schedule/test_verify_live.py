"""The scheduled re-verification against a real Ray cluster and the loopback Kubernetes API.

Three raylets run for the module: a CPU head on 127.0.0.2, an A100 worker on .3 and a T4 worker on
.4 (``bot.demo.local_ray``); the Kubernetes side is the demo's recorded KubeRay state, whose Pod
IPs are those raylets, served to the real collector. Time is a hand-moved clock: each ``tick`` is
what the leader's minute job does, with the store's clock set first, so a test spans hours of
schedule in seconds. Every probe is a real Ray job submitted to the real dashboard.

Loopback API server: the recorded state changes between ticks of the hand-moved clock (a new
device-plugin version), which the test writes straight into the store.
"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot import cli
from bot.config import Config
from bot.deliver.slack_poster import web_client
from bot.demo import kuberay_state as state
from bot.demo.local_ray import LocalCluster
from bot.schedule.verify import Verifier, VerifyOutcome
from bot.slack.bot import Bot
from bot.snapshot.data import load
from bot.store import PostState, Store, open_store
from tests.schedule.conftest import valid_message
from tests.store.manual_clock import ManualClock
from tests.support.bot_process import stop
from tests.support.cluster import Bundle
from tests.support.demo_states import base_state, healthy_state, node, pod
from tests.support.kube_api import KubeAPI, ObjectStore, serve
from tests.support.probe_cluster import probe_cluster, wait_for_demands
from tests.support.slack_api import Call, SlackWebAPI, serve_slack

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("real-ray")]

CHANNEL = "C0MLPLATFORM"
START = datetime(2026, 12, 1, 8, 0, tzinfo=UTC)
# How long a probe's task may take once its driver connected (a held pool waits this long: the
# task's worker process starts in it too); the driver has START_TIMEOUT_S to start and connect,
# which three drivers at once on a busy 2-core machine need.
PROBE_TIMEOUT_S = 15.0
START_TIMEOUT_S = 90.0
OPERATOR = "kuberay-operator-6d9f8b7c5d-x2x9q"
A100_NODE = "gpu-a100-1"
DRIVER = {
    "nvidia.com/cuda.driver.major": "550",
    "nvidia.com/cuda.driver.minor": "54",
    "nvidia.com/cuda.driver.rev": "15",
}

# Holds the A100 with an ordinary (not detached) actor until this process ends.
HOLDER = """
import sys, time, ray


class Holder:
    def ready(self):
        return 1


ray.init(address=sys.argv[1], _node_ip_address=sys.argv[2], log_to_driver=False)
actor = ray.remote(num_gpus=1, resources={"accelerator_type:A100": 1})(Holder).remote()
ray.get(actor.ready.remote(), timeout=120)
print("READY", flush=True)
time.sleep(3600)
"""


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[LocalCluster]:
    with probe_cluster() as cluster:
        yield cluster


@pytest.fixture(autouse=True)
def no_demand_left(ray_cluster: LocalCluster) -> None:
    """Each test starts from a cluster whose Ray reports nothing waiting: the probes of the test
    before leave their demands in Ray's report for a few seconds, and a diagnosis that read them
    would find GPUs held by other work (cause 5)."""
    wait_for_demands(ray_cluster.dashboard_url, lambda found: not found)


def operator_pod(image: str) -> dict[str, Any]:
    """The KubeRay operator's Pod as its Helm chart labels it."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": OPERATOR,
            "namespace": "kuberay-system",
            "labels": {
                "app.kubernetes.io/name": "kuberay-operator",
                "app.kubernetes.io/instance": "kuberay-operator",
                "app.kubernetes.io/component": "kuberay-operator",
            },
            "creationTimestamp": "2026-11-20T10:00:00Z",
        },
        "spec": {"nodeName": "cpu-node-1", "containers": [{"name": "kuberay-operator", "image": image}]},
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True"}],
            "containerStatuses": [{"name": "kuberay-operator", "ready": True, "image": image}],
        },
    }


def cluster_state() -> dict[str, Any]:
    raw = healthy_state()
    for name in (A100_NODE, "gpu-t4-1"):
        node(raw, name)["metadata"]["labels"].update(DRIVER)
    raw["kubernetes"]["pods"]["items"].append(operator_pod("quay.io/kuberay/operator:v1.2.2"))
    return raw


def cluster_entry(ray: LocalCluster, kubeconfig: Path) -> dict[str, str]:
    """The configured cluster: the recorded RayCluster on the loopback API, Ray's real dashboard."""
    return {
        "name": "gpu-prod",
        "namespace": state.NAMESPACE,
        "raycluster": state.CLUSTER,
        "kubeconfig": str(kubeconfig),
        "context": "loopback",
        "dashboard_url": ray.dashboard_url,
    }


class Leader:
    """A leader replica's re-verification: its bot, store, Slack stand-in, clock and cluster."""

    def __init__(
        self, api: KubeAPI, objects: ObjectStore, slack: SlackWebAPI, tmp: Path, config: Config
    ) -> None:
        self.api, self.objects, self.slack = api, objects, slack
        self.clock = ManualClock(START)
        self.store: Store = open_store(f"sqlite:///{tmp}/state.db", clock=self.clock)
        self.bot = Bot(config=config, store=self.store)
        self.verifier = Verifier(self.bot, self.store, web_client("xoxb-test", slack.url), probe_poll_s=0.3)
        self.bot.diagnoser.watch(self.verifier.observe)

    def tick(self, at: datetime) -> VerifyOutcome:
        self.clock.set(at)
        [outcome] = self.verifier.tick()
        return outcome

    def posts(self) -> list[Call]:
        return self.slack.calls_to("chat.postMessage")

    def series(self, name: str) -> dict[tuple[str, ...], float]:
        found = {}
        for family in self.bot.metrics.registry.collect():
            for sample in family.samples:
                if sample.name == name:
                    found[tuple(sample.labels[k] for k in sorted(sample.labels))] = sample.value
        return found

    def close(self) -> None:
        self.bot.runs.shutdown()
        self.store.close()


@contextlib.contextmanager
def leader(ray: LocalCluster, tmp: Path, **verify: Any) -> Iterator[Leader]:
    objects = ObjectStore.from_bundle(Bundle.from_state(cluster_state()))
    with serve(objects) as api, serve_slack() as slack:
        kubeconfig = api.kubeconfig(tmp / "kubeconfig")
        config = load(
            Config,
            {
                "clusters": [cluster_entry(ray, kubeconfig)],
                "verify": {
                    "channel": CHANNEL,
                    "probe_timeout_s": PROBE_TIMEOUT_S,
                    "probe_start_timeout_s": START_TIMEOUT_S,
                    **verify,
                },
            },
        )
        made = Leader(api, objects, slack, tmp, config)
        try:
            yield made
        finally:
            made.close()


@contextlib.contextmanager
def a100_held(ray: LocalCluster) -> Iterator[None]:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, ray.gcs_address, ray.head_ip],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=ray.env,
    )
    try:
        assert holder.stdout is not None
        assert b"READY" in holder.stdout.readline(), "the holder actor did not start"
        yield
    finally:
        stop(holder)


def verdicts(outcome: VerifyOutcome) -> dict[str, str]:
    return {result.pool: result.verdict for result in outcome.probes}


def text_of(call: Call) -> str:
    return json.dumps(call.params.get("blocks"), ensure_ascii=False)


def test_each_pool_is_probed_on_its_interval_and_only_changes_are_posted(
    ray_cluster: LocalCluster, tmp_path: Path
) -> None:
    with leader(ray_cluster, tmp_path, probe_minutes=60) as live:
        first = live.tick(START)
        # One pool per way of asking for a GPU: any, and each accelerator type Ray registers.
        assert first.action == "probed" and verdicts(first) == {"any": "ran", "A100": "ran", "T4": "ran"}
        a100 = next(r for r in first.probes if r.pool == "A100")
        assert a100.node == "127.0.0.3" and a100.detail["cuda_visible_devices"] == "0"
        assert live.posts() == []  # a healthy first run only remembers
        assert live.series("raydiag_gpu_probe_result")[("gpu-prod", "A100", "ran")] == 1.0
        assert 0 < live.series("raydiag_gpu_probe_duration_seconds")[("gpu-prod", "A100")] == a100.elapsed_s
        assert live.series("raydiag_gpu_probe_timestamp_seconds")[("gpu-prod", "A100")] == START.timestamp()

        # Minutes later nothing is due: no probe runs, nothing is read.
        assert live.tick(START + timedelta(minutes=59)).action == "quiet"

        with a100_held(ray_cluster):
            held = live.tick(START + timedelta(hours=1))
        assert verdicts(held) == {"any": "ran", "A100": "pending", "T4": "ran"}
        [pending] = live.posts()
        valid_message(pending)
        assert pending.params["channel"] == CHANNEL and not pending.params.get("thread_ts")
        assert "accelerator_type:A100" in text_of(pending) and "ran → *pending*" in text_of(pending)
        results = live.series("raydiag_gpu_probe_result")
        assert results[("gpu-prod", "A100", "pending")] == 1.0 and ("gpu-prod", "A100", "ran") not in results

        # The holder is gone: the A100 takes work again, and that is news too.
        freed = live.tick(START + timedelta(hours=2))
        assert verdicts(freed)["A100"] == "ran"
        assert len(live.posts()) == 2 and "pending → *ran*" in text_of(live.posts()[-1])

        # The node under the A100 raylet is relabelled T4: Ray still places the probe there.
        relabelled = node(cluster_state(), A100_NODE)
        relabelled["metadata"]["labels"]["nvidia.com/gpu.product"] = "Tesla-T4"
        live.objects.add(relabelled)
        wrong = live.tick(START + timedelta(hours=3))
        a100 = next(r for r in wrong.probes if r.pool == "A100")
        assert a100.verdict == "wrong_node" and a100.detail["kubernetes_model"] == "T4"
        assert verdicts(wrong)["any"] == "ran"  # a plain GPU task asks for no model
        assert len(live.posts()) == 3 and "wrong_node" in text_of(live.posts()[-1])


def test_a_new_device_plugin_version_runs_the_verification_order_once_in_the_clusters_thread(
    ray_cluster: LocalCluster, tmp_path: Path
) -> None:
    with leader(ray_cluster, tmp_path, check_minutes=15) as live:
        # The cluster's latest health post in the channel is where the verification goes.
        schedule = live.store.add_schedule(
            channel=CHANNEL,
            cluster="gpu-prod",
            namespace=state.NAMESPACE,
            cron="0 9 * * 1-5",
            timezone="UTC",
            mode="changes",
            created_by="U0GPUOPS01",
            now=START,
        )
        live.store.save_post_state(
            PostState(schedule.id, channel=CHANNEL, message_ts="1764576000.000100", posted_at=START), START
        )

        baseline = live.tick(START)
        assert (baseline.action, baseline.reason) == ("remembered", "first run")
        assert baseline.probes == () and live.posts() == []
        assert live.tick(START + timedelta(minutes=10)).action == "quiet"  # not due yet
        assert live.tick(START + timedelta(minutes=15)).reason == "versions unchanged"

        # The DaemonSet rolled out a new device plugin on both GPU nodes.
        for plugin in cluster_state()["kubernetes"]["device_plugin_pods"]["items"]:
            plugin["spec"]["containers"][0]["image"] = "nvcr.io/nvidia/k8s-device-plugin:v0.17.1"
            live.objects.add(plugin)
        upgraded = live.tick(START + timedelta(minutes=30))
        assert upgraded.action == "upgrade" and upgraded.reason == "passed"
        assert [(u.part, u.before, u.after) for u in upgraded.upgrades] == [
            ("device_plugin", "v0.17.0", "v0.17.1")
        ]
        assert [(s.step, s.status) for s in upgraded.steps] == [
            ("pods_ready", "ok"),
            ("ray_nodes", "ok"),
            ("gpu_probe", "ok"),
            ("gpu_type_probe", "ok"),
            ("serve", "skipped"),  # Serve runs no application on this cluster
            ("holders", "ok"),
        ]
        assert verdicts(upgraded) == {"any": "ran", "A100": "ran", "T4": "ran"}
        [told] = live.posts()
        valid_message(told)
        assert told.params["thread_ts"] == "1764576000.000100" and told.params["channel"] == CHANNEL
        assert "`v0.17.0` → `v0.17.1`" in text_of(told)
        assert live.series("raydiag_upgrade_verifications_total")[("gpu-prod", "passed")] == 1.0

        # Posted once: the next checks see the same versions.
        assert live.tick(START + timedelta(minutes=45)).reason == "versions unchanged"
        assert len(live.posts()) == 1

        # The operator is upgraded, and a scheduled diagnosis (the metrics refresh) sees it first:
        # the next tick verifies at once, before its own check is due.
        live.objects.add(operator_pod("quay.io/kuberay/operator:v1.3.0"))
        cluster = live.bot.config.clusters[0]
        live.bot.diagnoser.run(cluster, cluster.namespace, "refresh")
        # Since the upgrade, a CPU worker is Ready but never joined Ray.
        live.objects.add(pod(base_state(), state.LOST_POD))
        noticed = live.tick(START + timedelta(minutes=47))
        assert noticed.action == "upgrade" and noticed.reason == "failed"
        assert [(u.part, u.after) for u in noticed.upgrades] == [("kuberay_operator", "v1.3.0")]
        steps = {s.step: (s.status, dict(s.detail)) for s in noticed.steps}
        assert steps["pods_ready"][0] == "ok"
        assert steps["ray_nodes"] == (
            "failed",
            {"alive": "3", "registered": "2", "expected": "4", "given": "2"},
        )
        assert verdicts(noticed) == {"any": "ran", "A100": "ran", "T4": "ran"}
        second = live.posts()[-1]
        valid_message(second)
        assert second.params["thread_ts"] == "1764576000.000100"
        assert "`ray status` shows the nodes and GPUs (causes 4, 8)" in text_of(second)


def test_raydiag_verify_runs_the_order_from_a_terminal(ray_cluster: LocalCluster, tmp_path: Path) -> None:
    objects = ObjectStore.from_bundle(Bundle.from_state(cluster_state()))
    with serve(objects) as api:
        kubeconfig = api.kubeconfig(tmp_path / "kubeconfig")
        settings = tmp_path / "raydiag.yaml"
        settings.write_text(
            yaml.safe_dump({"clusters": [cluster_entry(ray_cluster, kubeconfig)]}),
            encoding="utf-8",
        )
        args = [
            "verify",
            "--cluster",
            "gpu-prod",
            "--config",
            str(settings),
            "--timeout",
            str(PROBE_TIMEOUT_S),
            "--start-timeout",
            str(START_TIMEOUT_S),
        ]
        out = io.StringIO()
        code = cli.run(args, io.StringIO(), out)
        text = out.getvalue()
        assert code == cli.EXIT_OK, text
        assert text.startswith("raydiag verify gpu-prod: passed")
        assert "1. [ok  ] Pods scheduled and Ready: ok (ready 2, workers 2, head True)" in text
        assert "accelerator_type:A100: ran @ 127.0.0.3" in text and "device plugin v0.17.0" in text

        # A Ready worker that never joined Ray: the second step fails, and so does the command.
        objects.add(pod(base_state(), state.LOST_POD))
        wait_for_demands(ray_cluster.dashboard_url, lambda found: not found)  # the first run's probes
        out = io.StringIO()
        assert cli.run([*args, "--format", "json"], io.StringIO(), out) == cli.EXIT_FINDINGS
        report = json.loads(out.getvalue())
        assert report["passed"] is False and report["versions"]["kuberay_operator"] == "v1.2.2"
        assert {p["pool"]: p["verdict"] for p in report["probes"]} == {
            "any": "ran",
            "A100": "ran",
            "T4": "ran",
        }
        assert [s["status"] for s in report["steps"]] == ["ok", "failed", "ok", "ok", "skipped", "ok"]
