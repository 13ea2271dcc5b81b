"""Probe buttons against a real local Ray cluster (127.0.0.2 head, .3 A100, .4 T4)."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.config import load_config
from bot.demo.local_ray import LocalCluster, running_cluster
from bot.diagnosis import Diagnosis
from bot.slack import probe_actions
from bot.slack.app import CORE, build_app
from bot.slack.bot import Bot
from bot.slack.server import SlackHTTPServer
from tests.support.slack_api import SlackWebAPI, block_actions_body, post_signed, serve_slack

# Real Ray clusters on 127.0.0.2-.5: these modules run one after another in one pytest-xdist worker.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("real-ray")]
SECRET = "probe-secret"
CHANNEL = "C0MLPLATFORM"
ALLOWED = "U0GPUOPS01"
THREAD = "1733000000.000100"


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[LocalCluster]:
    with running_cluster(say=lambda _: None) as cluster:
        yield cluster


@pytest.fixture
def slack() -> Iterator[SlackWebAPI]:
    with serve_slack(usergroups={"S0GPUOPS01": ["U0GROUPIE1"]}) as api:
        yield api


def start_bot(tmp_path: Path, slack: SlackWebAPI, dashboard: str, timeout_s: float = 60) -> tuple[str, Any]:
    url, server, _ = start_bot_with_state(tmp_path, slack, dashboard, timeout_s)
    return url, server


def start_bot_with_state(
    tmp_path: Path, slack: SlackWebAPI, dashboard: str, timeout_s: float = 60
) -> tuple[str, Any, Bot]:
    path = tmp_path / "raydiag.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "clusters": [
                    {
                        "name": "local",
                        "namespace": "ml",
                        "dashboard_url": dashboard,
                        "kubeconfig": str(tmp_path / "no-kubeconfig"),
                    }
                ],
                "probes": {
                    "allowed_users": [ALLOWED],
                    "allowed_groups": ["S0GPUOPS01"],
                    "gpu_timeout_s": timeout_s,
                },
            }
        )
    )
    config = load_config(path)
    bot = Bot(config=config, diagnose=lambda cluster, namespace: Diagnosis(cluster=cluster.name))
    app = build_app(
        bot,
        token="xoxb-test",
        signing_secret=SECRET,
        api_url=slack.url,
        surfaces=(*CORE, probe_actions.register),
    )
    server = SlackHTTPServer(app, "127.0.0.1", 0)
    server.start_background()
    return server.url + "/slack/events", server, bot


def press(url: str, action: str, user: str, value: dict[str, Any]) -> int:
    body = block_actions_body(
        action, value=json.dumps(value), user_id=user, channel_id=CHANNEL, message_ts=THREAD
    )
    return post_signed(url, body, SECRET).status


def thread_posts(slack: SlackWebAPI) -> list[Any]:
    return [c for c in slack.calls_to("chat.postMessage") if c.params.get("thread_ts") == THREAD]


def test_gpu_probe_runs_and_reports_the_node(
    tmp_path: Path, slack: SlackWebAPI, ray_cluster: LocalCluster
) -> None:
    url, server = start_bot(tmp_path, slack, ray_cluster.dashboard_url)
    try:
        assert (
            press(
                url, "raydiag_gpu_probe", ALLOWED, {"cluster": "local", "gpu_type": "accelerator_type:A100"}
            )
            == 200
        )
        posts = slack.wait_for("chat.postMessage", count=2, timeout=120)
    finally:
        server.shutdown()
    said = json.dumps([p.params for p in posts])
    assert f"<@{ALLOWED}>" in said
    assert "GPU probe ran on local" in posts[1].params["text"], json.dumps(posts[1].params)[:3000]
    assert "127.0.0.3" in said  # the A100 node
    assert all(p.params.get("thread_ts") == THREAD for p in posts)


def test_group_member_is_allowed_and_outsider_refused(
    tmp_path: Path, slack: SlackWebAPI, ray_cluster: LocalCluster
) -> None:
    url, server = start_bot(tmp_path, slack, "http://127.0.0.2:1")
    try:
        assert press(url, "raydiag_gpu_probe", "U0OUTSIDER", {"cluster": "local"}) == 200
        refused = slack.wait_for("chat.postEphemeral", count=1, timeout=10)
        assert "allow-list" in refused[0].params["text"]
        assert press(url, "raydiag_gpu_probe", "U0GROUPIE1", {"cluster": "local"}) == 200
        posts = slack.wait_for("chat.postMessage", count=2, timeout=30)
    finally:
        server.shutdown()
    # The group member's probe ran (against a dead dashboard): reported in plain words, not a crash.
    assert "unreachable" in posts[1].params["text"]
    assert len(slack.calls_to("chat.postEphemeral")) == 1


def test_probe_that_stays_pending_is_stopped(
    tmp_path: Path, slack: SlackWebAPI, ray_cluster: LocalCluster
) -> None:
    url, server = start_bot(tmp_path, slack, ray_cluster.dashboard_url, timeout_s=8)
    try:
        assert (
            press(
                url, "raydiag_gpu_probe", ALLOWED, {"cluster": "local", "gpu_type": "accelerator_type:H100"}
            )
            == 200
        )
        posts = slack.wait_for("chat.postMessage", count=2, timeout=120)
    finally:
        server.shutdown()
    result = posts[1]
    assert "pending_timeout" in result.params["text"]
    submission = next(
        word
        for word in json.dumps(result.params).replace("`", " ").split()
        if word.startswith("raydiag-probe-")
    )
    with urllib.request.urlopen(
        f"{ray_cluster.dashboard_url}/api/jobs/{submission.strip('(),')}", timeout=10
    ) as answer:
        job = json.loads(answer.read())
    assert job["status"] in ("STOPPED", "FAILED")


def test_head_check_and_ray_status_buttons(
    tmp_path: Path, slack: SlackWebAPI, ray_cluster: LocalCluster
) -> None:
    url, server = start_bot(tmp_path, slack, ray_cluster.dashboard_url)
    try:
        assert press(url, "raydiag_ray_status", "U0ANYONE01", {"cluster": "local"}) == 200
        assert press(url, "raydiag_head_check", "U0ANYONE01", {"cluster": "local"}) == 200
        slack.wait_for("chat.postMessage", count=4, timeout=60)
    finally:
        server.shutdown()
    said = json.dumps([p.params for p in thread_posts(slack)])
    assert "Node status" in said or "Resources" in said
    assert "Head check" in said and "dashboard" in said


def test_one_gpu_probe_at_a_time_per_cluster(tmp_path: Path, slack: SlackWebAPI) -> None:
    url, server, bot = start_bot_with_state(tmp_path, slack, "http://127.0.0.2:1")
    try:
        assert bot.probe_locks.try_acquire("local")  # a probe is running on this cluster
        assert press(url, "raydiag_gpu_probe", ALLOWED, {"cluster": "local"}) == 200
        busy = slack.wait_for("chat.postEphemeral", count=1, timeout=10)
        assert "already running" in busy[0].params["text"]
        assert slack.calls_to("chat.postMessage") == []
    finally:
        bot.probe_locks.release("local")
        server.shutdown()
