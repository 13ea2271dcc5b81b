"""Re-verifying the GPU chain on the leader: a probe per GPU pool on an interval, and the
verification order after an upgrade (``verify`` in the configuration; off by default).

The leader calls ``Verifier.tick`` every minute. For each configured cluster it decides from the
store's clock and what it remembers whether anything is due:

- every ``verify.check_minutes``, and as soon as another scheduled diagnosis (a health post, the
  metrics refresh) reports versions unlike the remembered ones, the cluster is diagnosed (trigger
  ``verify``) and its ``StackVersions`` compared with the last run's. A part read on both runs with
  another version is an upgrade: every pool is probed, the verification order of CAUSES.md is
  replayed (``bot.probes.verification``), and its result is posted once, in the thread of the
  cluster's latest health post in the channel (a new message where there is none);
- every ``verify.probe_minutes``, each pool is probed (``bot.probes.gpu``: the job always ends, and
  is stopped at ``verify.probe_timeout_s``); a verdict unlike the last one is posted.

The first run only remembers (nothing to compare with), except that a pool that does not run is
news at once. A muted cluster is probed and measured but not posted about. Each run is claimed in
the store by cluster and minute, so two replicas that both think they lead do not both probe. What
a cluster's runs remember (versions, verdicts, when it was checked and probed) is one row of the
store's post-state table, ``VerifyMemory``.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal, Protocol

from bot.config import ClusterConfig, VerifyConfig
from bot.deliver.blocks.verify import probe_change_message, verification_message
from bot.deliver.slack_poster import post
from bot.diagnoser import dashboard_url
from bot.diagnosis import Diagnosis
from bot.probes.gpu import run_gpu_probe
from bot.probes.pools import ProbeRun, probe_pools
from bot.probes.verification import (
    VERDICTS,
    Change,
    PoolResult,
    StepResult,
    Verdict,
    VersionChange,
    changes,
    passed,
    pools_of,
    verification,
    version_changes,
)
from bot.schedule.posts import Speaker
from bot.store import PostState, Schedule, Store, StoreError

if TYPE_CHECKING:  # the client is handed to deliver/, which makes every Slack call
    from slack_sdk import WebClient

LOG = logging.getLogger(__name__)
VERIFY_JOB = "raydiag-verify"
TICK_S = 60
# The scheduled diagnoses whose versions are compared too (their runs are scheduled as well).
SCHEDULED_TRIGGERS = frozenset({"schedule", "refresh"})
_CHECKED, _PROBED = "checked", "probed"

Action = Literal["quiet", "remembered", "probed", "upgrade", "skipped"]


class _Locks(Protocol):
    def try_acquire(self, cluster: str) -> bool: ...

    def release(self, cluster: str) -> None: ...


class Host(Speaker, Protocol):
    """The running bot as the re-verification sees it: a ``Speaker`` whose probe locks it shares
    with the probe buttons, so a scheduled probe never runs beside a pressed one."""

    @property
    def probe_locks(self) -> _Locks: ...


@dataclass(frozen=True)
class VerifyMemory:
    """What the runs of one cluster remember between them."""

    versions: Mapping[str, str] = field(default_factory=dict)
    verdicts: Mapping[str, Verdict] = field(default_factory=dict)
    checked_at: datetime | None = None
    probed_at: datetime | None = None

    def to_state(self, state_id: str, now: datetime) -> PostState:
        keys = {f"version\0{part}\0{value}" for part, value in self.versions.items()}
        keys |= {f"verdict\0{pool}\0{verdict}" for pool, verdict in self.verdicts.items()}
        times = {
            name: when for name, when in ((_CHECKED, self.checked_at), (_PROBED, self.probed_at)) if when
        }
        return PostState(schedule_id=state_id, posted_keys=frozenset(keys), first_seen=times, observed_at=now)

    @classmethod
    def from_state(cls, state: PostState | None) -> VerifyMemory:
        if state is None:
            return cls()
        versions: dict[str, str] = {}
        verdicts: dict[str, Verdict] = {}
        for key in state.posted_keys:
            kind, _, rest = key.partition("\0")
            name, _, value = rest.partition("\0")
            if kind == "version" and name and value:
                versions[name] = value
            elif kind == "verdict" and name and value in VERDICTS:
                verdicts[name] = next(v for v in VERDICTS if v == value)
        return cls(versions, verdicts, state.first_seen.get(_CHECKED), state.first_seen.get(_PROBED))


def memory_id(cluster: str) -> str:
    """The post-state row of a cluster's re-verification (32 characters, like the others)."""
    return "verify:" + hashlib.sha256(cluster.encode()).hexdigest()[:25]


@dataclass(frozen=True)
class VerifyOutcome:
    cluster: str
    action: Action
    reason: str = ""
    probes: tuple[PoolResult, ...] = ()
    steps: tuple[StepResult, ...] = ()
    upgrades: tuple[VersionChange, ...] = ()
    posted: tuple[str, ...] = ()  # the ts of each message posted


