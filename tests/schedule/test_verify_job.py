"""The re-verification as the leader runs it: its minute job, its claims, mutes and locks.

The cluster is a recorded scenario (both layers). These tests are about when the verifier speaks,
not about probing, so the probe here is a stand-in that answers like a probe that ran on the
scenario's A100 worker; the probe itself is tested against a real Ray in test_verify_live.py.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from slack_sdk import WebClient

from bot.config import Config
from bot.deliver.slack_poster import web_client
from bot.probes.gpu import GpuProbeResult
from bot.schedule.service import start_health_posts
from bot.schedule.verify import TICK_S, VERIFY_JOB, Verifier, VerifyOutcome
from bot.slack.bot import Bot
from bot.snapshot.data import load
from bot.store import open_store
from tests.slack.test_bot_scenarios import recorded
from tests.store.manual_clock import ManualClock
from tests.support import scenarios
from tests.support.cluster import CLUSTER, NS, Bundle
from tests.support.slack_api import SlackWebAPI, serve_slack

START = datetime(2026, 12, 1, 8, 0, tzinfo=UTC)
CHANNEL = "C0MLPLATFORM"


def config(**verify: Any) -> Config:
    return load(
        Config,
        {
            "clusters": [
                {
                    "name": "gpu-prod",
                    "namespace": NS,
                    "raycluster": CLUSTER,
                    "dashboard_url": "http://ray:8265",
                },
                {
                    "name": "gpu-dev",
                    "namespace": NS,
                    "raycluster": CLUSTER,
                    "dashboard_url": "http://ray-dev:8265",
                },
            ],
            "verify": {"channel": CHANNEL, **verify},
        },
    )


class Probes:
    """Answers each probe as one that ran on the scenario's first A100 worker; counts them."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, str]] = []

    def __call__(
        self,
        url: str,
        *,
        gpu_type: str | None,
        timeout_s: float,
        start_timeout_s: float | None,
        poll_s: float,
    ) -> GpuProbeResult:
        self.asked.append((url, gpu_type or "any GPU"))
        return GpuProbeResult(
            outcome="ran",
            dashboard_url=url,
            driver_started=True,
            node_ip="10.8.3.10",
            cuda_visible_devices="0",
            gpu_ids=("0",),
            elapsed_s=3.0,
        )


class Cluster:
    """What the recorded scenario shows now; a test upgrades its device plugin."""

    def __init__(self) -> None:
        self.bundle: Bundle = scenarios.healthy()
        self.unreadable: set[str] = set()  # clusters whose collection raises

    def diagnose(self, cluster: Any, namespace: str) -> Any:
        if cluster.name in self.unreadable:
            raise RuntimeError("the API server went away")
        return recorded(self.bundle)(cluster, namespace)

    def upgrade_device_plugin(self, tag: str) -> None:
        bundle = copy.deepcopy(self.bundle)
        for pod in bundle.items("device_plugin_pods"):
            for container in pod["spec"]["containers"]:
                container["image"] = container["image"].rsplit(":", 1)[0] + ":" + tag
        self.bundle = bundle


@pytest.fixture
def slack() -> Iterator[SlackWebAPI]:
    with serve_slack() as api:
        yield api


class Leader:
    """One replica's re-verification on a hand-moved clock, with the stand-in probe."""

    def __init__(
        self, tmp_path: Path, slack: SlackWebAPI, settings: Config, cluster: Cluster, clock: ManualClock
    ) -> None:
        self.clock = clock
        self.store = open_store(f"sqlite:///{tmp_path}/state.db", clock=clock)
        self.bot = Bot(config=settings, diagnose=cluster.diagnose, store=self.store)
        self.probes = Probes()
        self.verifier = Verifier(self.bot, self.store, web_client("xoxb-test", slack.url), probe=self.probes)

    def tick(self, at: datetime) -> list[VerifyOutcome]:
        self.clock.set(at)
        return self.verifier.tick()

    def close(self) -> None:
        self.bot.runs.shutdown()
        self.store.close()


@contextlib.contextmanager
def leaders(
    tmp_path: Path, slack: SlackWebAPI, settings: Config, cluster: Cluster, count: int = 1
) -> Iterator[list[Leader]]:
    """``count`` replicas on one database and one clock."""
    clock = ManualClock(START)
    made = [Leader(tmp_path, slack, settings, cluster, clock) for _ in range(count)]
    try:
        yield made
    finally:
        for one in made:
            one.close()


def started(tmp_path: Path, settings: Config) -> tuple[Bot, Any]:
    store = open_store(f"sqlite:///{tmp_path / 'state.db'}")
    bot = Bot(config=settings, diagnose=Cluster().diagnose, store=store)
    return bot, start_health_posts(bot, WebClient(token="xoxb-test", base_url="http://127.0.0.1:9/"))


