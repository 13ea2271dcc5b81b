"""Scheduled health posts, run by run: what reaches the channel, and what does not.

Each test calls the run for a fire time directly (``world.run(schedule, at)``) with the clock set
to that time — exactly what the APScheduler job does once its trigger fires — so an afternoon of
quarter-hourly runs takes milliseconds. Slack is the loopback stand-in: posts, edits and file
uploads are real Web API calls from ``slack_sdk``. The APScheduler wiring itself is tested in
``test_scheduler.py``. What must hold across processes (restart, two replicas, a mute pressed on
one and honoured by another) is checked on SQLite and on a real PostgreSQL.
"""

from __future__ import annotations

import io
import json
import threading
from datetime import timedelta

import pytest
from PIL import Image

from bot.config import Config
from bot.deliver.slack_poster import web_client
from bot.schedule.posts import RunOutcome, ScheduledPosts
from bot.slack.app import build_app
from bot.slack.server import SlackHTTPServer
from tests.schedule.conftest import (
    CHANNEL,
    MORNING,
    PENDING_CREATED,
    ZH_CHANNEL,
    World,
    config,
    valid_message,
)
from tests.support import scenarios
from tests.support.scenarios import PENDING
from tests.support.slack_api import block_actions_body, post_signed

SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
QUARTER = timedelta(minutes=15)


def headline(world: World, index: int = -1) -> str:
    return str(world.posts_made()[index].params["text"])


def test_a_schedule_fires_and_posts_both_layers_with_the_capacity_chart_in_its_thread(world: World) -> None:
    world.show(scenarios.third_gpu_worker_no_free_gpu())
    schedule = world.schedule()

    outcome = world.run(schedule, MORNING)

    assert (outcome.action, outcome.reason) == ("post", "first")
    [post] = world.posts_made()
    valid_message(post)
    assert post.params["channel"] == CHANNEL
    shown = json.dumps(post.params["blocks"])
    assert "Kubernetes layer" in shown and "Ray layer" in shown and "RD0101" in shown
    assert "scheduled post `*/15 * * * *` (UTC)" in post.params["text"]
    [upload] = world.slack.calls_to("files.completeUploadExternal")
    assert upload.params["channel_id"] == CHANNEL and upload.params["thread_ts"] == outcome.message_ts
    [png] = world.slack.uploads.values()
    with Image.open(io.BytesIO(png)) as chart:
        assert chart.format == "PNG" and chart.size == (1200, 600)
    # One diagnosis, made by the bot's Diagnoser and metered as the schedule's.
    registry = world.bot.metrics.registry
    assert registry.get_sample_value("raydiag_diagnosis_seconds_count", {"trigger": "schedule"}) == 1


def test_the_same_findings_on_the_next_run_update_the_last_post_in_place(world: World) -> None:
    world.show(scenarios.third_gpu_worker_no_free_gpu())
    schedule = world.schedule()
    first = world.run(schedule, MORNING)

    second = world.run(schedule, MORNING + QUARTER)

    assert (second.action, second.reason) == ("edit", "unchanged")
    assert len(world.posts_made()) == 1
    [update] = world.slack.calls_to("chat.update")
    valid_message(update)
    assert update.params["ts"] == first.message_ts and update.params["channel"] == CHANNEL
    assert "no change since 09:15 UTC; figures as of 09:30 UTC" in update.params["text"]
    # The Pending Pod's age moved on in the edited figures: 17 min at 09:30.
    assert "17 min" in json.dumps(update.params["blocks"])


def test_with_edits_turned_off_an_unchanged_run_says_nothing_at_all(world: World) -> None:
    world.settings = config(health_posts={"unchanged": "quiet"})
    world.restart()
    schedule = world.schedule()
    world.run(schedule, MORNING)

    outcome = world.run(schedule, MORNING + QUARTER)

    assert (outcome.action, outcome.reason) == ("quiet", "unchanged")
    assert len(world.posts_made()) == 1 and world.slack.calls_to("chat.update") == []


