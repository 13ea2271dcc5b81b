"""Facts a person stated in words around the output they pasted.

People describe their cluster in prose ("Ray 2.9 on the cluster, 2.10 locally", "each node has one
A10G", "the pods are Running but ``ray status`` shows one node"). Such a sentence is evidence, but a
retelling, weaker than a tool's output: it may be from memory, rounded or about another day. So
these facts are kept apart from the Kubernetes and Ray layers, each with the sentence it was read
from, and the rules that use them say where they come from and never call a finding critical on
them alone. Only pasted text has them; a live collection leaves ``Snapshot.stated`` empty.
"""

from __future__ import annotations

from dataclasses import field
from typing import Literal

from bot.snapshot.base import Record
from bot.snapshot.redact import Redacted

# Where a version runs. ``cluster`` is the cluster as a whole (its image, "on the cluster"); the
# client is whatever connects to it from outside or submits work (a laptop, a notebook, a driver).
Side = Literal["cluster", "head", "worker", "client"]
Component = Literal["ray", "python"]


class StatedVersion(Record):
    """``component`` ``version`` runs on ``side``, as the sentence ``quote`` says."""

    component: Component
    side: Side
    version: str
    quote: Redacted


class StatedNodeGpus(Record):
    """Each node (or the one machine) has ``gpus`` GPUs, of ``model`` when named; ``nodes`` when the
    sentence counts the nodes too ("2 nodes with 8 x A100 each")."""

    gpus: float
    quote: Redacted
    model: str | None = None
    nodes: int | None = None


class StatedJoinGap(Record):
    """The Pods run, yet Ray does not show them all: "pods are Running but ``ray status`` shows one
    node". ``ray_nodes`` is the count of Ray nodes the sentence gives, when it gives one."""

    quote: Redacted
    ray_nodes: int | None = None


class Stated(Record):
    versions: list[StatedVersion] = field(default_factory=list)
    node_gpus: list[StatedNodeGpus] = field(default_factory=list)
    join_gaps: list[StatedJoinGap] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.versions or self.node_gpus or self.join_gaps)