def stopped(bot: Bot, scheduler: Any) -> None:
    scheduler.shutdown()
    bot.runs.shutdown()
    if bot.store is not None:
        bot.store.close()


def test_the_leader_ticks_every_minute_when_verification_is_on(tmp_path: Path) -> None:
    bot, scheduler = started(tmp_path, config(check_minutes=30))
    try:
        job = scheduler.apscheduler.get_job(VERIFY_JOB)
        assert job is not None and job.trigger.interval == timedelta(seconds=TICK_S)
        outcomes = job.func()  # the minute's tick, without waiting for it
        assert [(o.cluster, o.action, o.reason) for o in outcomes] == [
            ("gpu-prod", "remembered", "first run"),
            ("gpu-dev", "remembered", "first run"),
        ]
    finally:
        stopped(bot, scheduler)


def test_no_job_when_verification_is_off(tmp_path: Path) -> None:
    bot, scheduler = started(tmp_path, config())
    try:
        assert scheduler.apscheduler.get_job(VERIFY_JOB) is None
    finally:
        stopped(bot, scheduler)


def test_an_upgrade_is_verified_once_and_a_muted_cluster_is_verified_silently(
    tmp_path: Path, slack: SlackWebAPI
) -> None:
    cluster = Cluster()
    with leaders(tmp_path, slack, config(check_minutes=30), cluster) as [live]:
        assert [o.action for o in live.tick(START)] == ["remembered", "remembered"]
        cluster.upgrade_device_plugin("v0.17.0")
        live.bot.mutes.mute("gpu-dev", 3600)
        prod, dev = live.tick(START + timedelta(minutes=30))
        assert (prod.action, prod.reason, dev.action) == ("upgrade", "passed", "upgrade")
        assert [(u.part, u.before, u.after) for u in prod.upgrades] == [
            ("device_plugin", "v0.16.2", "v0.17.0")
        ]
        # One probe per pool of each cluster: any GPU, and the A100 type both workers register.
        assert sorted(live.probes.asked) == [
            ("http://ray-dev:8265", "A100"),
            ("http://ray-dev:8265", "any GPU"),
            ("http://ray:8265", "A100"),
            ("http://ray:8265", "any GPU"),
        ]
        posts = slack.calls_to("chat.postMessage")
        assert len(posts) == 1 and prod.posted and dev.posted == ()  # the muted cluster is not told
        assert not posts[0].params.get("thread_ts")  # no health post yet: a message of its own
        later = live.tick(START + timedelta(minutes=60))
        assert [o.reason for o in later] == ["versions unchanged", "versions unchanged"]
        assert len(slack.calls_to("chat.postMessage")) == 1


def test_two_leaders_at_the_same_minute_verify_once(tmp_path: Path, slack: SlackWebAPI) -> None:
    cluster = Cluster()
    with leaders(tmp_path, slack, config(probe_minutes=60), cluster, count=2) as [first, second]:
        assert [o.action for o in first.tick(START)] == ["probed", "probed"]
        # The other replica saw nothing of it in memory, but the store says it is not due.
        assert [o.action for o in second.tick(START)] == ["quiet", "quiet"]
        assert len(first.probes.asked) == 4 and second.probes.asked == []


def test_a_pressed_probe_defers_the_scheduled_one_and_a_failing_cluster_does_not_stop_the_next(
    tmp_path: Path, slack: SlackWebAPI
) -> None:
    cluster = Cluster()
    cluster.unreadable.add("gpu-prod")
    with leaders(tmp_path, slack, config(probe_minutes=60), cluster) as [live]:
        assert live.bot.probe_locks.try_acquire("gpu-dev")  # someone pressed the GPU probe button
        prod, dev = live.tick(START)
        assert (prod.action, prod.reason) == ("skipped", "failed")
        assert (dev.action, dev.reason) == ("skipped", "probe-busy") and live.probes.asked == []
        live.bot.probe_locks.release("gpu-dev")
        assert live.tick(START + timedelta(minutes=1))[1].action == "probed"  # the next minute tries again


def test_an_upgrade_slack_refuses_to_hear_is_not_verified_again(tmp_path: Path, slack: SlackWebAPI) -> None:
    cluster = Cluster()
    with leaders(tmp_path, slack, config(check_minutes=30), cluster) as [live]:
        live.tick(START)
        cluster.upgrade_device_plugin("v0.17.0")
        slack.fail("chat.postMessage", "channel_not_found", status=200, times=None)
        prod, _ = live.tick(START + timedelta(minutes=30))
        assert (prod.action, prod.posted) == ("upgrade", ())
        asked = len(live.probes.asked)
        # No second round of probes a minute later.
        assert [o.reason for o in live.tick(START + timedelta(minutes=31))] == ["not due", "not due"]
        assert len(live.probes.asked) == asked
