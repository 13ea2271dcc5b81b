"""Every Slack trigger reaches its diagnosis through the one ``Diagnoser``, which meters it with
the trigger's name: slash command, button, mention, incident-channel message, shortcut, paste.

Signed requests go into the Bolt app; answers go out to the loopback Web API stand-in. The
diagnosis itself is the recorded scenario (no Ray cluster needed), as in test_bot_scenarios.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.slack.bot import Bot
from tests.slack.test_bot_scenarios import (
    CHANNEL,
    INCIDENTS,
    SECRET,
    _root_blocks,
    command,
    press,
    running_bot,
)
from tests.support import scenarios
from tests.support.slack_api import (
    BOT_USER_ID,
    SlackWebAPI,
    app_mention_event,
    event_callback_body,
    message_event,
    message_shortcut_body,
    post_signed,
    serve_slack,
)
from tests.support.waiting import eventually

PASTE = (
    Path(__file__).resolve().parents[1] / "cases" / "ray-gpu-driver-error" / "fires" / "raylet-nvml.txt"
).read_text()


@pytest.fixture
def slack() -> Iterator[SlackWebAPI]:
    with serve_slack() as api:
        yield api


def counted(bot: Bot) -> dict[str, int]:
    """Diagnoses finished, by trigger, as the bot's own /metrics registry says."""
    out: dict[str, int] = {}
    for metric in bot.metrics.registry.collect():
        for sample in metric.samples:
            if sample.name == "raydiag_diagnosis_seconds_count" and sample.value:
                out[sample.labels["trigger"]] = int(sample.value)
    return out


def _until(bot: Bot, want: dict[str, int], timeout: float = 20.0) -> dict[str, int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and counted(bot) != want:
        time.sleep(0.05)
    return counted(bot)


def test_slash_command_and_button_are_metered_as_such(tmp_path: Path, slack: SlackWebAPI) -> None:
    with running_bot(tmp_path, slack, scenarios.healthy()) as (url, bot):
        command(url, slack, "gpu-prod")
        slack.wait_for("chat.postMessage", count=1, timeout=30)
        assert _until(bot, {"slash": 1}) == {"slash": 1}
        blocks, ts = _root_blocks(slack), slack.messages(CHANNEL)[0]["ts"]
        press(url, "raydiag_rerun", json.dumps({"cluster": "gpu-prod"}), "U0ENGINEER", blocks, ts)
        assert _until(bot, {"slash": 1, "button": 1}) == {"slash": 1, "button": 1}


def test_mention_naming_a_cluster_and_incident_message_naming_one(tmp_path: Path, slack: SlackWebAPI) -> None:
    with running_bot(tmp_path, slack, scenarios.healthy()) as (url, bot):
        mention = app_mention_event(
            text=f"<@{BOT_USER_ID}> is gpu-prod ok?", channel=CHANNEL, ts="1733000100.000200"
        )
        post_signed(url, event_callback_body(mention, event_id="Ev0TRIG0001"), SECRET)
        assert _until(bot, {"mention": 1}) == {"mention": 1}
        said = message_event(
            text="gpu-prod pods pending since noon", channel=INCIDENTS, ts="1733000200.000300"
        )
        post_signed(url, event_callback_body(said, event_id="Ev0TRIG0002"), SECRET)
        assert _until(bot, {"mention": 1, "incident": 1}) == {"mention": 1, "incident": 1}


def test_pasted_output_from_a_message_or_the_shortcut_is_metered_as_a_paste(
    tmp_path: Path, slack: SlackWebAPI
) -> None:
    with running_bot(tmp_path, slack, scenarios.healthy()) as (url, bot):
        pasted = message_event(text=PASTE, channel=INCIDENTS, ts="1733000300.000100")
        post_signed(url, event_callback_body(pasted, event_id="Ev0TRIG0003"), SECRET)
        assert _until(bot, {"paste": 1}) == {"paste": 1}
        shortcut = message_shortcut_body(
            callback_id="raydiag_diagnose_message",
            message_text=PASTE,
            channel_id=CHANNEL,
            message_ts="1733000400.000100",
        )
        post_signed(url, shortcut, SECRET)
        assert _until(bot, {"paste": 2}) == {"paste": 2}
        # Each diagnosis posts a root and then its thread; the finding's code is in the thread,
        # which may come after the other diagnosis's root.
        assert eventually(
            lambda: "RD0404" in json.dumps([p.params for p in slack.calls_to("chat.postMessage")]), 30
        )
