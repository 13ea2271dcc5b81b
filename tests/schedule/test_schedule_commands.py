"""``/raydiag schedule add|list|remove`` as Slack sends them: signed requests to the Bolt app.

Answers arrive on the command's ``response_url`` (Bolt's ``respond``) at the Slack stand-in. The
scheduler runs as a follower here, so jobs are created and removed but none fires during a test.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from bot.schedule.jobs import HealthScheduler
from bot.slack.app import build_app
from bot.slack.bot import Bot
from bot.slack.schedule_commands import register_schedules
from bot.slack.server import SlackHTTPServer
from bot.store import CONFIG_OWNER, Schedule
from tests.schedule.conftest import ALLOWED, CHANNEL, ZH_CHANNEL, World, valid_message
from tests.support.slack_api import Call, post_signed, slash_command_body

SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
ONCALL_GROUP = "S0GPUONCALL"


class Channel:
    """Types commands into Slack and reads the ephemeral answers."""

    def __init__(self, world: World, url: str) -> None:
        self.world = world
        self.url = url
        self.asked = 0

    def type(self, text: str, user: str = ALLOWED, channel: str = CHANNEL) -> Call:
        self.asked += 1
        body = slash_command_body(
            text=text,
            user_id=user,
            channel_id=channel,
            response_url=self.world.slack.response_url(f"r{self.asked}"),
        )
        answer = post_signed(self.url, body, SECRET)
        assert answer.status == 200
        return self.world.slack.wait_for("response_url", count=self.asked, timeout=10)[-1]


def start_app(world: World, bot: Bot) -> SlackHTTPServer:
    app = build_app(bot, token="xoxb-test", signing_secret=SECRET, api_url=world.slack.url)
    server = SlackHTTPServer(app, "127.0.0.1", 0)
    server.start_background()
    return server


@pytest.fixture
def scheduler(world: World) -> Iterator[HealthScheduler]:
    made = HealthScheduler(world.store)
    made.start(leading=False)
    yield made
    made.shutdown()


@pytest.fixture
def channel(world: World, scheduler: HealthScheduler) -> Iterator[Channel]:
    world.slack.usergroups[ONCALL_GROUP] = ["U0ONCALL01"]
    world.settings = replace(
        world.settings, probes=replace(world.settings.probes, allowed_groups=[ONCALL_GROUP])
    )
    world.bot.runs.shutdown()
    world.bot = world.new_bot(world.store)
    register_schedules(world.bot, scheduler)
    server = start_app(world, world.bot)
    yield Channel(world, server.url + "/slack/events")
    server.shutdown()
    server.server_close()


def said(call: Call) -> str:
    params: dict[str, Any] = call.params
    assert params.get("response_type") == "ephemeral"
    return json.dumps({"text": params.get("text"), "blocks": params.get("blocks")}, ensure_ascii=False)


def test_an_allowed_user_adds_a_schedule_for_this_channel(
    world: World, channel: Channel, scheduler: HealthScheduler
) -> None:
    answer = said(channel.type("schedule add gpu-prod 0 9 * * 1-5 Europe/Berlin"))

    [schedule] = world.store.schedules()
    assert (schedule.channel, schedule.cluster, schedule.cron, schedule.timezone, schedule.mode) == (
        CHANNEL,
        "gpu-prod",
        "0 9 * * 1-5",
        "Europe/Berlin",
        "changes",
    )
    assert schedule.created_by == ALLOWED
    assert f"Id `{schedule.id}`" in answer and "posts when something changes" in answer
    # The world's clock reads Monday 2026-11-30 09:15 UTC: the next weekday 09:00 in Berlin is Tuesday.
    assert "next run 2026-12-01 09:00 CET" in answer
    assert scheduler.next_run_time(schedule.id) is not None


def test_a_member_of_an_allowed_group_may_add_a_digest(world: World, channel: Channel) -> None:
    answer = said(channel.type("schedule add gpu-prod 0 18 * * * digest", user="U0ONCALL01"))
    [schedule] = world.store.schedules()
    assert schedule.mode == "digest" and schedule.timezone == "UTC"
    assert "a digest every run" in answer


def test_anyone_else_is_refused_and_nothing_changes(world: World, channel: Channel) -> None:
    answer = said(channel.type("schedule add gpu-prod 0 9 * * *", user="U0STRANGER"))
    assert "Only people on the probe allow-list may change schedules" in answer
    assert world.store.schedules() == []


def test_the_list_shows_every_schedule_with_its_next_run_to_anyone(world: World, channel: Channel) -> None:
    channel.type("schedule add gpu-prod */30 * * * *")
    world.store.sync_config_schedules(
        [
            Schedule(
                "cfg1a2b3c4",
                ZH_CHANNEL,
                "gpu-prod",
                "ml",
                "0 9 * * 1-5",
                "Asia/Shanghai",
                "digest",
                CONFIG_OWNER,
                world.clock(),
            )
        ]
    )

    listed = channel.type("schedule list", user="U0STRANGER")

    text = said(listed)
    [added] = [s for s in world.store.schedules() if not s.from_config]
    assert (
        f"`{added.id}` · `gpu-prod` → <#{CHANNEL}> · `*/30 * * * *` UTC · posts when something changes"
        in text
    )
    assert "next 2026-11-30 09:30 UTC" in text
    assert (
        "`cfg1a2b3c4`" in text
        and "Asia/Shanghai · a digest every run" in text
        and "from the configuration" in text
    )
    assert "next 2026-12-01 09:00 CST" in text
    valid_message(listed)


def test_the_list_in_a_chinese_channel_is_in_chinese(channel: Channel) -> None:
    empty = said(channel.type("schedule list", channel=ZH_CHANNEL))
    assert "目前没有定时健康播报" in empty


def test_removing_a_schedule_stops_its_job_and_unknown_or_configured_ones_are_explained(
    world: World, channel: Channel, scheduler: HealthScheduler
) -> None:
    channel.type("schedule add gpu-prod 0 9 * * *")
    [schedule] = world.store.schedules()
    configured = Schedule(
        "cfg9z8y7x6", CHANNEL, "gpu-prod", "ml", "0 8 * * *", "UTC", "changes", CONFIG_OWNER, world.clock()
    )
    world.store.sync_config_schedules([configured])

    refused = said(channel.type(f"schedule remove {schedule.id}", user="U0STRANGER"))
    removed = said(channel.type(f"schedule remove {schedule.id}"))
    again = said(channel.type(f"schedule remove {schedule.id}"))
    from_file = said(channel.type("schedule remove cfg9z8y7x6"))

    assert "nothing was changed" in refused
    assert f"Schedule `{schedule.id}` removed" in removed
    assert f"There is no schedule `{schedule.id}`" in again
    assert "comes from the configuration file" in from_file
    assert [s.id for s in world.store.schedules()] == ["cfg9z8y7x6"]
    assert scheduler.next_run_time(schedule.id) is None


def test_a_bot_without_a_state_store_says_schedules_are_not_available(world: World) -> None:
    bot = world.new_bot(None)
    server = start_app(world, bot)
    try:
        body = slash_command_body(text="schedule list", user_id=ALLOWED, channel_id=CHANNEL)
        answer = post_signed(server.url + "/slack/events", body, SECRET)
    finally:
        server.shutdown()
        server.server_close()
        bot.runs.shutdown()
    assert answer.status == 200
    assert "not running here (`schedule-list`); diagnoses still work" in json.dumps(answer.json())
