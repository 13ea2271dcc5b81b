"""Alertmanager's webhook receiver at ``POST /alertmanager`` (issue 14).

A real Alertmanager's ``webhook_configs`` (bearer token in ``http_config.authorization``) posts to
the bot's HTTP server. A firing alert about a Pending Ray worker gets one diagnosis of its cluster
in ``alertmanager.channel``; Alertmanager's re-sends with the same findings get nothing more; the
resolution gets one line in that thread. A wrong token or a body that is not a notification is
refused and changes nothing.

Kubernetes here is one read: the receiver lists the alert's Pod by name to find its RayCluster; the
diagnosis itself is the recorded scenario's snapshot (``recorded``), not a live read. That Pod is on
the real control plane (tests/support/controlplane.py, one per module): created through
kube-apiserver with the scenario's labels and owner, left Pending by kube-scheduler (no Node fits
it), and read by the bot as the shipped ServiceAccount (deploy/base's RBAC, a TokenRequest token).
Moving this test onto the real plane showed that the receiver's lookup was a GET, which the shipped
ClusterRole (``list`` on pods, ``READ_SCOPES``) does not grant: kube-apiserver refused it with a 403
and no alert was ever mapped to its cluster. The lookup is now a list narrowed to the one name. The
live diagnosis path itself runs on the real plane in tests/integration/test_compound_real_stack.py.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.collect.live import pod_ray_cluster
from bot.config import load_config
from bot.slack.alerts import webhook_receiver
from bot.slack.app import build_app
from bot.slack.bot import Bot
from bot.slack.server import SlackHTTPServer
from tests.slack.test_bot_scenarios import SECRET, recorded, validate_blocks, write_config
from tests.slack.test_startup_checks import serve_env, serve_fails, serve_process
from tests.slack.test_triggers_metered import counted
from tests.support import scenarios
from tests.support.alertmanager import serve_alertmanager
from tests.support.bolt_server import serving
from tests.support.cluster import CLUSTER, NS
from tests.support.controlplane import CONTEXT, ControlPlane
from tests.support.rbac import install_shipped_rbac, service_account_kubeconfig
from tests.support.slack_api import SlackWebAPI, serve_slack
from tests.support.waiting import eventually

TOKEN = "2f1c0d9e8b7a6f5e4d3c2b1a0f9e8d7c"
ALERTS_CHANNEL = "C0ALERTS01"
# The Pod GET reaches a real kube-apiserver; the webhook's own server shares loopback addresses.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("real-ray")]

LABELS = {"alertname": "KubePodNotReady", "severity": "warning", "namespace": NS, "pod": scenarios.PENDING}


@pytest.fixture
def slack() -> Iterator[SlackWebAPI]:
    with serve_slack() as api:
        yield api


@pytest.fixture(scope="module")
def kubeconfig(plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The alert's Pod on the real plane, as the scenario has it (labels, owner, GPU request and
    selector), left Pending by the real scheduler; the shipped ServiceAccount's kubeconfig to read it."""
    from kubernetes import client

    install_shipped_rbac(plane)
    plane.namespace(NS)
    core: Any = client.CoreV1Api(plane.client())
    bundle = scenarios.third_gpu_worker_no_free_gpu()
    (pod,) = [p for p in bundle.kubernetes["pods"] if p["metadata"]["name"] == scenarios.PENDING]
    metadata = {key: pod["metadata"][key] for key in ("name", "labels", "ownerReferences")}
    spec = {key: pod["spec"][key] for key in ("containers", "nodeSelector", "tolerations")}
    core.create_namespaced_pod(NS, body={"metadata": metadata, "spec": spec})

    def refused() -> bool:
        conditions = core.read_namespaced_pod(scenarios.PENDING, NS).status.conditions or []
        return any(c.type == "PodScheduled" and c.reason == "Unschedulable" for c in conditions)

    assert eventually(refused, 60), plane.tail("kube-scheduler")
    return service_account_kubeconfig(plane, tmp_path_factory.mktemp("account") / "kubeconfig")


@pytest.fixture
def bot_server(tmp_path: Path, slack: SlackWebAPI, kubeconfig: Path) -> Iterator[tuple[str, Bot]]:
    bundle = scenarios.third_gpu_worker_no_free_gpu()
    extra = {"alertmanager": {"channel": ALERTS_CHANNEL}}
    path = write_config(tmp_path, kubeconfig, "http://127.0.0.1:9", extra, context=CONTEXT)
    bot = Bot(config=load_config(path), diagnose=recorded(bundle))
    app = build_app(bot, token="xoxb-test", signing_secret=SECRET, api_url=slack.url)
    server = SlackHTTPServer(app, "127.0.0.1", 0, alertmanager=webhook_receiver(bot, app.client, TOKEN))
    try:
        with serving(server) as url:
            yield url, bot
    finally:
        bot.runs.shutdown()


def test_the_shipped_service_account_finds_the_alerts_cluster(kubeconfig: Path) -> None:
    # The receiver's lookup as the service runs it, with a token of the shipped ServiceAccount: a
    # list narrowed to the Pod's name, which the ClusterRole grants (a GET was refused with a 403).
    assert pod_ray_cluster(str(kubeconfig), CONTEXT, NS, scenarios.PENDING) == CLUSTER
    assert pod_ray_cluster(str(kubeconfig), CONTEXT, NS, "no-such-pod") is None


