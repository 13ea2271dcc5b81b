"""A bot with a state store, a Slack stand-in and a hand-moved clock, for scheduled-post tests.

The cluster is one of the realistic scenarios of ``tests/support/scenarios.py``; a test changes
what the cluster shows between runs with ``world.show(...)`` and moves time with ``world.clock``.
The Pending worker of those scenarios was created at 09:12:41 UTC on 2026-11-30.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from slack_sdk.models.blocks import Block

from bot.classify import classify
from bot.config import Config
from bot.deliver.slack_poster import web_client
from bot.read.snapshot_file import parse_snapshot
from bot.schedule.posts import RunOutcome, ScheduledPosts
from bot.slack.bot import Bot
from bot.snapshot.data import load
from bot.snapshot.model import Snapshot
from bot.store import Schedule, Store, open_store
from tests.store.manual_clock import ManualClock
from tests.support import scenarios
from tests.support.cluster import CLUSTER, NS, Bundle
from tests.support.postgres import shared
from tests.support.slack_api import Call, SlackWebAPI, serve_slack

CHANNEL = "C0MLPLATFORM"
ZH_CHANNEL = "C0ZHTEAM01"
ALLOWED = "U0GPUOPS01"
PENDING_CREATED = datetime(2026, 11, 30, 9, 12, 41, tzinfo=UTC)
MORNING = datetime(2026, 11, 30, 9, 15, tzinfo=UTC)


def config(**extra: Any) -> Config:
    return load(
        Config,
        {
            "clusters": [{"name": "gpu-prod", "namespace": NS, "raycluster": CLUSTER}],
            "probes": {"allowed_users": [ALLOWED]},
            "slack": {"languages": {"channels": {ZH_CHANNEL: "zh"}}},
            **extra,
        },
    )


class World:
    """The bot as the scheduler sees it: store, Slack client, the cluster's current snapshot."""

    def __init__(self, slack: SlackWebAPI, url: str, clock: ManualClock, settings: Config) -> None:
        self.slack = slack
        self.url = url
        self.clock = clock
        self.settings = settings
        self.snapshot: Snapshot = parse_snapshot(scenarios.healthy().to_json())
        self.stores: list[Store] = []
        self.store = self.open()
        self.bot = self.new_bot(self.store)
        self.posts = ScheduledPosts(self.bot, self.store, web_client("xoxb-test", slack.url))

    def open(self) -> Store:
        self.stores.append(open_store(self.url, clock=self.clock))
        return self.stores[-1]

    def new_bot(self, store: Store | None) -> Bot:
        return Bot(
            config=self.settings,
            diagnose=lambda cluster, namespace: classify(self.snapshot),
            store=store,
            snapshot_of=lambda cluster, namespace: self.snapshot,
        )

    def restart(self) -> None:
        """A new process: a new store on the same database file, a new bot and runner."""
        self.store.close()
        self.bot.runs.shutdown()
        self.store = self.open()
        self.bot = self.new_bot(self.store)
        self.posts = ScheduledPosts(self.bot, self.store, web_client("xoxb-test", self.slack.url))

    def show(self, bundle: Bundle) -> None:
        self.snapshot = parse_snapshot(bundle.to_json())

    def schedule(
        self, cron: str = "*/15 * * * *", *, mode: str = "changes", channel: str = CHANNEL
    ) -> Schedule:
        return self.store.add_schedule(
            channel=channel,
            cluster="gpu-prod",
            namespace=NS,
            cron=cron,
            timezone="UTC",
            mode="digest" if mode == "digest" else "changes",
            created_by=ALLOWED,
            now=self.clock(),
        )

    def run(self, schedule: Schedule, at: datetime) -> RunOutcome:
        """The run due at ``at``, started at ``at`` (what the APScheduler job does, minus the waiting)."""
        self.clock.set(at)
        return self.posts.run(schedule.id, at)

    def posts_made(self) -> list[Call]:
        return [c for c in self.slack.calls_to("chat.postMessage") if not c.params.get("thread_ts")]

    def close(self) -> None:
        self.bot.runs.shutdown()
        for store in self.stores:
            store.close()


@pytest.fixture
def slack() -> Iterator[SlackWebAPI]:
    with serve_slack() as api:
        yield api


@pytest.fixture
def world(slack: SlackWebAPI, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[World]:
    """On a SQLite file; ``@pytest.mark.parametrize("world", ["postgresql"], indirect=True)`` for PostgreSQL."""
    backend = getattr(request, "param", "sqlite")
    if backend == "postgresql":
        url = shared.fresh_database(request.getfixturevalue("postgres"))
    else:
        url = f"sqlite:///{tmp_path}/state/raydiag-state.db"
    made = World(slack, url, ManualClock(MORNING), config())
    yield made
    made.close()


def valid_message(call: Call) -> None:
    """Slack would accept it: at most 50 blocks, each valid Block Kit."""
    blocks = call.params.get("blocks") or []
    assert 0 < len(blocks) <= 50
    for raw in blocks:
        block = Block.parse(raw)
        assert block is not None
        block.validate_json()
