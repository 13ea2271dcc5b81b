"""The APScheduler wiring: jobs in the state database, missed runs coalesced, only the leader runs.

These tests run a real ``BackgroundScheduler`` with the SQLAlchemy job store on the test's SQLite
file. APScheduler keeps real time, so instead of waiting for a cron to come round, a test moves a
job's stored next run time into the past with APScheduler's own ``modify_job`` — which is exactly
what a bot that was down when the job was due finds on start. The scheduler then runs the job at
once; the waits below are bounded by the Slack stand-in's ``wait_for`` (seconds, not minutes),
plus one short pause to show that nothing else follows.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from bot.schedule.jobs import HealthScheduler, install, job_id, latest_fire_time, next_run
from bot.serve import start_schedules
from bot.store import CONFIG_OWNER, Schedule
from tests.schedule.conftest import CHANNEL, World, config
from tests.support.cluster import NS

NOTHING_MORE_S = 1.0


@pytest.fixture
def live(world: World) -> Iterator[World]:
    """The world on real time (APScheduler's clock), its runner installed for the job function."""
    world.clock.set(datetime.now(UTC).replace(microsecond=0))
    install(world.posts)
    yield world
    install(None)


@pytest.fixture
def schedulers() -> Iterator[list[HealthScheduler]]:
    started: list[HealthScheduler] = []
    yield started
    for scheduler in started:
        scheduler.shutdown()


def hourly_far_from_now(world: World) -> Schedule:
    """An hourly schedule whose next regular run is about half an hour away: never during a test."""
    minute = (world.clock().minute + 30) % 60
    return world.schedule(f"{minute} * * * *")


def fell_due(scheduler: HealthScheduler, schedule: Schedule, hours_ago: int) -> datetime:
    """As if the bot had stopped ``hours_ago`` hours ago: the job's stored next run lies in the past."""
    missed = latest_fire_time(schedule, datetime.now(UTC) - timedelta(hours=hours_ago))
    assert missed is not None
    scheduler.apscheduler.modify_job(job_id(schedule.id), jobstore="default", next_run_time=missed)
    return missed


@pytest.mark.parametrize("world", ["sqlite", "postgresql"], indirect=True)
def test_runs_missed_during_downtime_are_posted_once_after_the_restart(
    live: World, schedulers: list[HealthScheduler]
) -> None:
    """The replica that kept the job was a follower: shutting it down must not consume the overdue run."""
    schedule = hourly_far_from_now(live)
    before = HealthScheduler(live.store)
    schedulers.append(before)
    before.start(leading=False)
    assert (before.next_run_time(schedule.id) or datetime.min.replace(tzinfo=UTC)) > live.clock()
    fell_due(before, schedule, hours_ago=3)
    before.shutdown()

    live.restart()
    install(live.posts)
    after = HealthScheduler(live.store)
    schedulers.append(after)
    after.start(leading=True)

    live.slack.wait_for("chat.postMessage", count=1, timeout=15)
    time.sleep(NOTHING_MORE_S)
    assert len(live.posts_made()) == 1
    assert live.posts_made()[0].params["channel"] == CHANNEL
    # Three missed hourly runs became one; the job's next run is the next regular one.
    assert after.next_run_time(schedule.id) == next_run(schedule, live.clock())
    latest = latest_fire_time(schedule, live.clock())
    assert latest is not None and not live.store.claim_run(schedule.id, latest, live.clock())


def test_a_follower_keeps_jobs_but_runs_none_until_it_leads(
    live: World, schedulers: list[HealthScheduler]
) -> None:
    schedule = hourly_far_from_now(live)
    replica = HealthScheduler(live.store)
    schedulers.append(replica)
    replica.start(leading=False)
    fell_due(replica, schedule, hours_ago=1)
    replica.apscheduler.wakeup()

    time.sleep(NOTHING_MORE_S)
    assert live.slack.calls_to("chat.postMessage") == [] and not replica.leading

    replica.lead()
    live.slack.wait_for("chat.postMessage", count=1, timeout=15)
    assert replica.leading


@pytest.mark.parametrize("world", ["sqlite", "postgresql"], indirect=True)
def test_two_schedulers_that_both_think_they_lead_still_post_a_run_once(
    live: World, schedulers: list[HealthScheduler]
) -> None:
    schedule = hourly_far_from_now(live)
    first, second = HealthScheduler(live.store), HealthScheduler(live.open())
    schedulers.extend([first, second])
    first.start(leading=False)
    second.start(leading=False)
    fell_due(first, schedule, hours_ago=1)

    first.lead()
    second.lead()
    live.slack.wait_for("chat.postMessage", count=1, timeout=15)
    time.sleep(NOTHING_MORE_S)
    assert len(live.posts_made()) == 1


def test_jobs_follow_the_schedules_table_whichever_replica_changed_it(
    live: World, schedulers: list[HealthScheduler]
) -> None:
    kept = live.schedule("0 9 * * 1-5")
    dropped = live.schedule("0 17 * * 5")
    scheduler = HealthScheduler(live.store)
    schedulers.append(scheduler)
    scheduler.start(leading=False)
    assert scheduler.next_run_time(kept.id) is not None and scheduler.next_run_time(dropped.id) is not None

    # Another replica (its own store on the same database) adds one schedule and removes another.
    other = live.open()
    added = other.add_schedule(
        channel=CHANNEL,
        cluster="gpu-prod",
        namespace=NS,
        cron="30 8 * * *",
        timezone="Asia/Shanghai",
        mode="digest",
        created_by="U0GPUOPS01",
        now=live.clock(),
    )
    other.remove_schedule(dropped.id)
    scheduler.reconcile()

    assert scheduler.next_run_time(added.id) == next_run(added, datetime.now(UTC))
    assert scheduler.next_run_time(dropped.id) is None
    assert scheduler.next_run_time(kept.id) is not None


def test_configured_schedules_are_synced_at_every_start_without_duplicates(world: World) -> None:
    world.settings = config(
        schedules=[
            {"channel": CHANNEL, "cluster": "gpu-prod", "cron": "0 9 * * 1-5", "timezone": "Europe/Berlin"},
            {"channel": "C0ZHTEAM01", "cluster": "gpu-prod", "cron": "0 18 * * *", "mode": "digest"},
        ]
    )
    started = []
    try:
        for _ in range(2):
            world.restart()
            # As `raydiag serve` starts them: the posts, and `/raydiag schedule` wired to them.
            scheduler = start_schedules(world.bot, world.posts.client, leading=False)
            assert scheduler is not None
            started.append(scheduler)
            scheduler.shutdown()
    finally:
        install(None)

    stored = world.store.schedules()
    assert len(stored) == 2 and {s.created_by for s in stored} == {CONFIG_OWNER}
    assert {(s.channel, s.cron, s.timezone, s.mode, s.namespace) for s in stored} == {
        (CHANNEL, "0 9 * * 1-5", "Europe/Berlin", "changes", NS),
        ("C0ZHTEAM01", "0 18 * * *", "UTC", "digest", NS),
    }
    assert {"schedule-add", "schedule-list", "schedule-remove"} <= set(world.bot.handlers)


@pytest.mark.parametrize(
    ("cron", "timezone", "now", "latest"),
    [
        # Weekdays 09:00 in Berlin (CET, UTC+1): Monday 10:30 local → that morning's run.
        ("0 9 * * 1-5", "Europe/Berlin", "2025-03-03T09:30:00+00:00", "2025-03-03T08:00:00+00:00"),
        # On Saturday the latest weekday run is Friday's.
        ("0 9 * * 1-5", "Europe/Berlin", "2025-03-08T12:00:00+00:00", "2025-03-07T08:00:00+00:00"),
        # Crontab's Sunday is 0 or 7 (APScheduler 3 alone would read 0 as Monday and refuse 7).
        ("0 9 * * 0", "UTC", "2025-03-03T12:00:00+00:00", "2025-03-02T09:00:00+00:00"),
        ("0 9 * * 7", "UTC", "2025-03-03T12:00:00+00:00", "2025-03-02T09:00:00+00:00"),
        ("0 9 * * sat-sun", "UTC", "2025-03-07T12:00:00+00:00", "2025-03-02T09:00:00+00:00"),
        # Exactly at the fire time, that run is the latest.
        ("*/15 * * * *", "UTC", "2025-03-03T09:15:00+00:00", "2025-03-03T09:15:00+00:00"),
        # Monthly: looked for months back.
        ("0 6 1 * *", "UTC", "2025-03-31T23:00:00+00:00", "2025-03-01T06:00:00+00:00"),
    ],
)
def test_the_latest_fire_time_is_the_run_a_late_job_is_for(
    cron: str, timezone: str, now: str, latest: str
) -> None:
    schedule = Schedule(
        "a1b2c3", CHANNEL, "gpu-prod", NS, cron, timezone, "changes", "U0GPUOPS01", datetime.now(UTC)
    )
    assert latest_fire_time(schedule, datetime.fromisoformat(now)) == datetime.fromisoformat(latest)
