"""The bot as Slack sees it: signed requests in, Web API calls out (to a loopback stand-in).

Kubernetes is the real control plane (tests/support/controlplane.py, one per module): the
configured cluster's kubeconfig holds a token of the shipped ServiceAccount under deploy/base's
RBAC. Most tests diagnose the recorded scenario's snapshot (``recorded``) and read nothing live.
One (``live=True``, the missing toleration) runs the live collector, as the service does, against a
RayCluster applied to kube-apiserver: the KubeRay operator makes its Pods, the stand-in kubelet
(tests/support/kubelet.py) runs the head as a real raylet, and kube-scheduler refuses the GPU worker
for the GPU Nodes' taint in its own FailedScheduling event; the collector, classifier and renderer
all run. The same cause among others is in tests/integration/test_live_kubernetes.py, and the
diagnosis path behind the bot in tests/integration/test_compound_real_stack.py.

``running_bot`` without ``kubeconfig`` still serves the scenario from the loopback API server: other
Slack modules that import it have not moved yet.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from slack_sdk.models.blocks import Block

from bot.classify import classify
from bot.config import Config, load_config
from bot.diagnosis import Diagnosis
from bot.read.snapshot_file import parse_snapshot
from bot.slack.app import build_app
from bot.slack.bot import Bot
from tests.support import scenarios
from tests.support.bolt_server import bolt_over_http
from tests.support.cluster import CLUSTER, NS
from tests.support.controlplane import CONTEXT, ControlPlane
from tests.support.kube_api import ObjectStore, serve
from tests.support.kubelet import KubeletNode, StandInKubelet
from tests.support.rbac import install_shipped_rbac, service_account_kubeconfig
from tests.support.slack_api import (
    BOT_USER_ID,
    SlackWebAPI,
    app_mention_event,
    block_actions_body,
    event_callback_body,
    message_event,
    message_shortcut_body,
    post_signed,
    serve_slack,
    signed_headers,
    slash_command_body,
)
from tests.support.waiting import eventually

# One real control plane for the module; the live test's head is a real raylet on loopback addresses.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("real-ray")]

SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
CHANNEL = "C0MLPLATFORM"
INCIDENTS = "C0INCIDENT1"
ALLOWED = "U0GPUOPS01"
POOL = "raydiag.test/pool"
IMAGE = "rayproject/ray:2.9.3"
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
GPU_LABELS = {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}
GPU_NODE = {"cpu": "8", "memory": "32Gi", "pods": "110", "nvidia.com/gpu": "1"}
NODES = [
    KubeletNode("cpu-node", {"cpu": "16", "memory": "64Gi", "pods": "110"}, labels={POOL: "cpu"}),
    *(
        KubeletNode(f"gpu-{n}", GPU_NODE, labels={**GPU_LABELS, POOL: "gpu"}, taints=(GPU_TAINT,))
        for n in "ab"
    ),
]


@pytest.fixture
def slack() -> Iterator[SlackWebAPI]:
    with serve_slack() as api:
        yield api


@pytest.fixture(scope="module")
def kubeconfig(plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A token of the shipped ServiceAccount on the module's real control plane."""
    install_shipped_rbac(plane)
    plane.namespace(NS)
    return service_account_kubeconfig(plane, tmp_path_factory.mktemp("account") / "kubeconfig")


def _raycluster() -> dict[str, Any]:
    """A head on the CPU pool and one GPU worker whose template tolerates nothing."""
    small = {"cpu": "1", "memory": "1Gi"}
    gpu = {**small, "nvidia.com/gpu": "1"}
    head = {"name": "ray-head", "image": IMAGE, "resources": {"limits": small, "requests": small}}
    worker = {"name": "ray-worker", "image": IMAGE, "resources": {"limits": gpu, "requests": gpu}}
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": CLUSTER, "namespace": NS},
        "spec": {
            "headGroupSpec": {
                "rayStartParams": {},
                "template": {"spec": {"nodeSelector": {POOL: "cpu"}, "containers": [head]}},
            },
            "workerGroupSpecs": [
                {
                    "groupName": "gpu-a100",
                    "replicas": 1,
                    "minReplicas": 1,
                    "maxReplicas": 1,
                    "rayStartParams": {"num-gpus": "1"},
                    "template": {"spec": {"nodeSelector": {POOL: "gpu"}, "containers": [worker]}},
                }
            ],
        },
    }


