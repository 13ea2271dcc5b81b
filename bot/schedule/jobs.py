"""APScheduler wiring: one cron job per schedule, kept in the state database, run only by the leader.

The job store is APScheduler's ``SQLAlchemyJobStore`` on the store's engine, so jobs and their next
run times survive a restart with the schedules they belong to. A job is pickled into that table,
so what it calls must be importable by name: ``run_scheduled_post(schedule_id)``, a module-level
function whose only argument is plain data. It finds the live ``ScheduledPosts`` through a
module-level registry (one bot per process) and asks it to run the schedule's latest fire time.

Missed runs: ``coalesce`` folds every run missed while the bot was down into one, and
``misfire_grace_time`` (a day) lets that one run late, so an outage costs one late post, never a
burst of replays. ``max_instances=1`` keeps a slow collection from overlapping the next run.

Leadership: with several replicas sharing the database, only the holder of the Lease
(``bot.leadership``) runs schedules. ``HealthScheduler.start(leading=...)``, ``lead()`` and
``follow()`` resume and pause the APScheduler loop; a follower still adds and removes jobs (Slack
commands reach any replica) but never runs them. Should two replicas ever both lead, each run is
claimed in the store first, so it is still posted once.

The source of truth for *which* schedules exist is the store's schedules table; ``reconcile()``
makes the job table agree with it (at start, and every minute on the leader, which also wakes the
loop so jobs added by another replica are noticed).
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, Protocol

from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.jobstores.base import ConflictingIdError, JobLookupError
from apscheduler.jobstores.memory import MemoryJobStore
from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.schedulers.base import STATE_RUNNING
from apscheduler.triggers.cron import CronTrigger

from bot import cron
from bot.cron import cron_trigger, next_fire_time
from bot.store import Schedule, Store, StoreError
from bot.store.schema import SCHEDULER_JOB_TABLE

LOG = logging.getLogger(__name__)
JOB_PREFIX = "health-post:"
MISSED_RUN_GRACE = timedelta(days=1)
RECONCILE_EVERY_S = 60
# Live collections run here; more schedules firing at once than this wait their turn.
WORKERS = 4


class DueRun(Protocol):
    def run_due(self, schedule_id: str) -> object: ...


class _Registry:
    """The ``ScheduledPosts`` that jobs in this process call: one bot per process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._runner: DueRun | None = None

    def set(self, runner: DueRun | None) -> None:
        with self._lock:
            self._runner = runner

    def get(self) -> DueRun | None:
        with self._lock:
            return self._runner


_registry = _Registry()


def install(runner: DueRun | None) -> None:
    """Make ``runner`` the one that jobs in this process call (None: jobs do nothing)."""
    _registry.set(runner)


def run_scheduled_post(schedule_id: str) -> None:
    """The APScheduler job (referenced by name in the job table): run this schedule now."""
    runner = _registry.get()
    if runner is None:
        LOG.warning("schedule %s fired but no bot is running schedules in this process", schedule_id)
        return
    try:
        runner.run_due(schedule_id)
    except Exception:  # a failing run is logged; the scheduler keeps the next one
        LOG.exception("scheduled health post %s failed", schedule_id)


def trigger(schedule: Schedule) -> CronTrigger:
    return cron_trigger(schedule.cron, schedule.timezone)


def next_run(schedule: Schedule, now: datetime) -> datetime | None:
    return next_fire_time(schedule.cron, schedule.timezone, now)


def latest_fire_time(schedule: Schedule, now: datetime) -> datetime | None:
    return cron.latest_fire_time(schedule.cron, schedule.timezone, now)


def job_id(schedule_id: str) -> str:
    return f"{JOB_PREFIX}{schedule_id}"


class _RunningOnlyScheduler(BackgroundScheduler):  # type: ignore[misc]
    """APScheduler's background scheduler, processing jobs only while running.

    After ``shutdown()`` its loop wakes once more and looks for due jobs (it skips only when
    paused, and stopped is not paused). On a follower every kept job may be overdue: submitting
    fails on the stopped executor, yet the job's next run is still moved on — the missed run lost
    for the next leader. So a scheduler that is not running processes nothing.
    """

    def _process_jobs(self) -> float | None:
        if self.state != STATE_RUNNING:
            return None
        wait: float | None = super()._process_jobs()
        return wait


