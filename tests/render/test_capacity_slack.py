"""`/raydiag <cluster> capacity` as Slack sends it: a signed command in, a PNG upload out."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterator
from typing import Any

import pytest
from PIL import Image

from bot.config import ClusterConfig, Config, LanguageConfig, SlackConfig
from bot.read.snapshot_file import parse_snapshot
from bot.slack.app import build_app
from bot.slack.bot import Bot
from bot.slack.capacity_command import register_capacity
from bot.snapshot.model import Snapshot
from tests.support import scenarios
from tests.support.bolt_server import bolt_over_http
from tests.support.cluster import CLUSTER, NS
from tests.support.slack_api import SlackWebAPI, post_signed, serve_slack, slash_command_body

SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
CHANNEL = "C0MLPLATFORM"
ZH_CHANNEL = "C0ZHTEAM01"
CONFIG = Config(
    clusters=[ClusterConfig(name="gpu-prod", namespace=NS, raycluster=CLUSTER)],
    slack=SlackConfig(languages=LanguageConfig(channels={ZH_CHANNEL: "zh"})),
)


@pytest.fixture
def slack() -> Iterator[SlackWebAPI]:
    with serve_slack() as api:
        yield api


@contextlib.contextmanager
def running_bot(slack: SlackWebAPI, snapshot_of: Any) -> Iterator[tuple[str, list[tuple[str, str]]]]:
    """The Bolt app over HTTP, reading clusters through ``snapshot_of``; yields its URL and the reads."""
    reads: list[tuple[str, str]] = []

    def read(cluster: ClusterConfig, namespace: str) -> Snapshot:
        reads.append((cluster.name, namespace))
        result: Snapshot = snapshot_of(cluster, namespace)
        return result

    # The capacity picture is the diagnosis' own: read through ``snapshot_of``, classified once.
    bot = Bot(config=CONFIG, snapshot_of=read)
    register_capacity(bot)
    app = build_app(bot, token="xoxb-test", signing_secret=SECRET, api_url=slack.url)
    with bolt_over_http(bot, app) as url:
        yield url, reads


def recorded(bundle: Any) -> Any:
    snapshot = parse_snapshot(bundle.to_json())
    return lambda cluster, namespace: snapshot


def command(url: str, slack: SlackWebAPI, text: str, channel: str = CHANNEL) -> Any:
    body = slash_command_body(
        text=text, user_id="U0ENGINEER", channel_id=channel, response_url=slack.response_url()
    )
    return post_signed(url, body, SECRET)


def test_capacity_uploads_the_chart_with_the_figures(slack: SlackWebAPI) -> None:
    with running_bot(slack, recorded(scenarios.gpu_worker_runs_but_never_joined())) as (url, reads):
        answer = command(url, slack, "gpu-prod capacity")
        assert answer.status == 200
        [complete] = slack.wait_for("files.completeUploadExternal", timeout=30)
    assert reads == [("gpu-prod", NS)]
    [upload] = slack.calls_to("files.getUploadURLExternal")
    assert upload.params["filename"] == "raydiag-capacity-gpu-prod.png"
    [uploaded] = complete.params["files"]
    png = slack.uploads[uploaded["id"]]
    with Image.open(io.BytesIO(png)) as image:
        assert (image.format, image.size) == ("PNG", (1200, 600))
    assert uploaded["title"] == "GPUs of gpu-prod, layer by layer"
    assert complete.params["channel_id"] == CHANNEL
    comment = complete.params["initial_comment"]
    assert (
        "*A100*: 8 allocatable → 8 given to Ray Pods → 4 registered in Ray → 1 in use · 0 waiting" in comment
    )
    assert "4 of the 8 GPUs given to Ray Pods are not registered in Ray" in comment
    assert slack.calls_to("chat.postMessage") == []


def test_a_chinese_channel_gets_the_figures_in_chinese(slack: SlackWebAPI) -> None:
    with running_bot(slack, recorded(scenarios.healthy())) as (url, _):
        command(url, slack, "gpu-prod capacity", channel=ZH_CHANNEL)
        [complete] = slack.wait_for("files.completeUploadExternal", timeout=30)
    assert complete.params["channel_id"] == ZH_CHANNEL
    assert "可分配 8 → 分配给 Ray Pod 8 → Ray 登记 8" in complete.params["initial_comment"]


def test_what_could_not_be_read_is_said_under_the_figures(slack: SlackWebAPI) -> None:
    with running_bot(slack, recorded(scenarios.dashboard_connection_refused())) as (url, _):
        command(url, slack, "gpu-prod capacity")
        [complete] = slack.wait_for("files.completeUploadExternal", timeout=30)
    assert ":warning: Could not read:" in complete.params["initial_comment"]


def test_a_failed_read_is_told_to_the_asker_and_uploads_nothing(slack: SlackWebAPI) -> None:
    def unreachable(cluster: ClusterConfig, namespace: str) -> Snapshot:
        raise ConnectionError("kubeconfig context prod-us: connection refused")

    with running_bot(slack, unreachable) as (url, _):
        command(url, slack, "gpu-prod capacity")
        [reply] = slack.wait_for("response_url", timeout=30)
    assert reply.params["response_type"] == "ephemeral"
    assert "could not be drawn: kubeconfig context prod-us: connection refused" in reply.params["text"]
    assert slack.calls_to("files.getUploadURLExternal") == []


def test_a_channel_the_bot_is_not_in_gets_an_ephemeral_hint(slack: SlackWebAPI) -> None:
    slack.fail("files.completeUploadExternal", error="not_in_channel", status=200)
    with running_bot(slack, recorded(scenarios.healthy())) as (url, _):
        command(url, slack, "gpu-prod capacity")
        [reply] = slack.wait_for("response_url", timeout=30)
    assert "/invite @raydiag" in reply.params["text"]
