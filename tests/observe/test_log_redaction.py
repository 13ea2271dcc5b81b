"""Secrets planted in a cluster reach neither Slack nor the bot's own logs, even at DEBUG level.

The cluster is the redaction test's planted bundle (tokens in env values, args and log lines); a
second cluster's diagnosis fails with an exception that quotes a token, as a client library's
error might. Everything the bot logs in JSON, and every Web API call it makes, is searched.
"""

from __future__ import annotations

import io
import json
import logging
from pathlib import Path
from typing import Any

from bot.classify import classify
from bot.config import Config
from bot.diagnosis import Diagnosis
from bot.observe.logs import configure_logging
from bot.slack.app import Bot, build_app
from bot.slack.server import SlackHTTPServer
from bot.snapshot.files import parse_snapshot
from tests.snapshot.test_redaction import SECRETS, planted_bundle
from tests.support.slack_api import post_signed, serve_slack, slash_command_body

SIGNING = "redaction-secret"


def test_planted_secrets_stay_out_of_slack_and_the_logs(tmp_path: Path) -> None:
    snapshot = parse_snapshot(planted_bundle())

    def diagnose(cluster: Any, namespace: str) -> Diagnosis:
        if cluster.name == "broken":
            raise RuntimeError(f"dashboard said 401 for Authorization: Bearer {SECRETS[6]} ({SECRETS[4]})")
        return classify(snapshot)

    handler = configure_logging("json", logging.DEBUG)
    stream = io.StringIO()
    handler.setStream(stream)  # type: ignore[attr-defined]
    config = Config.model_validate(
        {"clusters": [{"name": "gpu-prod", "namespace": "ml"}, {"name": "broken"}]}
    )
    bot = Bot(config=config, diagnose=diagnose)
    try:
        with serve_slack() as slack:
            app = build_app(bot, token="xoxb-test", signing_secret=SIGNING, api_url=slack.url)
            server = SlackHTTPServer(app, "127.0.0.1", 0)
            server.start_background()
            try:
                for name in ("gpu-prod", "broken"):
                    body = slash_command_body(
                        text=name, channel_id="C0MLPLATFORM", response_url=slack.response_url(name)
                    )
                    assert post_signed(server.url + "/slack/events", body, SIGNING).status == 200
                slack.wait_for("chat.postMessage", count=2, timeout=30)
                slack.wait_for("response_url", count=1, timeout=30)
                sent = json.dumps([call.params for call in slack.calls])
            finally:
                server.shutdown()
                server.server_close()
                bot.runs.shutdown()
    finally:
        logging.getLogger().removeHandler(handler)
        logging.getLogger().setLevel(logging.WARNING)

    logged = stream.getvalue()
    assert "RuntimeError" in logged  # the failure was logged, with its traceback ...
    assert "[REDACTED]" in logged  # ... and its token masked
    assert "failed" in sent  # the asker was told
    for secret in SECRETS:
        assert secret not in logged
        assert secret not in sent