class Verifier:
    """The leader's re-verification of every configured cluster; ``tick`` is its job."""

    def __init__(
        self,
        bot: Host,
        store: Store,
        client: WebClient,
        *,
        probe: ProbeRun = run_gpu_probe,
        probe_poll_s: float = 1.0,
    ) -> None:
        self.bot = bot
        self.store = store
        self.client = client
        self._probe = probe
        self._poll_s = probe_poll_s
        self._lock = threading.Lock()  # one tick at a time, whatever calls it
        self._seen: dict[str, dict[str, str]] = {}
        self._seen_lock = threading.Lock()

    @property
    def settings(self) -> VerifyConfig:
        return self.bot.config.verify

    def observe(self, cluster: ClusterConfig, diagnosis: Diagnosis, trigger: str) -> None:
        """A finished diagnosis (the Diagnoser calls this): a scheduled one's versions are kept, so
        the next tick compares them at once instead of waiting for its own check."""
        if trigger in SCHEDULED_TRIGGERS:
            with self._seen_lock:
                self._seen[cluster.name] = diagnosis.versions.known()

    def tick(self) -> list[VerifyOutcome]:
        """Run whatever is due for each configured cluster (the job, every minute on the leader)."""
        if not self._lock.acquire(blocking=False):
            return []
        try:
            outcomes = []
            for cluster in self.bot.config.clusters:
                try:
                    outcomes.append(self.run(cluster))
                except Exception:  # one cluster's failure must not stop the others' checks
                    LOG.exception("re-verification of %s failed", cluster.name)
                    outcomes.append(VerifyOutcome(cluster.name, "skipped", "failed"))
            return outcomes
        finally:
            self._lock.release()

    # --- one cluster ----------------------------------------------------------------------------

    def run(self, cluster: ClusterConfig) -> VerifyOutcome:
        now = self.store.clock()
        state_id = memory_id(cluster.name)
        memory = VerifyMemory.from_state(self.store.post_state(state_id))
        check_due = _due(memory.checked_at, self.settings.check_minutes, now)
        probe_due = _due(memory.probed_at, self.settings.probe_minutes, now)
        with self._seen_lock:
            seen = self._seen.get(cluster.name)
        hinted = bool(seen and version_changes(memory.versions, seen))
        if not (check_due or probe_due or hinted):
            return VerifyOutcome(cluster.name, "quiet", "not due")
        # Probes may follow: none beside a pressed probe button (the next tick tries again).
        if not self.bot.probe_locks.try_acquire(cluster.name):
            return VerifyOutcome(cluster.name, "skipped", "probe-busy")
        try:
            if not self.store.claim_run(state_id, now.replace(second=0, microsecond=0), now):
                return VerifyOutcome(cluster.name, "skipped", "claimed-elsewhere")
            with self._seen_lock:  # this run reads the versions itself
                self._seen.pop(cluster.name, None)
            return self._verify(cluster, memory, probe_due, now)
        finally:
            self.bot.probe_locks.release(cluster.name)

    def _verify(
        self, cluster: ClusterConfig, memory: VerifyMemory, probe_due: bool, now: datetime
    ) -> VerifyOutcome:
        diagnosis = self.bot.diagnoser.run(cluster, cluster.namespace, "verify")
        versions = diagnosis.versions.known()
        upgrades = version_changes(memory.versions, versions) if memory.versions else []
        # A part not read this time keeps its last version: "not read" is no upgrade, and no baseline.
        remembered = {**memory.versions, **versions}
        if upgrades:
            return self._after_upgrade(cluster, diagnosis, memory, remembered, upgrades, now)
        if probe_due:
            return self._probe_pools(cluster, diagnosis, memory, remembered, now)
        self._save(cluster, VerifyMemory(remembered, memory.verdicts, now, memory.probed_at), now)
        action: Action = "remembered" if not memory.versions else "quiet"
        return VerifyOutcome(cluster.name, action, "versions unchanged" if memory.versions else "first run")

    def _probe_pools(
        self,
        cluster: ClusterConfig,
        diagnosis: Diagnosis,
        memory: VerifyMemory,
        versions: Mapping[str, str],
        now: datetime,
    ) -> VerifyOutcome:
        results = self._probe_all(cluster, diagnosis, memory)
        news = changes(memory.verdicts, results)
        # Remembered before anything is posted: a post Slack refuses is lost, never repeated.
        self._save(cluster, VerifyMemory(versions, _verdicts(results), now, now), now)
        channel = self._channel(cluster, self._schedules(cluster)) if news else None
        posted = [ts for change in news if (ts := self._post_change(cluster, channel, change))]
        return VerifyOutcome(
            cluster.name, "probed", f"{len(news)} changed", tuple(results), posted=tuple(posted)
        )

    def _after_upgrade(
        self,
        cluster: ClusterConfig,
        diagnosis: Diagnosis,
        memory: VerifyMemory,
        versions: Mapping[str, str],
        upgrades: Sequence[VersionChange],
        now: datetime,
    ) -> VerifyOutcome:
        results = self._probe_all(cluster, diagnosis, memory)
        steps = verification(diagnosis, results)
        LOG.info(
            "%s: %s changed; verification %s",
            cluster.name,
            ", ".join(f"{u.part} {u.before} → {u.after}" for u in upgrades),
            "passed" if passed(steps) else "failed",
        )
        self.bot.metrics.record_verification(cluster.name, passed(steps))
        # The probes' verdicts are told in this message: the next probe run compares with them.
        # Remembered first, so the upgrade is verified once even when the post is lost.
        self._save(cluster, VerifyMemory(versions, _verdicts(results), now, now), now)
        posted: list[str] = []
        schedules = self._schedules(cluster)
        channel = self._channel(cluster, schedules)
        if channel and not self.bot.mutes.muted(cluster.name):
            lang = self.bot.lang(channel, None)
            message = verification_message(
                cluster.name,
                upgrades,
                steps,
                results,
                lang,
                timeout_s=self.settings.probe_timeout_s,
            )
            if ts := self._post(channel, message, self._thread(channel, schedules)):
                posted.append(ts)
        return VerifyOutcome(
            cluster.name,
            "upgrade",
            "passed" if passed(steps) else "failed",
            tuple(results),
            tuple(steps),
            tuple(upgrades),
            tuple(posted),
        )

    def _probe_all(
        self, cluster: ClusterConfig, diagnosis: Diagnosis, memory: VerifyMemory
    ) -> list[PoolResult]:
        kept = [pool for pool, verdict in memory.verdicts.items() if verdict == "ran"]
        pools = pools_of(diagnosis, kept)
        return probe_pools(
            dashboard_url(cluster),
            pools,
            diagnosis.capacity.ray_gpu_nodes,
            timeout_s=self.settings.probe_timeout_s,
            start_timeout_s=self.settings.probe_start_timeout_s,
            poll_s=self._poll_s,
            probe=self._probe,
            each=lambda result: self.bot.metrics.record_pool_probe(
                cluster.name, result.pool, result.verdict, result.elapsed_s, self.store.clock()
            ),
        )

    # --- where it speaks ------------------------------------------------------------------------

    def _schedules(self, cluster: ClusterConfig) -> list[Schedule]:
        """The cluster's health-post schedules (the configured ones are in the store too)."""
        try:
            return [s for s in self.store.schedules() if s.cluster == cluster.name]
        except StoreError as error:
            LOG.warning("cannot read the schedules of %s: %s", cluster.name, error)
            return []

    def _channel(self, cluster: ClusterConfig, schedules: Sequence[Schedule]) -> str | None:
        configured = self.bot.config.verify_channel(cluster.name)
        if configured:
            return configured
        return schedules[0].channel if schedules else None

    def _thread(self, channel: str, schedules: Sequence[Schedule]) -> str | None:
        """The latest health post of these schedules in ``channel``: the cluster's thread there."""
        latest: tuple[datetime, str] | None = None
        for schedule in schedules:
            if schedule.channel != channel:
                continue
            state = self.store.post_state(schedule.id)
            if state is None or not state.message_ts or state.channel != channel or state.posted_at is None:
                continue
            if latest is None or state.posted_at > latest[0]:
                latest = (state.posted_at, state.message_ts)
        return latest[1] if latest else None

    def _post_change(self, cluster: ClusterConfig, channel: str | None, change: Change) -> str | None:
        if not channel or self.bot.mutes.muted(cluster.name):
            return None
        lang = self.bot.lang(channel, None)
        message = probe_change_message(cluster.name, change, lang, self.settings.probe_timeout_s)
        return self._post(channel, message, None)

    def _post(self, channel: str, message: dict[str, Any], thread: str | None) -> str | None:
        try:
            return post(self.client, channel, message, thread_ts=thread)
        except Exception as error:  # SlackApiError, a broken connection: logged, not retried
            LOG.warning("could not post the re-verification to %s: %s", channel, error)
            return None

    def _save(self, cluster: ClusterConfig, memory: VerifyMemory, now: datetime) -> None:
        self.store.save_post_state(memory.to_state(memory_id(cluster.name), now), now)


def _verdicts(results: Sequence[PoolResult]) -> dict[str, Verdict]:
    return {result.pool: result.verdict for result in results}


def _due(last: datetime | None, minutes: float, now: datetime) -> bool:
    return minutes > 0 and (last is None or now - last >= timedelta(minutes=minutes))


__all__ = ["TICK_S", "VERIFY_JOB", "Verifier", "VerifyMemory", "VerifyOutcome", "memory_id"]