@pytest.fixture(scope="module")
def untolerated(plane: ControlPlane, kubeconfig: Path) -> Iterator[Path]:
    """The RayCluster of ``_raycluster`` on the real plane, its head Running and its GPU worker
    refused by kube-scheduler for the taint; yields the ServiceAccount's kubeconfig."""
    from kubernetes import client

    core: Any = client.CoreV1Api(plane.client())
    with StandInKubelet(plane, NODES) as kubelet:
        client.CustomObjectsApi(plane.client()).create_namespaced_custom_object(
            "ray.io", "v1", NS, "rayclusters", _raycluster()
        )

        def settled() -> bool:
            pods = core.list_namespaced_pod(NS, label_selector=f"ray.io/cluster={CLUSTER}").items
            kinds = {p.metadata.labels.get("ray.io/node-type"): p for p in pods}
            head, worker = kinds.get("head"), kinds.get("worker")
            if head is None or worker is None or head.status.phase != "Running":
                return False
            events = core.list_namespaced_event(
                NS, field_selector=f"involvedObject.name={worker.metadata.name}"
            )
            return any(
                e.reason == "FailedScheduling" and "untolerated taint" in (e.message or "")
                for e in events.items
            )

        assert eventually(settled, 120, 1), (
            kubelet.errors,
            plane.tail("kube-scheduler"),
            plane.tail("ray-operator"),
        )
        yield kubeconfig


def write_config(
    tmp_path: Path,
    kubeconfig: Path,
    dashboard: str,
    extra: dict[str, Any] | None = None,
    context: str = "loopback",
    **slack_settings: int,
) -> Path:
    """The bot's config for the tests: gpu-prod at ``kubeconfig``'s ``context``, ``extra`` top-level
    keys."""
    path = tmp_path / "raydiag.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "clusters": [
                    {
                        "name": "gpu-prod",
                        "namespace": NS,
                        "raycluster": CLUSTER,
                        "kubeconfig": str(kubeconfig),
                        "context": context,
                        "dashboard_url": dashboard,
                    },
                    {"name": "research", "namespace": "research"},
                ],
                "collection": {"deadline_s": 10, "call_timeout_s": 2},
                "probes": {"allowed_users": [ALLOWED]},
                "slack": {
                    "incident_channels": [INCIDENTS],
                    "languages": {"channels": {"C0ZHTEAM01": "zh"}},
                    **slack_settings,
                },
                **(extra or {}),
            }
        ),
        encoding="utf-8",
    )
    return path


def recorded(bundle: Any) -> Any:
    """Diagnose the scenario as recorded (both layers), without a Ray cluster behind it."""
    snapshot = parse_snapshot(bundle.to_json())
    return lambda cluster, namespace: classify(snapshot)


@contextlib.contextmanager
def running_bot(
    tmp_path: Path,
    slack: SlackWebAPI,
    bundle: Any,
    diagnose: Any = None,
    live: bool = False,
    kubeconfig: Path | None = None,
    **slack_settings: int,
) -> Iterator[tuple[str, Bot]]:
    """The bot over HTTP; Kubernetes at ``kubeconfig`` (the real plane's), or without one the
    loopback API server serving ``bundle``."""
    with contextlib.ExitStack() as stack:
        if kubeconfig is None:
            kube = stack.enter_context(serve(ObjectStore.from_bundle(bundle)))
            path, context = kube.kubeconfig(tmp_path / "kubeconfig"), "loopback"
        else:
            path, context = kubeconfig, CONTEXT
        config = load_config(
            write_config(tmp_path, path, "http://127.0.0.1:9", context=context, **slack_settings)
        )
        # None: the live collector against that API server, as the service runs it.
        chosen = diagnose or (None if live else recorded(bundle))
        bot = Bot(config=config, diagnose=chosen)
        app = build_app(bot, token="xoxb-test", signing_secret=SECRET, api_url=slack.url)
        with bolt_over_http(bot, app) as url:
            yield url, bot