def test_a_new_finding_posts_and_its_end_posts_the_all_clear(world: World) -> None:
    schedule = world.schedule()
    world.run(schedule, MORNING)

    world.show(scenarios.third_gpu_worker_no_free_gpu())
    appeared = world.run(schedule, MORNING + QUARTER)
    world.show(scenarios.healthy())
    cleared = world.run(schedule, MORNING + 2 * QUARTER)

    assert [(o.action, o.reason) for o in (appeared, cleared)] == [("post", "changed"), ("post", "resolved")]
    texts = [call.params["text"] for call in world.posts_made()]
    assert len(texts) == 3
    assert f"new: Pod {PENDING} is Pending" in texts[1]
    assert "all clear" in texts[2]
    for call in world.posts_made():
        valid_message(call)


def test_a_finding_swapped_for_another_posts_the_new_one(world: World) -> None:
    world.show(scenarios.third_gpu_worker_no_free_gpu())
    schedule = world.schedule()
    world.run(schedule, MORNING)

    world.show(scenarios.gpu_worker_runs_but_never_joined())
    outcome = world.run(schedule, MORNING + QUARTER)

    assert (outcome.action, outcome.reason) == ("post", "changed")
    assert "new:" in headline(world) and "cause 8" in headline(world)


def test_a_pending_pod_is_announced_once_per_duration_threshold(world: World) -> None:
    world.show(scenarios.third_gpu_worker_no_free_gpu())
    schedule = world.schedule()
    runs = {
        minutes: world.run(schedule, PENDING_CREATED.replace(second=0) + timedelta(minutes=minutes))
        for minutes in (18, 33, 48, 63, 78, 123, 138)
    }

    spoke = {minutes: o.reason for minutes, o in runs.items() if o.action == "post"}
    assert spoke == {18: "first", 48: "threshold", 123: "threshold"}
    texts = [call.params["text"] for call in world.posts_made()]
    assert f"`{PENDING}` still pending after 40 min" in texts[1]
    assert f"`{PENDING}` still pending after 120 min" in texts[2]
    assert {o.action for m, o in runs.items() if m not in spoke} == {"edit"}


def test_young_pending_pods_while_the_autoscaler_adds_a_node_are_not_alarms(world: World) -> None:
    schedule = world.schedule()
    world.run(schedule, MORNING)

    # cluster-autoscaler has triggered a scale-up for the new worker, created at 09:12:41.
    world.show(scenarios.autoscaler_scaled_up())
    within_grace = world.run(schedule, PENDING_CREATED + timedelta(minutes=7))
    past_grace = world.run(schedule, PENDING_CREATED + timedelta(minutes=12))

    assert (within_grace.action, within_grace.reason) == ("edit", "unchanged")
    assert (past_grace.action, past_grace.reason) == ("post", "changed")
    assert ":arrows_counterclockwise:" in json.dumps(world.posts_made()[-1].params["blocks"])


@pytest.mark.parametrize("world", ["sqlite", "postgresql"], indirect=True)
def test_the_mute_button_silences_scheduled_posts_across_a_restart_until_it_ends(world: World) -> None:
    schedule = world.schedule()
    first = world.run(schedule, MORNING)
    app = build_app(world.bot, token="xoxb-test", signing_secret=SECRET, api_url=world.slack.url)
    server = SlackHTTPServer(app, "127.0.0.1", 0)
    server.start_background()
    try:
        body = block_actions_body(
            "raydiag_mute",
            value=json.dumps({"cluster": "gpu-prod"}),
            user_id="U0ENGINEER",
            channel_id=CHANNEL,
            message_ts=str(first.message_ts),
            message_blocks=world.posts_made()[0].params["blocks"],
        )
        assert post_signed(server.url + "/slack/events", body, SECRET).status == 200
        world.slack.wait_for("chat.postMessage", count=2, timeout=10)
    finally:
        server.shutdown()
        server.server_close()

    world.show(scenarios.third_gpu_worker_no_free_gpu())
    while_muted = world.run(schedule, MORNING + QUARTER)
    world.restart()
    after_restart = world.run(schedule, MORNING + 4 * QUARTER)
    next_day = world.run(schedule, MORNING + timedelta(hours=24, minutes=15))

    assert [o.reason for o in (while_muted, after_restart)] == ["muted", "muted"]
    assert {o.action for o in (while_muted, after_restart)} == {"quiet"}
    assert (next_day.action, next_day.reason) == ("post", "changed")
    assert len(world.posts_made()) == 2 and world.slack.calls_to("chat.update") == []


