"""What every Slack listener shares: the ``Bot`` (configuration, the one ``Diagnoser``, small state).

Each surface module (``slash_command``, ``diagnosis_buttons``, ``mentions``, ``probe_actions``,
``quiz_actions``, ``verdict_actions``) registers its own listeners on the Bolt app and reaches
everything else through this object; ``bot.slack.app.build_app`` builds the app and calls them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from slack_bolt import Ack, Respond
from slack_sdk import WebClient

from bot.catalogue import Catalogue, default_catalogue
from bot.collect.live import pod_ray_cluster
from bot.config import ClusterConfig, Config
from bot.diagnoser import CollectSnapshot, Diagnose, Diagnoser, Trigger
from bot.diagnosis import Diagnosis
from bot.observe.metrics import Metrics
from bot.render.messages import Lang
from bot.slack.commands import Command
from bot.slack.state import (
    AlertAnswers,
    AnsweredOnce,
    ClusterLocks,
    MemoryAlertAnswers,
    MuteList,
    Mutes,
    SeenOnce,
    StoredAlertAnswers,
    StoredMutes,
    StoredSeenOnce,
)
from bot.store import Store
from bot.workers import SharedRuns, Submitted

# A sub-command's lazy handler: (bot, parsed command, Slack's command payload, client, respond).
CommandHandler = Callable[["Bot", Command, dict[str, Any], WebClient, Respond], None]


@dataclass
class Bot:
    """What the listeners share: configuration, the one ``Diagnoser``, and small state."""

    config: Config
    # Reads and classifies one cluster; the live collector in production, recorded data in tests.
    diagnose: Diagnose | None = None
    catalogue: Catalogue = field(default_factory=default_catalogue)
    # Durable state shared by replicas (schedules, mutes, answered events, quiz); None: in-process only.
    store: Store | None = None
    mutes: MuteList = field(default_factory=Mutes)
    seen: AnsweredOnce = field(default_factory=SeenOnce)
    probe_locks: ClusterLocks = field(default_factory=ClusterLocks)
    diagnoser: Diagnoser = field(init=False)
    # Sub-commands (capacity, quiz, schedule …) by kind; a kind without a handler is "not available".
    handlers: dict[str, CommandHandler] = field(default_factory=dict)
    # Reads a cluster for pictures that need more than the diagnosis (capacity); None: live.
    snapshot_of: CollectSnapshot | None = None
    metrics: Metrics = field(default_factory=Metrics)
    # What was said about each alert, so a re-send is answered only when the findings change.
    alerts: AlertAnswers = field(default_factory=MemoryAlertAnswers)
    # The RayCluster a Pod belongs to (its ``ray.io/cluster``), for alerts that name a Pod;
    # None: read from the configured clusters' Kubernetes APIs.
    pod_lookup: Callable[[str, str], str | None] | None = None
    _posted: dict[tuple[int, str], str] = field(default_factory=dict)  # (run, channel) already answered
    _posted_lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.diagnoser = Diagnoser(
            self.config,
            self.diagnose,
            catalogue=self.catalogue,
            metrics=self.metrics,
            snapshot_of=self.snapshot_of,
        )
        if self.store is not None:
            self.mutes, self.seen = StoredMutes(self.store), StoredSeenOnce(self.store)
            self.alerts = StoredAlertAnswers(self.store)

    def pod_owner(self, namespace: str, pod: str) -> str | None:
        """The ``ray.io/cluster`` of a Pod, asked of each configured cluster in that namespace."""
        if self.pod_lookup is not None:
            return self.pod_lookup(namespace, pod)
        asked: set[tuple[str | None, str | None]] = set()
        for cluster in self.config.clusters:
            where = (cluster.kubeconfig, cluster.context)
            if cluster.namespace != namespace or where in asked:
                continue
            asked.add(where)
            owner = pod_ray_cluster(*where, namespace, pod, self.config.collection.call_timeout_s)
            if owner:
                return owner
        return None

    @property
    def runs(self) -> SharedRuns[Diagnosis]:
        return self.diagnoser.runs

    def lang(self, channel: str | None, user: str | None) -> Lang:
        return self.config.language_for(channel, user)

    def start(self, cluster: ClusterConfig, namespace: str, trigger: Trigger) -> Submitted[Diagnosis]:
        """The shared run for this cluster: started now (or queued), or joined if one is running."""
        return self.diagnoser.submit(cluster, namespace, trigger)

    def claim_post(self, run_id: int, channel: str) -> bool:
        """True for the first caller of a shared run in a channel: that one posts, the others point to it."""
        with self._posted_lock:
            key = (run_id, channel)
            if key in self._posted:
                return False
            if len(self._posted) > 10_000:
                self._posted.clear()
            self._posted[key] = channel
            return True


def ack_only(ack: Ack) -> None:
    """The ack of a listener whose work is all lazy: Slack hears back at once."""
    ack()