def validate_blocks(call: Any) -> None:
    blocks = call.params.get("blocks") or []
    assert len(blocks) <= 50
    for raw in blocks:
        block = Block.parse(raw)
        assert block is not None
        block.validate_json()


def command(url: str, slack: SlackWebAPI, text: str, user: str = "U0ENGINEER", channel: str = CHANNEL) -> Any:
    body = slash_command_body(
        text=text,
        user_id=user,
        channel_id=channel,
        response_url=slack.response_url(text.replace(" ", "-") or "empty"),
    )
    return post_signed(url, body, SECRET)


def test_forged_and_stale_signatures_are_refused(
    tmp_path: Path, slack: SlackWebAPI, kubeconfig: Path
) -> None:
    with running_bot(tmp_path, slack, scenarios.healthy(), kubeconfig=kubeconfig) as (url, _):
        body = slash_command_body(text="gpu-prod")
        assert post_signed(url, body, "not-the-secret").status == 401
        stale = int(time.time()) - 6 * 60
        assert post_signed(url, body, SECRET, timestamp=stale).status == 401
        assert slack.calls_to("chat.postMessage") == []


def test_help_and_unknown_cluster_are_ephemeral_and_post_nothing(
    tmp_path: Path, slack: SlackWebAPI, kubeconfig: Path
) -> None:
    with running_bot(tmp_path, slack, scenarios.healthy(), kubeconfig=kubeconfig) as (url, _):
        for text in ("", "help", "no-such-cluster", "gpu-prod Bad_Namespace!", "a b c d"):
            answer = command(url, slack, text)
            assert answer.status == 200
            reply = answer.json()
            assert reply["response_type"] == "ephemeral"
            shown = json.dumps(reply["blocks"])
            assert "`gpu-prod`" in shown and "`research`" in shown
        assert "no-such-cluster" in json.dumps(command(url, slack, "no-such-cluster").json())
        time.sleep(0.3)
        assert slack.calls_to("chat.postMessage") == []


def test_diagnosis_root_in_channel_details_in_thread(
    tmp_path: Path, slack: SlackWebAPI, untolerated: Path
) -> None:
    # Live collection from the real plane as the ServiceAccount; the dead dashboard is one more finding.
    bundle = scenarios.gpu_worker_without_toleration()
    with running_bot(tmp_path, slack, bundle, live=True, kubeconfig=untolerated) as (url, _):
        answer = command(url, slack, "gpu-prod")
        assert answer.status == 200 and answer.json()["response_type"] == "ephemeral"
        posts = slack.wait_for("chat.postMessage", count=3, timeout=30)
        time.sleep(0.5)
        posts = slack.calls_to("chat.postMessage")
        root, replies = posts[0], posts[1:]
        assert root.params["channel"] == CHANNEL and not root.params.get("thread_ts")
        assert "Kubernetes layer" in root.params["text"] and "cause 2" in root.params["text"]
        assert replies and all(r.params["thread_ts"] == root_ts(slack) for r in replies)
        assert any(
            "k8s-untolerated-taint" in json.dumps(r.params) or "RD0201" in r.params["text"] for r in replies
        )
        for call in posts:
            validate_blocks(call)


def root_ts(slack: SlackWebAPI) -> str:
    first = slack.calls_to("chat.postMessage")[0]
    return str(first.params.get("_ts") or slack.messages(CHANNEL)[0]["ts"])


