"""Two bot replicas on one state database, driven through Slack: what one does, the other knows.

Each replica is a Bolt app with its own ``Store`` on the same database (SQLite file or PostgreSQL),
as two Pods behind one Service would be.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator

import pytest

from bot.classify import classify
from bot.config import Config
from bot.read.snapshot_file import parse_snapshot
from bot.slack.app import build_app
from bot.slack.bot import Bot
from bot.slack.server import SlackHTTPServer
from bot.snapshot.data import load
from bot.store import open_store
from tests.support import scenarios
from tests.support.cluster import CLUSTER, NS
from tests.support.slack_api import (
    BOT_USER_ID,
    SlackWebAPI,
    app_mention_event,
    block_actions_body,
    event_callback_body,
    post_signed,
    serve_slack,
)

SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
CHANNEL = "C0MLPLATFORM"
SETTLE_S = 1.0


@pytest.fixture
def slack() -> Iterator[SlackWebAPI]:
    with serve_slack() as api:
        yield api


@contextlib.contextmanager
def replicas(store_url: str, slack: SlackWebAPI, count: int = 2) -> Iterator[list[tuple[str, Bot]]]:
    config = load(Config, {"clusters": [{"name": "gpu-prod", "namespace": NS, "raycluster": CLUSTER}]})
    snapshot = parse_snapshot(scenarios.healthy().to_json())
    with contextlib.ExitStack() as stack:
        running = []
        for _ in range(count):
            store = open_store(store_url)
            stack.callback(store.close)
            bot = Bot(config=config, diagnose=lambda cluster, namespace: classify(snapshot), store=store)
            stack.callback(bot.runs.shutdown)
            server = SlackHTTPServer(
                build_app(bot, token="xoxb-test", signing_secret=SECRET, api_url=slack.url), "127.0.0.1", 0
            )
            server.start_background()
            stack.callback(server.server_close)
            stack.callback(server.shutdown)
            running.append((server.url + "/slack/events", bot))
        yield running


def test_a_slack_retry_that_reaches_the_other_replica_is_answered_once(
    store_url: str, slack: SlackWebAPI
) -> None:
    event = app_mention_event(text=f"<@{BOT_USER_ID}> gpu-prod", user="U0ENGINEER", channel=CHANNEL)
    body = event_callback_body(event, event_id="Ev08RETRIED")
    with replicas(store_url, slack) as [(first, _), (second, _)]:
        assert post_signed(first, body, SECRET).status == 200
        slack.wait_for("chat.postMessage", count=1, timeout=20)
        # Slack did not see the ack in time and retries, this time to the other Pod.
        assert post_signed(second, body, SECRET).status == 200
        time.sleep(SETTLE_S)
    assert len(slack.calls_to("chat.postMessage")) == 1


def test_a_mute_pressed_on_one_replica_is_known_to_the_other(store_url: str, slack: SlackWebAPI) -> None:
    with replicas(store_url, slack) as [(first, _), (_, other)]:
        press = block_actions_body(
            "raydiag_mute",
            value=json.dumps({"cluster": "gpu-prod"}),
            user_id="U0ENGINEER",
            channel_id=CHANNEL,
        )
        assert post_signed(first, press, SECRET).status == 200
        [note] = slack.wait_for("chat.postMessage", count=1, timeout=20)
        assert other.mutes.muted("gpu-prod") and not other.mutes.muted("research")
    assert "<@U0ENGINEER> muted unasked posts about `gpu-prod` for 24 h" in note.params["text"]
