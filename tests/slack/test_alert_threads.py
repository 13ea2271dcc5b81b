"""Alerts from other apps, answered in their thread (issue 14).

A real Alertmanager (Debian's, on loopback) routes an alert about a Pending Ray worker to its
Slack receiver, which posts to the loopback Web API stand-in; the test delivers exactly that post
to the bot as the ``message`` event a workspace sends (subtype ``bot_message``, the attachment).
The bot finds the Pod's RayCluster through the loopback Kubernetes API, diagnoses the cluster and
answers in the alert's thread, the Pod's findings first. A re-send with the same findings gets
nothing; the resolution gets one line; raydiag's own posts and alerts about other things get no
answer.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.slack.test_bot_scenarios import INCIDENTS, SECRET, running_bot, validate_blocks
from tests.slack.test_triggers_metered import counted
from tests.support import scenarios
from tests.support.alertmanager import serve_alertmanager, slack_and_webhook, webhook_sink
from tests.support.slack_api import (
    APP_ID,
    BOT_ID,
    Call,
    SlackWebAPI,
    event_callback_body,
    post_signed,
    serve_slack,
)
from tests.support.waiting import eventually

PENDING = scenarios.PENDING  # raycluster-gpu-gpu-a100-worker-p2x7c, Pending for want of a GPU
ALERTMANAGER_BOT = "B0ALERTMGR"
ALERT_TS = "1796160000.000100"
LABELS = {"alertname": "KubePodNotReady", "severity": "warning", "namespace": "ml", "pod": PENDING}
# A template that lists the labels by name, as most teams' Slack templates do.
LISTING = {
    "title": '[{{ .Status | toUpper }}{{ if eq .Status "firing" }}:{{ .Alerts.Firing | len }}{{ end }}] '
    "{{ .CommonLabels.alertname }}",
    "text": "{{ range .Alerts }}*Details:*\n{{ range .Labels.SortedPairs }} • *{{ .Name }}:* `{{ .Value }}`\n"
    "{{ end }}{{ end }}",
}


@pytest.fixture
def slack() -> Iterator[SlackWebAPI]:
    with serve_slack() as api:
        yield api


def _as_event(posted: dict[str, Any], ts: str) -> dict[str, Any]:
    """The event Slack delivers for a message an app posted with its own bot token."""
    return {
        "type": "message",
        "subtype": "bot_message",
        "bot_id": ALERTMANAGER_BOT,
        "username": posted.get("username", "Alertmanager"),
        "text": posted.get("text", ""),
        "attachments": posted.get("attachments", []),
        "channel": INCIDENTS,
        "ts": ts,
        "event_ts": ts,
    }


def _deliver(url: str, event: dict[str, Any], event_id: str) -> None:
    answer = post_signed(url, event_callback_body(event, event_id=event_id), SECRET)
    assert answer.status == 200


def _in_thread(slack: SlackWebAPI, ts: str) -> list[Call]:
    return [c for c in slack.calls_to("chat.postMessage") if c.params.get("thread_ts") == ts]


def _alert_posts(alerts: SlackWebAPI) -> list[dict[str, Any]]:
    return [dict(c.params) for c in alerts.calls_to("chat.postMessage")]


def test_a_real_alertmanager_alert_gets_one_threaded_diagnosis_naming_its_pod(
    tmp_path: Path, slack: SlackWebAPI
) -> None:
    bundle = scenarios.third_gpu_worker_no_free_gpu()
    with (
        running_bot(tmp_path, slack, bundle) as (url, bot),
        webhook_sink() as sink,
        serve_slack() as alerts,  # where Alertmanager's Slack receiver posts
        serve_alertmanager(
            slack_and_webhook(
                alerts.url,
                f"{sink.url}/unused",
                webhook_token="x",
                slack_channel=INCIDENTS,
                slack_fields=LISTING,
            )
        ) as manager,
    ):
        manager.fire(LABELS)
        assert eventually(lambda: _alert_posts(alerts), 20)
        [firing] = _alert_posts(alerts)

        _deliver(url, _as_event(firing, ALERT_TS), "Ev0ALERT0001")
        assert eventually(lambda: len(_in_thread(slack, ALERT_TS)) >= 2, 30)
        time.sleep(0.5)
        posts = _in_thread(slack, ALERT_TS)
        intro = posts[0].params["text"]
        assert "`gpu-prod`" in intro and f"`ml/{PENDING}`" in intro
        # The root names the alert's Pod first; the finding (no free GPU, cause 1) is in the thread.
        assert PENDING in posts[1].params["text"]
        assert eventually(lambda: "RD0101" in json.dumps([p.params for p in _in_thread(slack, ALERT_TS)]), 30)
        posts = _in_thread(slack, ALERT_TS)
        for post in posts:
            validate_blocks(post)
        answered = len(slack.calls_to("chat.postMessage"))
        assert counted(bot) == {"alert": 1}

        # Alertmanager re-sends the firing alert (a new message): same findings, no new answer.
        _deliver(url, _as_event(firing, "1796163600.000100"), "Ev0ALERT0002")
        assert eventually(lambda: counted(bot) == {"alert": 2}, 30)
        time.sleep(0.5)
        assert len(slack.calls_to("chat.postMessage")) == answered
        assert _in_thread(slack, "1796163600.000100") == []

        # Resolved: one line in the thread raydiag answered in.
        manager.resolve(LABELS)
        assert eventually(lambda: len(_alert_posts(alerts)) > 1, 20)
        resolved = _alert_posts(alerts)[-1]
        assert "[RESOLVED]" in json.dumps(resolved)
        _deliver(url, _as_event(resolved, "1796167200.000100"), "Ev0ALERT0003")
        assert eventually(lambda: len(slack.calls_to("chat.postMessage")) == answered + 1, 30)
        [line] = slack.calls_to("chat.postMessage")[answered:]
        assert line.params["thread_ts"] == ALERT_TS
        assert "resolved" in line.params["text"]


def test_raydiags_own_posts_and_alerts_about_other_things_get_no_answer(
    tmp_path: Path, slack: SlackWebAPI
) -> None:
    with running_bot(tmp_path, slack, scenarios.third_gpu_worker_no_free_gpu()) as (url, bot):
        own = {
            "type": "message",
            "bot_id": BOT_ID,
            "app_id": APP_ID,
            "text": "[FIRING:1] RD0101 gpu-prod",
            "channel": INCIDENTS,
            "ts": "1796170000.000100",
        }
        _deliver(url, own, "Ev0ALERT0010")
        unrelated = {
            "type": "message",
            "subtype": "bot_message",
            "bot_id": ALERTMANAGER_BOT,
            "attachments": [{"title": "[FIRING:1] NodeDiskFull (node-7 critical)", "text": ""}],
            "channel": INCIDENTS,
            "ts": "1796170001.000100",
        }
        _deliver(url, unrelated, "Ev0ALERT0011")
        time.sleep(1.5)
        assert slack.calls_to("chat.postMessage") == []
        assert counted(bot) == {}