def test_healthy_cluster_gets_one_quiet_message(tmp_path: Path, slack: SlackWebAPI, kubeconfig: Path) -> None:
    with running_bot(tmp_path, slack, scenarios.healthy(), kubeconfig=kubeconfig) as (url, _):
        command(url, slack, "gpu-prod")
        slack.wait_for("chat.postMessage", count=1, timeout=30)
        time.sleep(1.0)
        assert len(slack.calls_to("chat.postMessage")) == 1


def test_same_cluster_twice_at_once_runs_one_diagnosis(
    tmp_path: Path, slack: SlackWebAPI, kubeconfig: Path
) -> None:
    started = threading.Event()
    release = threading.Event()
    runs: list[str] = []

    def slow_diagnosis(cluster: Any, namespace: str) -> Diagnosis:
        runs.append(cluster.name)
        started.set()
        release.wait(10)
        return Diagnosis(cluster=cluster.name)

    with running_bot(
        tmp_path, slack, scenarios.healthy(), diagnose=slow_diagnosis, kubeconfig=kubeconfig
    ) as (url, _):
        first = command(url, slack, "gpu-prod", user="U0ALICE001")
        assert started.wait(10)
        second = command(url, slack, "gpu-prod", user="U0BOB00001")
        # Both acknowledged while the diagnosis is still running: the work is not in the ack path.
        assert first.status == second.status == 200
        release.set()
        slack.wait_for("chat.postMessage", count=1, timeout=20)
        slack.wait_for("response_url", count=1, timeout=20)
        time.sleep(0.5)
    assert runs == ["gpu-prod"]
    assert len(slack.calls_to("chat.postMessage")) == 1
    assert "already running" in json.dumps(slack.calls_to("response_url")[0].params)


def test_a_queued_diagnosis_says_so_and_a_full_queue_says_busy(
    tmp_path: Path, slack: SlackWebAPI, kubeconfig: Path
) -> None:
    release = threading.Event()

    def slow_diagnosis(cluster: Any, namespace: str) -> Diagnosis:
        release.wait(20)
        return Diagnosis(cluster=cluster.name, namespace=namespace)

    # One worker and room for one more: the first runs, the second waits, the third is refused.
    with running_bot(
        tmp_path,
        slack,
        scenarios.healthy(),
        diagnose=slow_diagnosis,
        workers=1,
        queue=1,
        kubeconfig=kubeconfig,
    ) as (
        url,
        bot,
    ):
        command(url, slack, "gpu-prod team-a")
        _until_in_flight(bot, 1)
        command(url, slack, "gpu-prod team-b")
        _until_in_flight(bot, 2)
        command(url, slack, "gpu-prod team-c")
        said = [json.dumps(c.params) for c in slack.wait_for("response_url", count=2, timeout=20)]
        assert any("queued behind 1 other" in text for text in said)
        assert any("busy with other diagnoses" in text for text in said)
        release.set()
        slack.wait_for("chat.postMessage", count=2, timeout=20)
    # Nothing was lost: the queued one was answered as well as the first.
    assert len(slack.calls_to("chat.postMessage")) == 2


def _until_in_flight(bot: Bot, count: int) -> None:
    deadline = time.monotonic() + 10
    while bot.runs.in_flight() < count:
        assert time.monotonic() < deadline, "the diagnosis was never submitted"
        time.sleep(0.02)


