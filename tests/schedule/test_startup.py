"""Starting the bot with its state: where the database lives, and what happens when it is unusable.

``raydiag serve`` opens the store with ``open_state`` and starts schedules with ``start_schedules``;
these tests call the same two functions, then drive the Bolt app with signed requests.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
import yaml

from bot.config import ConfigError, load_config
from bot.deliver.slack_poster import web_client
from bot.serve import open_state, start_schedules
from bot.slack.app import build_app
from bot.slack.server import SlackHTTPServer
from tests.schedule.conftest import ALLOWED, CHANNEL, World, config
from tests.support.slack_api import post_signed, slash_command_body

SECRET = "8f742231b10e8888abcd99yyyzzz85a5"


def test_a_corrupt_state_file_costs_the_schedules_not_the_diagnoses(
    world: World, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    broken = tmp_path / "broken" / "raydiag-state.db"
    broken.parent.mkdir()
    broken.write_bytes(b"\x00\x01 half-written by a full disk \xff" * 300)
    settings = config(state={"url": f"sqlite:///{broken}"})

    with caplog.at_level(logging.ERROR, logger="bot.serve"):
        store = open_state(settings)
    assert store is None
    [line] = [r.getMessage() for r in caplog.records if r.name == "bot.serve"]
    assert str(broken) in line and "not a usable SQLite file" in line and "running without schedules" in line
    assert "\n" not in line

    bot = world.new_bot(store)
    assert start_schedules(bot, web_client("xoxb-test", world.slack.url)) is None
    server = SlackHTTPServer(
        build_app(bot, token="xoxb-test", signing_secret=SECRET, api_url=world.slack.url), "127.0.0.1", 0
    )
    server.start_background()
    try:
        url = server.url + "/slack/events"
        schedule = post_signed(
            url,
            slash_command_body(text="schedule add gpu-prod 0 9 * * *", user_id=ALLOWED, channel_id=CHANNEL),
            SECRET,
        )
        diagnose = post_signed(
            url,
            slash_command_body(
                text="gpu-prod", user_id=ALLOWED, channel_id=CHANNEL, response_url=world.slack.response_url()
            ),
            SECRET,
        )
        [posted] = world.slack.wait_for("chat.postMessage", count=1, timeout=20)
    finally:
        server.shutdown()
        server.server_close()
        bot.runs.shutdown()
    assert "not running here (`schedule-add`); diagnoses still work" in json.dumps(schedule.json())
    assert diagnose.status == 200 and posted.params["channel"] == CHANNEL
    assert broken.read_bytes().startswith(b"\x00\x01 half-written")


def test_the_default_state_database_is_a_file_in_the_data_folder(tmp_path: Path) -> None:
    settings = config()
    data = tmp_path / "var" / "lib" / "raydiag"
    assert (
        settings.state.database_url({"RAYDIAG_DATA_DIR": str(data)}) == f"sqlite:///{data}/raydiag-state.db"
    )
    assert settings.state.database_url({"XDG_DATA_HOME": str(tmp_path / "xdg")}) == (
        f"sqlite:///{tmp_path}/xdg/raydiag/raydiag-state.db"
    )
    store = open_state(settings, {"RAYDIAG_DATA_DIR": str(data)})
    assert store is not None
    store.close()
    assert (data / "raydiag-state.db").is_file()


def test_start_schedules_runs_them_when_the_store_opened(world: World) -> None:
    scheduler = start_schedules(world.bot, world.posts.client)
    try:
        assert scheduler is not None and scheduler.leading
        assert {"schedule-add", "schedule-list", "schedule-remove"} <= set(world.bot.handlers)
    finally:
        assert scheduler is not None
        scheduler.shutdown()


@pytest.mark.parametrize(
    ("schedules", "health_posts", "problem"),
    [
        (
            [{"channel": CHANNEL, "cluster": "gpu-prod", "cron": "0 9 * *"}],
            {},
            "schedules.0: Value error, 0 9 * *: give five fields",
        ),
        (
            [{"channel": CHANNEL, "cluster": "gpu-prod", "cron": "0 25 * * *"}],
            {},
            "schedules.0: Value error, 0 25 * *",
        ),
        (
            [{"channel": CHANNEL, "cluster": "gpu-prod", "cron": "0 9 * * *", "timezone": "Mars/Olympus"}],
            {},
            "unknown time zone Mars/Olympus",
        ),
        (
            [{"channel": "#ml-platform", "cluster": "gpu-prod", "cron": "0 9 * * *"}],
            {},
            "schedules.0.channel: Value error, not a Slack channel ID",
        ),
        (
            [{"channel": CHANNEL, "cluster": "staging", "cron": "0 9 * * *"}],
            {},
            "schedules name clusters that are not configured: staging",
        ),
        (
            [{"channel": CHANNEL, "cluster": "gpu-prod", "cron": "0 9 * * *", "mode": "weekly"}],
            {},
            "schedules.0.mode",
        ),
        (
            [],
            {"thresholds_minutes": [40, -5]},
            "health_posts.thresholds_minutes: Value error, each threshold",
        ),
        ([], {"unchanged": "delete"}, "health_posts.unchanged"),
    ],
)
def test_a_bad_schedule_in_the_config_stops_start_up_with_its_key_path(
    tmp_path: Path, schedules: list[object], health_posts: dict[str, object], problem: str
) -> None:
    path = tmp_path / "raydiag.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "clusters": [{"name": "gpu-prod", "namespace": "ml"}],
                "schedules": schedules,
                "health_posts": health_posts,
            }
        )
    )
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    assert problem in str(raised.value)


def test_the_example_config_documents_state_and_schedules() -> None:
    example = load_config(Path(__file__).resolve().parents[2] / "deploy" / "config.example.yaml")
    assert example.schedules and example.state.url is None
    assert example.health_posts.thresholds_minutes == [40, 120]
