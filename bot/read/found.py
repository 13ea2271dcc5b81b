"""What the format parsers found in one paste, before it becomes a Snapshot.

Parsers run one block at a time and know nothing of each other, yet the snapshot needs the paste
as a whole: a pod from a ``kubectl get pods`` row and the same pod from ``describe pod`` are one
pod, and a bare scheduler message belongs to the one pending pod pasted above it. So parsers add to
this mutable record, and ``assemble`` resolves it once at the end.

Every collection here is capped, so a huge paste cannot make the snapshot huge; what was left out
is counted and reported in the snapshot's notes.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from bot.read.code_facts import CodeFacts
from bot.read.formats import Format
from bot.snapshot.kubernetes import Event, Node, Pod
from bot.snapshot.model import TextLine
from bot.snapshot.nvidia_smi import SmiOutput
from bot.snapshot.ray import (
    Demand,
    NodeType,
    PlacementGroup,
    RayActor,
    RayNode,
    RayStartCommand,
    ResourceConstraint,
    ServeApplication,
)
from bot.snapshot.stated import StatedDemand, StatedJoinGap, StatedNodeGpus, StatedSymptom, StatedVersion

MAX_TEXTS = 2000
MAX_OBJECTS = 5000
MAX_DEMANDS = 500


class PodSource:
    """How much a source says about a pod; a richer source wins when the same pod appears twice."""

    TABLE_ROW = 0
    MANIFEST = 1
    DESCRIBE = 2
    API_OBJECT = 3


@dataclass
class PodRecord:
    pod: Pod
    source: int
    namespace_known: bool = True
    # A manifest without ``status`` (what people paste from their editor): its phase is inferred.
    has_status: bool = True


@dataclass
class RayStatusFigures:
    """The cluster-wide part of ``ray status``; a later status overrides what it repeats."""

    totals: dict[str, float] = field(default_factory=dict)
    used: dict[str, float] = field(default_factory=dict)
    node_count: int | None = None
    node_groups: dict[str, int] = field(default_factory=dict)
    pending_nodes: list[str] = field(default_factory=list)
    recent_failures: list[str] = field(default_factory=list)
    reserved: dict[str, float] = field(default_factory=dict)
    reserved_used: dict[str, float] = field(default_factory=dict)
    # A plain ``ray status`` (2.4+) leaves ``accelerator_type:`` out of its totals.
    hides_accelerator_types: bool = False


@dataclass
class TuneProgress:
    """What Ray Tune's status output says of its trials, gathered line by line.

    A summary line (``Number of trials: 18/100 (17 PENDING, 1 RUNNING)``) counts every trial; the
    table rows and the old ``PENDING trials:`` lists may be cut, so they only count what they show.
    """

    summary: dict[str, int] = field(default_factory=dict)
    rows: dict[str, str] = field(default_factory=dict)
    sections: set[str] = field(default_factory=set)
    quotes: list[str] = field(default_factory=list)
    # What one trial asks for, read from the pasted code; a demand only once trials are seen waiting.
    request: Demand | None = None
    request_added: bool = False

    def counts(self) -> dict[str, int]:
        if self.summary:
            return dict(self.summary)
        counts: dict[str, int] = {}
        for state in self.rows.values():
            counts[state] = counts.get(state, 0) + 1
        for state in self.sections:  # a section is printed only when it has a trial
            counts.setdefault(state, 1)
        return counts


@dataclass
class Found:
    source: str = "paste"
    formats: list[Format] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    pods: list[PodRecord] = field(default_factory=list)
    nodes: list[Node] = field(default_factory=list)
    # Indexes into ``nodes`` of nodes pasted without their name (a bare ``Capacity:`` block).
    unnamed_nodes: list[int] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    # Other Kubernetes objects, keyed by their ``KubernetesState`` field name.
    objects: dict[str, list[Any]] = field(default_factory=dict)
    ray_status: RayStatusFigures | None = None
    # Only reported alongside other Ray state: a version alone says nothing about the cluster.
    ray_version: str | None = None
    ray_nodes: list[RayNode] = field(default_factory=list)
    demands: list[Demand] = field(default_factory=list)
    # ``request_resources()`` constraints: what the autoscaler keeps room for, not work waiting.
    constraints: list[ResourceConstraint] = field(default_factory=list)
    ray_actors: list[RayActor] = field(default_factory=list)
    placement_groups: list[PlacementGroup] = field(default_factory=list)
    # ``ray.cluster_resources()`` / ``ray.available_resources()`` printouts, kept until both are seen.
    ray_totals: dict[str, float] = field(default_factory=dict)
    ray_available: dict[str, float] | None = None
    # Read from single figures (``Available GPUs: 2.0``): a resource it does not name is unknown.
    ray_available_partial: bool = False
    # ``ray start`` command lines (``bot/read/ray_start_command.py``).
    ray_starts: list[RayStartCommand] = field(default_factory=list)
    node_types: list[NodeType] = field(default_factory=list)
    serve_applications: list[ServeApplication] = field(default_factory=list)
    tune: TuneProgress | None = None
    # What pasted Python code declares, joined with the rest of the paste at the end (python_code.settle).
    code: CodeFacts = field(default_factory=CodeFacts)
    texts: list[TextLine] = field(default_factory=list)
    # Facts a person stated in words (``bot/read/prose.py``), kept apart from what tools printed.
    stated_versions: list[StatedVersion] = field(default_factory=list)
    stated_gpus: list[StatedNodeGpus] = field(default_factory=list)
    stated_join_gaps: list[StatedJoinGap] = field(default_factory=list)
    stated_symptoms: list[StatedSymptom] = field(default_factory=list)
    stated_demands: list[StatedDemand] = field(default_factory=list)
    # ``nvidia-smi`` outputs, one per machine view (``bot/read/nvidia_smi.py``).
    nvidia_smi: list[SmiOutput] = field(default_factory=list)
    # Characters of prose read for stated facts so far: that reading stops at a budget.
    prose_chars: int = 0
    dropped: Counter[str] = field(default_factory=Counter)
    _seen_texts: set[str] = field(default_factory=set)
    _seen_demands: set[str] = field(default_factory=set)

    def recognise(self, fmt: Format) -> None:
        if fmt not in self.formats:
            self.formats.append(fmt)

    def note(self, text: str) -> None:
        if text not in self.notes and len(self.notes) < 50:
            self.notes.append(text)

    def _room(self, kind: str, current: int, limit: int = MAX_OBJECTS) -> bool:
        if current < limit:
            return True
        self.dropped[kind] += 1
        return False

    def pods_full(self) -> bool:
        """Checked before building a pod from a row, so a flood of rows costs no model building."""
        return not self._room("pods", len(self.pods))

    def add_pod(self, record: PodRecord) -> None:
        if self._room("pods", len(self.pods)):
            self.pods.append(record)

    def add_node(self, node: Node, named: bool = True) -> None:
        if self._room("nodes", len(self.nodes)):
            if not named:
                self.unnamed_nodes.append(len(self.nodes))
            self.nodes.append(node)

    def add_event(self, event: Event) -> None:
        if self._room("events", len(self.events)):
            self.events.append(event)

    def add_object(self, field_name: str, obj: Any) -> None:
        bucket = self.objects.setdefault(field_name, [])
        if self._room(field_name, len(bucket)):
            bucket.append(obj)

    def add_ray_node(self, node: RayNode) -> None:
        if self._room("ray nodes", len(self.ray_nodes)):
            self.ray_nodes.append(node)

    def add_ray_actor(self, actor: RayActor) -> None:
        if self._room("ray actors", len(self.ray_actors)):
            self.ray_actors.append(actor)

    def add_placement_group(self, group: PlacementGroup) -> None:
        if self._room("placement groups", len(self.placement_groups)):
            self.placement_groups.append(group)

    def add_demand(self, demand: Demand) -> None:
        """Repeated log lines repeat the same demand; it is kept once."""
        key = repr(
            (sorted(demand.shape.items()), demand.kind, demand.infeasible, demand.bundles, demand.strategy)
        )
        if key in self._seen_demands:
            return
        if self._room("demands", len(self.demands), MAX_DEMANDS):
            self._seen_demands.add(key)
            self.demands.append(demand)

    def add_constraint(self, constraint: ResourceConstraint) -> None:
        """The same constraint repeated (a status pasted twice) is kept once."""
        if any(c.shape == constraint.shape and c.count == constraint.count for c in self.constraints):
            return
        if self._room("constraints", len(self.constraints), MAX_DEMANDS):
            self.constraints.append(constraint)

    def add_node_type(self, node_type: NodeType) -> None:
        if self._room("node types", len(self.node_types), MAX_DEMANDS):
            self.node_types.append(node_type)

    def add_serve_application(self, application: ServeApplication) -> None:
        if self._room("serve applications", len(self.serve_applications), MAX_DEMANDS):
            self.serve_applications.append(application)

    def add_stated_version(self, fact: StatedVersion) -> None:
        """A sentence repeated (quoted twice in a thread) states its version once."""
        if fact not in self.stated_versions and self._room(
            "stated versions", len(self.stated_versions), MAX_DEMANDS
        ):
            self.stated_versions.append(fact)

    def add_stated_gpus(self, fact: StatedNodeGpus) -> None:
        if fact not in self.stated_gpus and self._room(
            "stated GPU counts", len(self.stated_gpus), MAX_DEMANDS
        ):
            self.stated_gpus.append(fact)

    def add_stated_join_gap(self, fact: StatedJoinGap) -> None:
        if fact not in self.stated_join_gaps and self._room(
            "stated join gaps", len(self.stated_join_gaps), MAX_DEMANDS
        ):
            self.stated_join_gaps.append(fact)

    def add_stated_symptom(self, fact: StatedSymptom) -> None:
        if fact not in self.stated_symptoms and self._room(
            "stated symptoms", len(self.stated_symptoms), MAX_DEMANDS
        ):
            self.stated_symptoms.append(fact)

    def add_stated_demand(self, fact: StatedDemand) -> None:
        if fact not in self.stated_demands and self._room(
            "stated demands", len(self.stated_demands), MAX_DEMANDS
        ):
            self.stated_demands.append(fact)

    def nvidia_smi_full(self) -> bool:
        """Checked before building an output's record, so a flood of outputs costs no records."""
        return not self._room("nvidia-smi outputs", len(self.nvidia_smi), MAX_DEMANDS)

    def add_nvidia_smi(self, output: SmiOutput) -> None:
        if self._room("nvidia-smi outputs", len(self.nvidia_smi), MAX_DEMANDS):
            self.nvidia_smi.append(output)

    def add_text(self, text: str) -> None:
        text = text.strip()
        if not text or text in self._seen_texts:
            return
        if self._room("message lines", len(self.texts), MAX_TEXTS):
            self._seen_texts.add(text)
            self.texts.append(TextLine(source=self.source, text=text))