@pytest.mark.parametrize("world", ["sqlite", "postgresql"], indirect=True)
def test_a_restart_keeps_the_schedule_and_never_posts_a_claimed_run_twice(world: World) -> None:
    world.show(scenarios.third_gpu_worker_no_free_gpu())
    schedule = world.schedule()
    world.run(schedule, MORNING)

    world.restart()
    replayed = world.run(schedule, MORNING)
    next_run = world.run(schedule, MORNING + QUARTER)

    assert world.store.schedule(schedule.id) == schedule
    assert (replayed.action, replayed.reason) == ("skipped", "claimed-elsewhere")
    # What was last posted survived too: the next run is an edit, not a second "first" post.
    assert (next_run.action, next_run.reason) == ("edit", "unchanged")
    assert len(world.posts_made()) == 1


@pytest.mark.parametrize("world", ["sqlite", "postgresql"], indirect=True)
def test_two_replicas_firing_the_same_run_post_it_once(world: World) -> None:
    world.show(scenarios.third_gpu_worker_no_free_gpu())
    schedule = world.schedule()
    other_store = world.open()
    replicas = [
        world.posts,
        ScheduledPosts(world.new_bot(other_store), other_store, web_client("xoxb-test", world.slack.url)),
    ]
    start = threading.Barrier(2)
    outcomes: list[RunOutcome] = []

    def fire(runner: ScheduledPosts) -> None:
        start.wait()
        outcomes.append(runner.run(schedule.id, MORNING))

    threads = [threading.Thread(target=fire, args=(runner,)) for runner in replicas]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)

    assert sorted(o.action for o in outcomes) == ["post", "skipped"]
    assert len(world.posts_made()) == 1


def test_a_digest_posts_every_run_even_when_nothing_changed(world: World) -> None:
    schedule = world.schedule("0 9 * * *", mode="digest")
    days = [world.run(schedule, MORNING.replace(minute=0) + timedelta(days=day)) for day in range(3)]

    assert [o.action for o in days] == ["post"] * 3
    assert [o.reason for o in days] == ["first", "digest", "digest"]
    texts = [call.params["text"] for call in world.posts_made()]
    assert "scheduled digest `0 9 * * *` (UTC), posted every run" in texts[0]
    assert all("— digest" in text for text in texts[1:])


def test_a_chinese_channel_gets_the_post_in_chinese(world: World) -> None:
    world.show(scenarios.third_gpu_worker_no_free_gpu())
    schedule = world.schedule(channel=ZH_CHANNEL)
    world.run(schedule, MORNING)
    world.run(schedule, PENDING_CREATED + timedelta(minutes=41))

    first, later = world.posts_made()
    assert "定时播报" in first.params["text"]
    assert f"`{PENDING}` 已 Pending 超过 40 分钟" in later.params["text"]
    valid_message(later)


def test_a_removed_schedule_or_an_unconfigured_cluster_posts_nothing(world: World) -> None:
    gone = world.schedule()
    world.store.remove_schedule(gone.id)
    orphan = world.schedule()
    world.settings = Config()
    world.restart()

    assert world.run(gone, MORNING).reason == "gone"
    assert world.run(orphan, MORNING).reason == "unknown-cluster"
    assert world.slack.calls_to("chat.postMessage") == []


def test_a_run_slack_refuses_is_logged_and_not_retried(world: World) -> None:
    world.slack.fail("chat.postMessage", error="channel_not_found", status=200, times=1)
    schedule = world.schedule()

    failed = world.run(schedule, MORNING)
    again = world.run(schedule, MORNING)

    assert (failed.action, failed.reason) == ("skipped", "failed")
    assert (again.action, again.reason) == ("skipped", "claimed-elsewhere")
    assert len(world.slack.calls_to("chat.postMessage")) == 1