def test_a_burst_of_commands_and_presses_loses_no_answer(
    tmp_path: Path, slack: SlackWebAPI, kubeconfig: Path
) -> None:
    # 30 commands (two clusters, so most join a shared run) and 6 presses at once: each one ends
    # in a thread, a note, or a probe result. Timing is the load benchmark's business.
    from concurrent.futures import ThreadPoolExecutor

    with running_bot(tmp_path, slack, scenarios.gpu_worker_without_toleration(), kubeconfig=kubeconfig) as (
        url,
        _,
    ):
        commands = [f"C0BURST{i:04d}" for i in range(30)]
        presses = [f"C0PRESS{i:04d}" for i in range(6)]

        def send_command(index: int) -> int:
            body = slash_command_body(
                text="gpu-prod" if index % 2 else "research",
                user_id=f"U0BURST{index:03d}",
                channel_id=commands[index],
                response_url=slack.response_url(commands[index]),
            )
            return post_signed(url, body, SECRET).status

        def send_press(index: int) -> int:
            action = ("raydiag_rerun", "raydiag_mute")[index % 2]
            body = block_actions_body(
                action,
                value=json.dumps({"cluster": "gpu-prod"}),
                user_id=f"U0PRESS{index:03d}",
                channel_id=presses[index],
                message_ts=f"1733000000.{index:06d}",
            )
            return post_signed(url, body, SECRET).status

        with ThreadPoolExecutor(max_workers=36) as pool:
            statuses = list(pool.map(send_command, range(30))) + list(pool.map(send_press, range(6)))
        assert statuses == [200] * 36

        def answered() -> set[str]:
            found = set()
            for call in slack.calls:
                if call.method == "response_url":
                    found.add(call.path.rsplit("/", 1)[-1])
                elif call.method in ("chat.postMessage", "chat.postEphemeral"):
                    found.add(str(call.params.get("channel")))
            return found

        deadline = time.monotonic() + 60
        while not set(commands + presses) <= answered() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert set(commands + presses) - answered() == set()


def test_a_diagnosis_that_crashes_is_reported_and_the_bot_keeps_answering(
    tmp_path: Path, slack: SlackWebAPI, kubeconfig: Path
) -> None:
    snapshot = parse_snapshot(scenarios.healthy().to_json())

    def flaky(cluster: Any, namespace: str) -> Diagnosis:
        if cluster.name == "research":
            raise KeyError("a detector bug")
        return classify(snapshot)

    with running_bot(tmp_path, slack, scenarios.healthy(), diagnose=flaky, kubeconfig=kubeconfig) as (url, _):
        command(url, slack, "research", channel="C0CRASH001")
        [told] = slack.wait_for("response_url", count=1, timeout=20)
        assert "research" in told.params["text"] and "a detector bug" in told.params["text"]
        # The same listener, right after: the next command is diagnosed and posted as usual.
        command(url, slack, "gpu-prod")
        [posted] = slack.wait_for("chat.postMessage", count=1, timeout=20)
        assert posted.params["channel"] == CHANNEL


def test_slack_server_errors_are_retried(tmp_path: Path, slack: SlackWebAPI, kubeconfig: Path) -> None:
    slack.fail("chat.postMessage", status=500, times=1)
    with running_bot(tmp_path, slack, scenarios.healthy(), kubeconfig=kubeconfig) as (url, _):
        command(url, slack, "gpu-prod")
        posts = slack.wait_for("chat.postMessage", count=2, timeout=30)
    assert posts[0].status == 500 and posts[1].status == 200


def test_rate_limited_post_is_retried(tmp_path: Path, slack: SlackWebAPI, kubeconfig: Path) -> None:
    slack.fail("chat.postMessage", status=429, retry_after=1, times=1)
    with running_bot(tmp_path, slack, scenarios.healthy(), kubeconfig=kubeconfig) as (url, _):
        command(url, slack, "gpu-prod")
        posts = slack.wait_for("chat.postMessage", count=2, timeout=30)
    assert posts[0].status == 429 and posts[1].status == 200


@pytest.mark.parametrize("refusal", ["invalid_blocks", "msg_too_long"])
def test_refused_blocks_fall_back_to_plain_text(
    tmp_path: Path, slack: SlackWebAPI, kubeconfig: Path, refusal: str
) -> None:
    slack.fail("chat.postMessage", error=refusal, status=200, times=1)
    with running_bot(tmp_path, slack, scenarios.healthy(), kubeconfig=kubeconfig) as (url, _):
        command(url, slack, "gpu-prod")
        posts = slack.wait_for("chat.postMessage", count=2, timeout=30)
    assert "blocks" not in posts[1].params or not posts[1].params["blocks"]
    assert "Healthy" in posts[1].params["text"] or "No scheduling problem" in posts[1].params["text"]


