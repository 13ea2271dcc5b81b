"""Secrets planted in a cluster reach neither Slack nor the bot's own logs, even at DEBUG level.

The cluster is the redaction test's planted bundle (tokens in env values, args and log lines); a
second cluster's diagnosis fails with an exception that quotes a token, as a client library's
error might. Everything the bot logs in JSON, and every Web API call it makes, is searched.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from bot.classify import classify
from bot.config import Config
from bot.diagnosis import Diagnosis
from bot.read.snapshot_file import parse_snapshot
from bot.slack.app import build_app
from bot.slack.bot import Bot
from bot.snapshot.data import load
from tests.observe.conftest import CaptureLogs
from tests.snapshot.test_redaction import SECRETS, planted_bundle
from tests.support.bolt_server import bolt_over_http
from tests.support.slack_api import post_signed, serve_slack, slash_command_body

SIGNING = "redaction-secret"


def test_planted_secrets_stay_out_of_slack_and_the_logs(captured_logs: CaptureLogs) -> None:
    snapshot = parse_snapshot(planted_bundle())

    def diagnose(cluster: Any, namespace: str) -> Diagnosis:
        if cluster.name == "broken":
            raise RuntimeError(f"dashboard said 401 for Authorization: Bearer {SECRETS[6]} ({SECRETS[4]})")
        return classify(snapshot)

    config = load(Config, {"clusters": [{"name": "gpu-prod", "namespace": "ml"}, {"name": "broken"}]})
    bot = Bot(config=config, diagnose=diagnose)
    with captured_logs("json", logging.DEBUG) as stream, serve_slack() as slack:
        app = build_app(bot, token="xoxb-test", signing_secret=SIGNING, api_url=slack.url)
        with bolt_over_http(bot, app) as url:
            for name in ("gpu-prod", "broken"):
                body = slash_command_body(
                    text=name, channel_id="C0MLPLATFORM", response_url=slack.response_url(name)
                )
                assert post_signed(url, body, SIGNING).status == 200
            slack.wait_for("chat.postMessage", count=2, timeout=30)
            slack.wait_for("response_url", count=1, timeout=30)
            sent = json.dumps([call.params for call in slack.calls])

    logged = stream.getvalue()
    assert "RuntimeError" in logged  # the failure was logged, with its traceback ...
    assert "[REDACTED]" in logged  # ... and its token masked
    assert "failed" in sent  # the asker was told
    for secret in SECRETS:
        assert secret not in logged
        assert secret not in sent
