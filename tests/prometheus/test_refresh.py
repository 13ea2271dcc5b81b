"""The leader refreshes every configured cluster's series on an interval (issue 15, part 1)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from slack_sdk import WebClient

from bot.config import ClusterConfig, Config, MetricsConfig
from bot.schedule.service import REFRESH_JOB, refresh_clusters, start_health_posts
from bot.slack.bot import Bot
from bot.store import open_store
from tests.prometheus.test_layer_metrics import _gpus, _samples
from tests.slack.test_bot_scenarios import recorded
from tests.slack.test_triggers_metered import counted
from tests.support import scenarios
from tests.support.cluster import CLUSTER, NS
from tests.support.waiting import eventually


def _config(minutes: float) -> Config:
    return Config(
        clusters=[ClusterConfig(name="gpu-prod", namespace=NS, raycluster=CLUSTER)],
        metrics=MetricsConfig(refresh_minutes=minutes),
    )


def test_a_refresh_diagnoses_each_cluster_and_fills_its_series() -> None:
    bot = Bot(config=_config(5), diagnose=recorded(scenarios.healthy()))
    try:
        assert _gpus(_samples(bot.metrics), "allocatable") is None
        assert refresh_clusters(bot) == 1
        assert eventually(lambda: _gpus(_samples(bot.metrics), "allocatable") == 8.0, 30)
        assert counted(bot) == {"refresh": 1}
    finally:
        bot.runs.shutdown()


def test_the_leader_runs_the_refresh_on_the_configured_interval(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'state.db'}")
    bot = Bot(config=_config(2), diagnose=recorded(scenarios.healthy()), store=store)
    scheduler = start_health_posts(bot, WebClient(token="xoxb-test", base_url="http://127.0.0.1:9/"))
    try:
        job = scheduler.apscheduler.get_job(REFRESH_JOB)
        assert job is not None and job.trigger.interval == timedelta(minutes=2)
        job.func()  # what the interval runs, without waiting two minutes
        assert eventually(lambda: counted(bot) == {"refresh": 1}, 30)
    finally:
        scheduler.shutdown()
        bot.runs.shutdown()
        store.close()


def test_no_interval_job_when_refresh_is_off(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'state.db'}")
    bot = Bot(config=_config(0), diagnose=recorded(scenarios.healthy()), store=store)
    scheduler = start_health_posts(bot, WebClient(token="xoxb-test", base_url="http://127.0.0.1:9/"))
    try:
        assert scheduler.apscheduler.get_job(REFRESH_JOB) is None
    finally:
        scheduler.shutdown()
        bot.runs.shutdown()
        store.close()