def _root_blocks(slack: SlackWebAPI) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = slack.calls_to("chat.postMessage")[0].params["blocks"]
    return blocks


def press(url: str, action: str, value: str, user: str, blocks: list[dict[str, Any]], ts: str) -> Any:
    body = block_actions_body(
        action, value=value, user_id=user, channel_id=CHANNEL, message_ts=ts, message_blocks=blocks
    )
    return post_signed(url, body, SECRET)


def test_buttons_on_someone_elses_message_are_refused(
    tmp_path: Path, slack: SlackWebAPI, kubeconfig: Path
) -> None:
    # A signed payload whose button sits on a person's message, not one raydiag posted.
    with running_bot(tmp_path, slack, scenarios.healthy(), kubeconfig=kubeconfig) as (url, bot):
        value = json.dumps({"cluster": "gpu-prod"})
        for action in ("raydiag_rerun", "raydiag_mute", "raydiag_head_check"):
            body = block_actions_body(
                action,
                value=value,
                user_id="U0MALLORY1",
                channel_id=CHANNEL,
                message_ts="1733000000.000777",
                message_author="U0SOMEONE1",
            )
            assert post_signed(url, body, SECRET).status == 200
        refusals = slack.wait_for("chat.postEphemeral", count=3, timeout=20)
        time.sleep(0.5)
        assert all("only work on messages raydiag posted" in r.params["text"] for r in refusals)
        assert slack.calls_to("chat.postMessage") == []
        assert not bot.mutes.muted("gpu-prod")


def test_buttons_rerun_and_mute_in_the_thread(tmp_path: Path, slack: SlackWebAPI, kubeconfig: Path) -> None:
    with running_bot(tmp_path, slack, scenarios.healthy(), kubeconfig=kubeconfig) as (url, bot):
        command(url, slack, "gpu-prod")
        slack.wait_for("chat.postMessage", count=1, timeout=30)
        blocks, ts = _root_blocks(slack), slack.messages(CHANNEL)[0]["ts"]
        value = json.dumps({"cluster": "gpu-prod"})
        assert press(url, "raydiag_mute", value, "U0ENGINEER", blocks, ts).status == 200
        assert press(url, "raydiag_rerun", value, "U0ENGINEER", blocks, ts).status == 200
        posts = slack.wait_for("chat.postMessage", count=4, timeout=30)
        threaded = [p for p in posts[1:] if p.params.get("thread_ts") == ts]
        assert len(threaded) >= 3
        said = json.dumps([p.params for p in threaded])
        assert "muted" in said and "<@U0ENGINEER>" in said and "Re-run" in said
        assert bot.mutes.muted("gpu-prod")


def test_crafted_button_for_unknown_cluster_is_refused(
    tmp_path: Path, slack: SlackWebAPI, kubeconfig: Path
) -> None:
    with running_bot(tmp_path, slack, scenarios.healthy(), kubeconfig=kubeconfig) as (url, bot):
        value = json.dumps({"cluster": "../../etc/passwd"})
        assert press(url, "raydiag_mute", value, "U0MALLORY1", [], "1733000000.000100").status == 200
        refused = slack.wait_for("chat.postEphemeral", count=1, timeout=10)
        assert "not configured" in refused[0].params["text"]
        assert slack.calls_to("chat.postMessage") == []
        assert not bot.mutes.muted("../../etc/passwd")


