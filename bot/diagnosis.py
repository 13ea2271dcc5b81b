"""What the classifier concludes, as data.

A ``Finding`` is language-neutral: it names its rule and carries the facts (``params``) that the
rule's English and Chinese templates are filled with at render time, so one diagnosis can be shown
to a Chinese-speaking channel and an English terminal alike. ``evidence`` is always verbatim text
from the snapshot (an event message, a log line, a figure), never a paraphrase.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from bot.facts import Fact
from bot.snapshot.base import Record
from bot.snapshot.errors import CollectionError

# The words shared with the rule catalogue (a leaf, so that the catalogue loads without these models).
from bot.terms import Layer, Severity

VerdictLayer = Literal["kubernetes", "ray", "application", "healthy", "unknown"]
# The rule id of the one finding no rule of the catalogue makes: the cause the closest resolved
# reports agree on, added by the service (bot/similar) when nothing in a paste was recognised. It is
# a lead from likeness, not a reading of the text, so it never makes a verdict of its own.
SIMILAR_RULE = "similar-resolved-reports"
# The source of evidence that quotes a sentence the person wrote (a retelling, not a tool's output).
STATED_SOURCE = "user's words"


class _Model(Record):
    pass


class Subject(_Model):
    kind: str
    name: str | None = None
    namespace: str | None = None

    def label(self) -> str:
        where = f" -n {self.namespace}" if self.namespace else ""
        return f"{self.kind}/{self.name}{where}" if self.name else self.kind


class Evidence(_Model):
    """One line of evidence, and where it comes from.

    ``text`` is either a verbatim quote of what a tool wrote (an event message, a log line, a
    status) or a line raydiag writes itself from figures it read. For the second kind ``phrase``
    names the message that words it and ``values`` holds its atoms (names, figures, shapes), so
    the renderer can say it in the reader's language; ``source_phrase`` does the same for a label
    raydiag writes (``raydiag fit replay (agrees with the scheduler)``). ``source`` and ``text``
    stay the English rendering, which every reader of a diagnosis (the JSON report, tests, stored
    posts) keeps using. A quote has no phrase and is never translated.

    A value ``<n>.<field>`` makes the phrase a list: it is said once per item ``<n>`` with that
    item's fields (and the plain values), the items joined the way the language lists them.
    """

    source: str
    text: str
    phrase: str | None = None
    source_phrase: str | None = None
    values: dict[str, str] = field(default_factory=dict)


class Finding(_Model):
    rule: str
    code: str
    cause: int | None
    layer: Layer
    severity: Severity
    subject: Subject
    evidence: list[Evidence] = field(default_factory=list)
    params: dict[str, str] = field(default_factory=dict)
    # The lists a finding knows (shortfalls, closest nodes, holders...) as typed values (bot/facts.py).
    facts: tuple[Fact, ...] = ()


# A count of GPUs at one stage; ``None`` when the layer that holds that stage was not read, which
# is not the same as a layer that was read and shows none.
Gpus = int | float | None
ReadLayer = Literal["kubernetes", "ray"]
# The rows of GPUs whose model is not known, and of demands that any model could serve.
UNKNOWN_MODEL = "unknown"
ANY_MODEL = "any"


@dataclass(frozen=True)
class GpuModelCapacity:
    """One GPU model's GPUs at each stage they travel through, from a Kubernetes node to work.

    A positional dataclass, so a row is built positionally and ``dataclasses.asdict`` gives the
    JSON row of ``raydiag capacity``.
    """

    model: str  # GPU model from node labels (e.g. "A100", "H100", "unknown", "any")
    allocatable: Gpus  # nvidia.com/gpu allocatable on Ready, schedulable Kubernetes nodes of this model
    given_to_ray_pods: Gpus  # nvidia.com/gpu limits of running Ray Pods (KubeRay head/worker) on them
    registered_in_ray: Gpus  # GPU total of ALIVE Ray nodes whose IP matches those Pods
    in_use: Gpus  # registered minus available (held by actors/tasks)
    pending_demand: Gpus  # GPUs asked for by pending Ray demands or pending Pods, best effort

    @property
    def stages(self) -> tuple[Gpus, Gpus, Gpus, Gpus, Gpus]:
        """The five figures in the order a GPU travels through them."""
        return (
            self.allocatable,
            self.given_to_ray_pods,
            self.registered_in_ray,
            self.in_use,
            self.pending_demand,
        )


class UnscheduledPod(_Model):
    """A Pod of the diagnosed cluster that waits for a node."""

    name: str
    namespace: str
    created: datetime | None = None
    # Seconds it had waited when the snapshot was taken; None without both times.
    age_s: float | None = None
    reason: str | None = None  # the PodScheduled condition's reason, e.g. "Unschedulable"


class RayDemand(_Model):
    """Work waiting in Ray for resources: one shape (a placement group's bundles added up), how often."""

    shape: dict[str, float] = field(default_factory=dict)
    count: int = 1


class GpuActor(_Model):
    """An ALIVE actor that holds GPUs."""

    name: str
    gpus: float
    started: datetime | None = None


class ScaleUp(_Model):
    """A sign that capacity is being added: ``at`` is when it was seen, None when the source has no time."""

    source: Literal["cluster-autoscaler", "karpenter", "ray-autoscaler"]
    at: datetime | None = None


class RayGpuNode(_Model):
    """An ALIVE Ray node that registers GPUs, tied to Kubernetes through the Pod with its IP: where a
    GPU probe of its pool may land, and what the node under it really is."""

    node_id: str | None = None
    ip: str | None = None
    gpus: float = 0.0
    # Ray's ``accelerator_type:*`` resources of the node, without the prefix (``A100``).
    accelerator_types: list[str] = field(default_factory=list)
    pod: str | None = None  # the Pod with the node's IP; None when none was read
    # The GPU model of the Kubernetes node that Pod runs on (node labels); None when unknown.
    kubernetes_model: str | None = None
    # ``nvidia.com/gpu`` the Pod was given; None when no Pod was read.
    kubernetes_gpus: float | None = None


class ServeApp(_Model):
    name: str
    status: str  # RUNNING, DEPLOYING, DEPLOY_FAILED, UNHEALTHY, ...


class Capacity(_Model):
    """Where the GPUs are, layer by layer, and what waits: everything the capacity picture and the
    health post show, computed once by the classifier from the same snapshot as the findings.

    A figure of a layer that was not read is ``None`` (a list of it is empty), so a renderer says
    "not read" instead of 0 and infers no cause from it.
    """

    layers_read: list[ReadLayer] = field(default_factory=list)
    # Biggest models first, ``unknown`` and ``any`` last.
    models: list[GpuModelCapacity] = field(default_factory=list)
    # Kubernetes layer.
    gpu_nodes: int | None = None
    # GPU nodes whose allocatable lists no GPU (device plugin down, driver missing, all unhealthy).
    gpu_nodes_without_allocatable: int | None = None
    # Device-plugin Pods on GPU nodes that are not Running and Ready; None when none were read.
    device_plugin_pods_not_ready: int | None = None
    pending_pods: list[UnscheduledPod] = field(default_factory=list)  # oldest first
    ready_worker_pods: int | None = None
    # The RayCluster's worker Pods that exist (not being deleted), and whether its head Pod is Ready
    # (None when no head Pod was read).
    worker_pods: int | None = None
    head_ready: bool | None = None
    # Ray layer.
    ray_nodes_alive: int | None = None
    ray_gpu_nodes: list[RayGpuNode] = field(default_factory=list)
    # Serve applications and their status; None when Serve was not read (no dashboard, or a Ray
    # without the Serve API), empty when Serve runs no application.
    serve_applications: list[ServeApp] | None = None
    demands: list[RayDemand] = field(default_factory=list)
    gpu_actors: list[GpuActor] = field(default_factory=list)  # most GPUs first
    # Either layer: cluster-autoscaler or Karpenter events, Ray's autoscaler launching nodes.
    scale_ups: list[ScaleUp] = field(default_factory=list)

    @property
    def kubernetes_read(self) -> bool:
        return "kubernetes" in self.layers_read

    @property
    def ray_read(self) -> bool:
        return "ray" in self.layers_read


class StackVersions(_Model):
    """The versions of the GPU chain's parts, as the snapshot shows them; None (or empty) when not
    read. A change between two scheduled runs is what asks for the verification order again."""

    ray: str | None = None  # Ray's own answer, else the RayCluster's spec.rayVersion
    kuberay_operator: str | None = None  # the operator Pod's image tag
    nvidia_driver: list[str] = field(default_factory=list)  # distinct, on GPU nodes (node labels)
    device_plugin: list[str] = field(default_factory=list)  # distinct image tags of its Pods

    def known(self) -> dict[str, str]:
        """Each part that was read, as one comparable text."""
        parts = {
            "ray": self.ray,
            "kuberay_operator": self.kuberay_operator,
            "nvidia_driver": ", ".join(self.nvidia_driver) or None,
            "device_plugin": ", ".join(self.device_plugin) or None,
        }
        return {part: value for part, value in parts.items() if value}


class SimilarReport(_Model):
    """A resolved public report that reads like the pasted text (BM25 over the shipped corpus index).

    ``resolution`` is the first sentence of how its thread resolved it, in our words (English);
    ``causes`` is empty for a report outside the ten causes, and for a healthy one (``healthy``).
    """

    id: str
    causes: list[int] = field(default_factory=list)
    resolution: str = ""
    address: str = ""
    score: float = 0.0
    healthy: bool = False
    shared_words: int = 0  # distinct words it shares with the text


class Diagnosis(_Model):
    cluster: str | None = None
    # Where the Ray cluster lives; fills {namespace} in commands whose subject has none.
    namespace: str | None = None
    findings: list[Finding] = field(default_factory=list)
    errors: list[CollectionError] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # Headline figures for the verdict line ("3/4 worker Pods joined Ray", "GPUs: 8 in Kubernetes,
    # 4 in Ray"); keys are stable identifiers, values already formatted.
    figures: dict[str, str] = field(default_factory=dict)
    # The GPUs layer by layer, for the capacity picture and the health post.
    capacity: Capacity = field(default_factory=Capacity)
    versions: StackVersions = field(default_factory=StackVersions)
    # The closest resolved reports to a pasted text, best first ("Seen before"); empty for a
    # cluster that was read, and wherever the index could not be used.
    similar: list[SimilarReport] = field(default_factory=list)

    @property
    def top(self) -> Finding | None:
        return self.findings[0] if self.findings else None

    @property
    def verdict_layer(self) -> VerdictLayer:
        alarming = [f for f in self.findings if f.severity != "info"]
        if alarming:
            return alarming[0].layer
        # A finding from likeness alone reads nothing in the text, and a note on the person's own
        # words ("my tasks are pending") shows no tool output either: the verdict stays unknown.
        if self.figures or any(f.rule != SIMILAR_RULE and not only_stated(f) for f in self.findings):
            return "healthy"
        return "unknown"


def only_stated(finding: Finding) -> bool:
    """Whether every line a finding quotes is the person's words rather than a tool's output."""
    return bool(finding.evidence) and all(e.source == STATED_SOURCE for e in finding.evidence)


def finding_key(finding: Finding) -> str:
    """What makes two findings "the same" from one run to the next: cause, rule and subject."""
    subject = finding.subject
    return f"{finding.cause}|{finding.rule}|{subject.kind}/{subject.namespace or ''}/{subject.name or ''}"
