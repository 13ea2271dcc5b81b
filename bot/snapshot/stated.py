"""Facts a person stated in words around the output they pasted.

People describe their cluster in prose ("Ray 2.9 on the cluster, 2.10 locally", "each node has one
A10G", "the pods are Running but ``ray status`` shows one node"), what they see ("the workers cannot
connect to the head", "Ray does not detect my GPUs") and what their work asks for ("each trial
requests 4 GPUs"). Such a sentence is evidence, but a
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


# What a person says they see, as one kind from the closed vocabulary of
# :mod:`bot.read.prose_symptoms` (a subject of one layer and a state). The kind names the layer when
# the sentence settles it ("Ray does not see the GPUs": ``gpus-not-registered``) and stays open when
# it does not ("the GPUs are not detected": ``gpus-unseen``).
SymptomKind = Literal[
    "cannot-connect",  # workers or nodes that do not join, drop out after seconds, blocked ports
    "versions-differ",  # parts said to run different versions, commits or images
    "gpus-not-exposed",  # a Kubernetes node said to offer no nvidia.com/gpu (device plugin, NVML)
    "gpus-not-registered",  # Ray said not to see or register the GPUs
    "gpus-unseen",  # GPUs said not to be seen, with no word for which layer
    "gpus-busy-kubernetes",  # every GPU said to be taken, where Pods ask for them
    "gpus-busy-ray",  # every GPU said to be taken, where Ray work asks for them
    "gpus-busy",  # every GPU said to be taken, with no word for which layer
    "not-scaling",  # a node group, node pool or autoscaler said not to add nodes
    "app-start-error",  # a replica or deployment said to fail in its constructor or an import
    "pod-pending",  # a Pod said to be Pending, with nothing that says why
    "ray-work-pending",  # an actor, task, trial, replica or placement group said to wait
]


class StatedSymptom(Record):
    """The person says they see ``kind`` (about ``subject``, the word they used), in ``quote``."""

    kind: SymptomKind
    subject: str
    quote: Redacted


class StatedDemand(Record):
    """Each ``unit`` (trial, actor, replica, worker...) asks for ``gpus`` GPUs, as ``quote`` says."""

    gpus: float
    unit: str
    quote: Redacted


class Stated(Record):
    versions: list[StatedVersion] = field(default_factory=list)
    node_gpus: list[StatedNodeGpus] = field(default_factory=list)
    join_gaps: list[StatedJoinGap] = field(default_factory=list)
    symptoms: list[StatedSymptom] = field(default_factory=list)
    demands: list[StatedDemand] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.versions or self.node_gpus or self.join_gaps or self.symptoms or self.demands)