def _post(url: str, body: bytes, token: str | None) -> tuple[int, str]:
    headers = {"Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url + "/alertmanager", data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def _config(url: str, token: str) -> dict[str, Any]:
    return {
        "route": {
            "receiver": "raydiag",
            "group_by": ["alertname", "namespace"],
            "group_wait": "0s",
            "group_interval": "1s",
            # Re-sent every 2 s while firing, as a longer repeat_interval would in production.
            "repeat_interval": "2s",
        },
        "receivers": [
            {
                "name": "raydiag",
                "webhook_configs": [
                    {
                        "url": f"{url}/alertmanager",
                        "send_resolved": True,
                        "http_config": {"authorization": {"credentials": token}},
                    }
                ],
            }
        ],
    }


def _posts(slack: SlackWebAPI) -> list[Any]:
    return [c for c in slack.calls_to("chat.postMessage") if c.params.get("channel") == ALERTS_CHANNEL]


def test_alertmanager_posts_one_diagnosis_per_change_and_a_line_when_resolved(
    bot_server: tuple[str, Bot], slack: SlackWebAPI
) -> None:
    url, bot = bot_server
    with serve_alertmanager(_config(url, TOKEN)) as manager:
        manager.fire(LABELS)
        assert eventually(lambda: len(_posts(slack)) >= 2, 30)
        intro = _posts(slack)[0]
        assert "`gpu-prod`" in intro.params["text"] and scenarios.PENDING in intro.params["text"]
        assert intro.params.get("thread_ts") is None  # a new message; the diagnosis is its thread
        assert eventually(lambda: "RD0101" in json.dumps([p.params for p in _posts(slack)]), 30)
        for post in _posts(slack):
            validate_blocks(post)
        root = slack.messages(ALERTS_CHANNEL)[0]["ts"]
        # Alertmanager re-sends every 2 s: each is diagnosed again, none is posted again.
        assert eventually(lambda: counted(bot).get("alert", 0) >= 2, 30)
        time.sleep(0.5)
        answered = len(_posts(slack))
        assert eventually(lambda: counted(bot).get("alert", 0) >= 4, 30)
        time.sleep(0.5)
        assert len(_posts(slack)) == answered
        assert [p.params.get("thread_ts") for p in _posts(slack)[1:]] == [root] * (answered - 1)

        manager.resolve(LABELS)
        assert eventually(lambda: len(_posts(slack)) == answered + 1, 30)
        line = _posts(slack)[-1]
        assert "resolved" in line.params["text"]
        assert line.params["thread_ts"] == root


def test_a_wrong_token_or_a_body_that_is_no_notification_is_refused(
    bot_server: tuple[str, Bot], slack: SlackWebAPI
) -> None:
    url, bot = bot_server
    body = json.dumps({"version": "4", "alerts": [{"status": "firing", "labels": LABELS}]}).encode()
    assert _post(url, body, None)[0] == 401
    assert _post(url, body, "not-the-token")[0] == 401
    assert _post(url, b"{not json", TOKEN)[0] == 400
    status, said = _post(url, json.dumps({"version": "3"}).encode(), TOKEN)
    assert status == 400 and "version" in said
    # A real Alertmanager with the wrong token: refused, so it keeps retrying; nothing is posted.
    with serve_alertmanager(_config(url, "wrong-token-0123456789")) as manager:
        manager.fire(LABELS)
        assert eventually(lambda: "401" in manager.logs(), 20)
    assert _posts(slack) == [] and counted(bot) == {}
    # The right token: accepted.
    status, said = _post(url, body, TOKEN)
    assert status == 202 and "1 cluster" in said


def test_the_service_serves_the_webhook_only_with_a_token(tmp_path: Path, slack: SlackWebAPI) -> None:
    secret = {"SLACK_BOT_TOKEN": "xoxb-process", "SLACK_SIGNING_SECRET": SECRET}
    assert "too short" in serve_fails(
        serve_env(tmp_path, slack, RAYDIAG_ALERTMANAGER_TOKEN="short", **secret), "--http"
    )
    token_file = tmp_path / "alertmanager-token"
    token_file.write_text(TOKEN + "\n", encoding="utf-8")
    env = serve_env(tmp_path, slack, RAYDIAG_ALERTMANAGER_TOKEN_FILE=str(token_file), **secret)
    body = json.dumps({"version": "4", "alerts": []}).encode()
    with serve_process(tmp_path, env, "--http") as (process, base, log):
        assert eventually(lambda: process.poll() is not None or _answers(base), 60), log.read_text()
        assert _post(base, body, "wrong")[0] == 401
        # No alertmanager.channel in this config: the endpoint says what to set.
        status, said = _post(base, body, TOKEN)
        assert status == 503 and "alertmanager.channel" in said
    without = serve_env(tmp_path, slack, **secret)
    with serve_process(tmp_path, without, "--http") as (process, base, log):
        assert eventually(lambda: process.poll() is not None or _answers(base), 60), log.read_text()
        assert _post(base, body, TOKEN)[0] == 404


def _answers(base: str) -> bool:
    try:
        with urllib.request.urlopen(base + "/healthz", timeout=2) as answer:
            return answer.status == 200
    except OSError:
        return False