def test_mention_in_a_thread_is_answered_in_that_thread_once(
    tmp_path: Path, slack: SlackWebAPI, kubeconfig: Path
) -> None:
    with running_bot(tmp_path, slack, scenarios.gpu_worker_without_toleration(), kubeconfig=kubeconfig) as (
        url,
        _,
    ):
        event = app_mention_event(
            text=f"<@{BOT_USER_ID}> gpu-prod is stuck again",
            channel=CHANNEL,
            ts="1733000100.000200",
            thread_ts="1733000000.000100",
        )
        body = event_callback_body(event, event_id="Ev0MENTION1")
        assert post_signed(url, body, SECRET).status == 200
        # Slack's retry of the same event: acknowledged, not answered again.
        headers = signed_headers(body, SECRET)
        headers.update({"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"})
        from tests.support.slack_api import post as raw_post

        assert raw_post(url, body, headers).status == 200
        slack.wait_for("chat.postMessage", count=2, timeout=30)
        time.sleep(1.5)
        posts = slack.calls_to("chat.postMessage")
    roots = [p for p in posts if p.params.get("thread_ts") != "1733000000.000100"]
    assert roots == []
    summaries = [p for p in posts if "Kubernetes layer" in p.params["text"]]
    assert len(summaries) == 1


def test_incident_channel_paste_gets_an_explanation(
    tmp_path: Path, slack: SlackWebAPI, kubeconfig: Path
) -> None:
    paste = (
        Path(__file__).resolve().parents[1] / "cases" / "ray-gpu-driver-error" / "fires" / "raylet-nvml.txt"
    ).read_text()
    with running_bot(tmp_path, slack, scenarios.healthy(), kubeconfig=kubeconfig) as (url, _):
        quiet = event_callback_body(
            message_event(text="lunch anyone?", channel=INCIDENTS, ts="1733000200.000100"),
            event_id="Ev0CHAT0001",
        )
        post_signed(url, quiet, SECRET)
        own = event_callback_body(
            message_event(text=paste, channel=INCIDENTS, bot_id="BBOT123", user=BOT_USER_ID),
            event_id="Ev0OWN00001",
        )
        post_signed(url, own, SECRET)
        event = message_event(text=paste, channel=INCIDENTS, ts="1733000300.000100")
        post_signed(url, event_callback_body(event, event_id="Ev0PASTE001"), SECRET)
        posts = slack.wait_for("chat.postMessage", count=2, timeout=30)
        time.sleep(1.0)
        posts = slack.calls_to("chat.postMessage")
    assert all(p.params.get("thread_ts") == "1733000300.000100" for p in posts)
    assert "RD0404" in json.dumps([p.params for p in posts])


def test_message_shortcut_explains_the_message(tmp_path: Path, slack: SlackWebAPI, kubeconfig: Path) -> None:
    text = "WARNING resource_demand_scheduler.py -- could not find a node type to satisfy the request: [{'GPU': 16.0}]"
    with running_bot(tmp_path, slack, scenarios.healthy(), kubeconfig=kubeconfig) as (url, _):
        body = message_shortcut_body(
            callback_id="raydiag_diagnose_message",
            message_text=text,
            channel_id=CHANNEL,
            message_ts="1733000400.000100",
        )
        assert post_signed(url, body, SECRET).status == 200
        posts = slack.wait_for("chat.postMessage", count=2, timeout=30)
    assert all(p.params.get("thread_ts") == "1733000400.000100" for p in posts)
    assert "cause 6" in posts[0].params["text"]


def test_chinese_channel_gets_chinese(tmp_path: Path, slack: SlackWebAPI, kubeconfig: Path) -> None:
    with running_bot(tmp_path, slack, scenarios.gpu_worker_without_toleration(), kubeconfig=kubeconfig) as (
        url,
        _,
    ):
        command(url, slack, "gpu-prod", channel="C0ZHTEAM01")
        posts = slack.wait_for("chat.postMessage", count=2, timeout=30)
    assert "原因 2" in posts[0].params["text"]


def test_example_config_and_bad_config(tmp_path: Path) -> None:
    example = Path(__file__).resolve().parents[2] / "deploy" / "config.example.yaml"
    assert isinstance(load_config(example), Config)
    bad = tmp_path / "bad.yaml"
    bad.write_text("clusters:\n  - name: ok\n  - name: Not_Valid\nprobes:\n  allowed_users: [alice]\n")
    from bot.config import ConfigError

    with pytest.raises(ConfigError, match=r"clusters\.1\.name"):
        load_config(bad)
