"""Start scheduled health posts for a running bot: sync the configured schedules, start the loop.

Called once by ``raydiag serve`` after the state store opened. The configuration's schedules are
written into the store under ids derived from their content, so starting twice changes nothing and
an entry edited in the file becomes a new schedule (the old one is removed). The leader's interval
jobs start here too: the metrics refresh (``metrics.refresh_minutes``) and, with ``verify`` on, the
re-verification's minute tick (``bot.schedule.verify``).
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from bot.config import Config
from bot.schedule.jobs import HealthScheduler, install
from bot.schedule.posts import ScheduledPosts, Speaker
from bot.schedule.verify import TICK_S, VERIFY_JOB, Verifier
from bot.schedule.verify import Host as VerifyHost
from bot.store import CONFIG_OWNER, Schedule, Store, config_schedule_id
from bot.workers import Busy

if TYPE_CHECKING:  # the client is only passed on to the posts
    from slack_sdk import WebClient

LOG = logging.getLogger(__name__)


def configured_schedules(config: Config, now: datetime) -> list[Schedule]:
    schedules = []
    for entry in config.schedules:
        cluster = config.cluster(entry.cluster)
        namespace = entry.namespace or (cluster.namespace if cluster else "default")
        schedules.append(
            Schedule(
                id=config_schedule_id(
                    entry.channel, entry.cluster, namespace, entry.cron, entry.timezone, entry.mode
                ),
                channel=entry.channel,
                cluster=entry.cluster,
                namespace=namespace,
                cron=entry.cron,
                timezone=entry.timezone,
                mode=entry.mode,
                created_by=CONFIG_OWNER,
                created_at=now,
            )
        )
    return schedules


class Host(VerifyHost, Protocol):
    """The running bot as scheduled posts and the re-verification see it: a ``Speaker`` with its
    state store and probe locks."""

    @property
    def store(self) -> Store | None: ...


def start_health_posts(bot: Host, client: WebClient, *, leading: bool = True) -> HealthScheduler:
    """Run the bot's schedules from its store (``StoreError`` if the store fails while starting).

    ``leading=False`` starts a replica that keeps jobs but runs none until ``lead()`` is called.
    """
    if bot.store is None:
        raise ValueError("scheduled health posts need the bot's state store")
    store = bot.store
    added, removed = store.sync_config_schedules(configured_schedules(bot.config, store.clock()))
    if added or removed:
        LOG.info("configured schedules: %d added, %d removed", len(added), len(removed))
    install(ScheduledPosts(bot, store, client))
    scheduler = HealthScheduler(store)
    scheduler.start(leading=leading)
    minutes = bot.config.metrics.refresh_minutes
    if minutes > 0 and bot.config.clusters:
        scheduler.every(minutes * 60, lambda: refresh_clusters(bot), REFRESH_JOB)
    if bot.config.verify.enabled and bot.config.clusters:
        verifier = Verifier(bot, store, client)
        bot.diagnoser.watch(verifier.observe)
        scheduler.every(TICK_S, verifier.tick, VERIFY_JOB)
    return scheduler


REFRESH_JOB = "raydiag-refresh-metrics"


def refresh_clusters(bot: Speaker) -> int:
    """Start a diagnosis of every configured cluster (joined if one is running): each refreshes its
    series on /metrics when it finishes. Returns how many were started; a full pool skips the rest."""
    started = 0
    for cluster in bot.config.clusters:
        try:
            bot.diagnoser.submit(cluster, cluster.namespace, "refresh")
        except Busy:
            LOG.info("metrics refresh: the diagnosis pool is full; %s waits for the next round", cluster.name)
            break
        started += 1
    return started