class HealthScheduler:
    """The schedules' APScheduler, on the store's database."""

    def __init__(self, store: Store, *, reconcile_every_s: float = RECONCILE_EVERY_S) -> None:
        self.store = store
        # APScheduler itself, for what this class does not wrap (tests move a job's next run with it).
        self.apscheduler = _RunningOnlyScheduler(
            jobstores={
                "default": SQLAlchemyJobStore(engine=store.engine, tablename=SCHEDULER_JOB_TABLE),
                "local": MemoryJobStore(),
            },
            executors={"default": ThreadPoolExecutor(WORKERS)},
            job_defaults={
                "coalesce": True,
                "max_instances": 1,
                "misfire_grace_time": int(MISSED_RUN_GRACE.total_seconds()),
            },
            timezone="UTC",
        )
        self._reconcile_every_s = reconcile_every_s
        self._leading = False

    @property
    def leading(self) -> bool:
        return self._leading

    def start(self, *, leading: bool = True) -> None:
        """Start the loop (paused unless ``leading``) and bring the job table in line with the store."""
        self.apscheduler.start(paused=True)
        self.apscheduler.add_job(
            self._reconcile_quietly,
            "interval",
            seconds=self._reconcile_every_s,
            id="raydiag-reconcile",
            jobstore="local",
        )
        self.reconcile()
        if leading:
            self.lead()

    def every(self, seconds: float, job: Callable[[], object], job_id: str) -> None:
        """Run ``job`` every ``seconds`` while this replica leads (kept in memory, not the store)."""
        self.apscheduler.add_job(
            job, "interval", seconds=seconds, id=job_id, jobstore="local", replace_existing=True
        )

    def lead(self) -> None:
        """This replica runs schedules from now on (due and coalesced missed runs first)."""
        self._leading = True
        self.apscheduler.resume()

    def follow(self) -> None:
        """Another replica runs schedules: keep the jobs, run none."""
        self._leading = False
        self.apscheduler.pause()

    def shutdown(self) -> None:
        """Stop without waiting for a running post (it was claimed; the next leader will not repeat it)."""
        if self.apscheduler.running:
            self.apscheduler.shutdown(wait=False)

    def add(self, schedule: Schedule) -> None:
        """Add the job for a stored schedule; an existing job is kept as it is.

        Keeping it keeps its next run time, so a run missed while the bot was down is still due.
        """
        if self.apscheduler.get_job(job_id(schedule.id), jobstore="default") is not None:
            return
        # Another replica (or the leader's reconcile) may add the same job at the same moment.
        with contextlib.suppress(ConflictingIdError):
            self.apscheduler.add_job(
                run_scheduled_post,
                trigger(schedule),
                args=[schedule.id],
                id=job_id(schedule.id),
                name=f"health post {schedule.cluster} -> {schedule.channel}",
                jobstore="default",
            )

    def remove(self, schedule_id: str) -> None:
        with contextlib.suppress(JobLookupError):  # already gone, removed by another replica
            self.apscheduler.remove_job(job_id(schedule_id), jobstore="default")

    def next_run_time(self, schedule_id: str) -> datetime | None:
        job = self.apscheduler.get_job(job_id(schedule_id), jobstore="default")
        when: datetime | None = getattr(job, "next_run_time", None)
        return when

    def reconcile(self) -> None:
        """One job per stored schedule, and no job without one."""
        wanted = {job_id(s.id): s for s in self.store.schedules()}
        existing: list[Any] = self.apscheduler.get_jobs(jobstore="default")
        for job in existing:
            if job.id not in wanted:
                with contextlib.suppress(JobLookupError):
                    self.apscheduler.remove_job(job.id, jobstore="default")
        have = {job.id for job in existing}
        for jid, schedule in wanted.items():
            if jid not in have:
                self.add(schedule)

    def _reconcile_quietly(self) -> None:
        try:
            self.reconcile()
        except StoreError as error:
            LOG.warning("could not compare schedules with jobs: %s", error)
