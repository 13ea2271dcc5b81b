"""One `/raydiag` is one request id, from Bolt's threads into the diagnosis pool and the delivery."""

from __future__ import annotations

import json
import logging
import time

from bot.classify import classify
from bot.config import Config
from bot.diagnosis import Diagnosis
from bot.read.snapshot_file import parse_snapshot
from bot.slack.app import build_app
from bot.slack.bot import Bot
from bot.snapshot.data import load
from tests.observe.conftest import CaptureLogs
from tests.support import scenarios
from tests.support.bolt_server import bolt_over_http
from tests.support.slack_api import post_signed, serve_slack, slash_command_body

SECRET = "request-id-secret"
TRIGGER = "13345224609.738474920.8088930838d88f008e0"


def _settle(bot: Bot) -> None:
    """Until the first diagnosis has been delivered (its thread replies included)."""
    deadline = time.monotonic() + 30
    while bot.runs.in_flight() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)


def test_a_slash_command_logs_under_its_trigger_id_in_every_thread(captured_logs: CaptureLogs) -> None:
    snapshot = parse_snapshot(scenarios.gpu_worker_without_toleration().to_json())
    log = logging.getLogger("raydiag.test.collect")

    def diagnose(cluster: object, namespace: str) -> Diagnosis:
        log.info("reading %s with token=xoxb-0000000000-secretsecret", namespace)
        return classify(snapshot)

    config = load(Config, {"clusters": [{"name": "gpu-prod", "namespace": "ml"}]})
    bot = Bot(config=config, diagnose=diagnose)
    with captured_logs("json", logging.INFO) as stream, serve_slack() as slack:
        app = build_app(bot, token="xoxb-test", signing_secret=SECRET, api_url=slack.url)
        with bolt_over_http(bot, app) as url:
            body = slash_command_body(
                text="gpu-prod",
                channel_id="C0MLPLATFORM",
                response_url=slack.response_url(),
                trigger_id=TRIGGER,
            )
            assert post_signed(url, body, SECRET).status == 200
            slack.wait_for("chat.postMessage", count=1, timeout=30)
            _settle(bot)
            # A channel the bot is not in: the delivery runs, fails, and tells the asker.
            slack.fail("chat.postMessage", error="channel_not_found", status=200, times=None)
            answer = post_signed(
                url,
                slash_command_body(
                    text="gpu-prod",
                    channel_id="C0GONE0001",
                    response_url=slack.response_url("gone"),
                    trigger_id=TRIGGER + "b",
                ),
                SECRET,
            )
            assert answer.status == 200
            [said] = slack.wait_for("response_url", count=1, timeout=30)
            assert "/invite" in said.params["text"]

    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    reading = [line for line in lines if line["logger"] == "raydiag.test.collect"]
    assert [line["request_id"] for line in reading] == [TRIGGER, TRIGGER + "b"]
    assert all("secretsecret" not in line["message"] for line in lines)
