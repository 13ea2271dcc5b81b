"""The Ray half of a snapshot, normalised.

Ray reports its state in several shapes depending on the version and on where it was read (the
dashboard's state API, the autoscaler's status, or a pasted ``ray status``). Collectors and parsers
translate all of them into these models. Resources use Ray's own names (``CPU``, ``GPU``,
``memory``, ``accelerator_type:A100``, custom names) and Ray's units (memory in bytes).

A pasted ``ray status`` without ``-v`` gives only cluster totals, not per-node figures; those go
into ``totals``/``used`` and ``nodes`` stays empty, and the classifier reasons with what it has.
"""

from __future__ import annotations

from dataclasses import field
from datetime import datetime

from bot.snapshot.base import Record
from bot.snapshot.redact import Redacted, RedactedLines


class _Model(Record):
    pass


class RayNode(_Model):
    node_id: str | None = None
    node_ip: str | None = None
    state: str = "ALIVE"
    is_head: bool = False
    node_type: str | None = None
    resources_total: dict[str, float] = field(default_factory=dict)
    # None when the source does not say what is free on this node.
    resources_available: dict[str, float] | None = None
    labels: dict[str, str] = field(default_factory=dict)
    # What is free of each unit of a resource Ray tracks per unit (GPU), when known: a fractional
    # request must fit inside one unit, so four 0.4-GPU actors on two GPUs leave room for no fifth.
    unit_available: dict[str, list[float]] = field(default_factory=dict)

    @property
    def alive(self) -> bool:
        return self.state.upper() in {"ALIVE", "IDLE", "ACTIVE", "RUNNING"}


class Demand(_Model):
    """Work waiting for resources: a task/actor shape, or a placement group's bundles."""

    shape: dict[str, float] = field(default_factory=dict)
    count: int = 1
    kind: str = "task"  # task | actor | task_or_actor | placement_group
    bundles: list[dict[str, float]] = field(default_factory=list)
    strategy: str | None = None
    infeasible: bool = False
    # Ray's own message said the request fits a node but the resources are claimed now (the
    # "cluster full of actors" warnings); the paste may hold no totals to check that against.
    reported_held: bool = False
    # Listed by the state API (``ray list tasks``, a PENDING placement group) or a demand line quoted
    # without its status: it waits, and nothing says why, so with no figures to compare it is
    # reported as not judged.
    listed: bool = False
    # Work scheduled into a placement group (``ray status``'s ``(N+ using placement groups)``, a
    # task row with a ``placement_group_id``): only its group's reserved bundles can run it.
    in_placement_group: bool = False
    name: str | None = None
    source_text: Redacted | None = None
    # Read from what the user pasted of their own (``python code``, a ``serve config``), not reported
    # by Ray: which of them, for the evidence; ``source_text`` quotes the line.
    code_source: str | None = None
    # Declared in code and nothing in the paste shows it waiting: only what no node or template
    # could ever hold is judged, never "held now" or "fits".
    declared: bool = False

    @property
    def largest_single_request(self) -> dict[str, float]:
        """What one node must hold at once for this demand to start."""
        if self.kind == "placement_group" and self.bundles:
            if (self.strategy or "").upper() == "STRICT_PACK":
                merged: dict[str, float] = {}
                for bundle in self.bundles:
                    for key, value in bundle.items():
                        merged[key] = merged.get(key, 0.0) + value
                return merged
            return max(self.bundles, key=lambda b: sum(b.values()))
        return self.shape


class ResourceConstraint(_Model):
    """A standing ``ray.autoscaler.sdk.request_resources()`` call: the autoscaler keeps room for
    ``count`` bundles of ``shape``. It is no work waiting (``ray status`` lists it under ``From
    request_resources:`` / ``Total Constraints:`` / ``Constraints:``, before 2.4x inside the demands
    as ``N+ from request_resources()``), so no rule judges it as pending; only one the autoscaler
    calls infeasible is judged, as a request (``bot.classify.detectors.constraints``)."""

    shape: dict[str, float] = field(default_factory=dict)
    count: int = 1
    # The autoscaler said no node type can hold it (v2: ``No available node types can fulfill
    # cluster constraint: ...``).
    infeasible: bool = False
    source_text: Redacted | None = None


class RayActor(_Model):
    actor_id: str | None = None
    class_name: str | None = None
    name: str | None = None
    state: str = "ALIVE"
    node_id: str | None = None
    job_id: str | None = None
    pid: int | None = None
    required_resources: dict[str, float] = field(default_factory=dict)
    detached: bool = False
    ray_namespace: str | None = None
    start_time: datetime | None = None
    placement_group_id: str | None = None


class RayTask(_Model):
    task_id: str | None = None
    name: str | None = None
    state: str = "PENDING_NODE_ASSIGNMENT"
    job_id: str | None = None
    required_resources: dict[str, float] = field(default_factory=dict)


class PlacementGroup(_Model):
    placement_group_id: str | None = None
    name: str | None = None
    state: str = "CREATED"
    strategy: str = "PACK"
    bundles: list[dict[str, float]] = field(default_factory=list)
    detached: bool = False
    creator_job_id: str | None = None
    job_dead: bool = False


class ServeDeployment(_Model):
    name: str
    status: str = "UNKNOWN"
    message: Redacted = ""
    replica_states: dict[str, int] = field(default_factory=dict)


class ServeApplication(_Model):
    name: str
    status: str = "UNKNOWN"
    message: Redacted = ""
    deployments: list[ServeDeployment] = field(default_factory=list)


class RayJobInfo(_Model):
    job_id: str | None = None
    submission_id: str | None = None
    status: str = "PENDING"
    message: Redacted | None = None
    entrypoint: Redacted | None = None


class NodeType(_Model):
    """A template the autoscaler can launch: a KubeRay worker group or a cluster-launcher node type."""

    name: str
    resources: dict[str, float] = field(default_factory=dict)
    # True when the template lists its resources explicitly (cluster-launcher ``resources:`` or
    # rayStartParams ``resources``/``num-gpus``), so a missing key really is missing.
    explicit: bool = False
    min_workers: int | None = None
    max_workers: int | None = None
    current: int | None = None
    # The GPUs the type's machine or Pod has (its ``nvidia.com/gpu`` limit) when the config says,
    # whatever ``resources`` tells Ray: a gap between the two is GPUs hidden from Ray.
    gpu_limit: float = 0.0


class TuneTrials(_Model):
    """Ray Tune's trials by state (``PENDING``, ``RUNNING``, ``TERMINATED``...), as its status
    output reports them, with the lines of the paste that say so."""

    counts: dict[str, int] = field(default_factory=dict)
    quotes: RedactedLines = field(default_factory=list)

    @property
    def pending(self) -> int:
        return self.counts.get("PENDING", 0)

    @property
    def running(self) -> int:
        return self.counts.get("RUNNING", 0)


class RayStartCommand(_Model):
    """A ``ray start`` command line the paste shows: the node it starts and what it declares."""

    text: Redacted = ""
    head: bool = False
    # ``--address`` (``--redis-address`` before 1.0) of a worker: the head it joins.
    address: str | None = None
    # ``--num-gpus``: the GPUs the raylet registers instead of detecting them; None when not given.
    num_gpus: float | None = None
    # ``CUDA_VISIBLE_DEVICES=...`` before the command on its line; None when the line sets none.
    visible_devices: str | None = None


class ConstructorMismatch(_Model):
    """Pasted code constructs a class it also pastes with arguments its ``__init__`` cannot take:
    an actor (``A.remote(...)``) or a Serve deployment (``X.bind(...)``, ``X.deploy(...)``).
    ``error`` is what binding the call's arguments to the ``__init__`` gives (Python's
    ``inspect.Signature.bind``, which Ray also calls before it creates an actor)."""

    kind: str  # actor | deployment
    class_name: str
    init: Redacted = ""
    call: Redacted = ""
    error: str = ""


class RayState(_Model):
    version: str | None = None
    nodes: list[RayNode] = field(default_factory=list)
    # Cluster-wide figures when per-node ones are not known (plain `ray status`).
    totals: dict[str, float] = field(default_factory=dict)
    used: dict[str, float] = field(default_factory=dict)
    node_count: int | None = None
    node_groups: dict[str, int] = field(default_factory=dict)
    pending_nodes: list[str] = field(default_factory=list)
    recent_failures: RedactedLines = field(default_factory=list)
    # ``(x used of y reserved in placement groups)``: what groups reserve (free only to their own
    # work) and how much of it that work uses, cluster-wide.
    reserved: dict[str, float] = field(default_factory=dict)
    reserved_used: dict[str, float] = field(default_factory=dict)
    # ``totals`` come from a plain ``ray status`` (Ray 2.4+), which leaves ``accelerator_type:``
    # resources out: their absence there says nothing.
    accelerator_types_hidden: bool = False
    demands: list[Demand] = field(default_factory=list)
    # What pasted code asks for (``Demand.declared``), which nothing shows waiting: judged only for
    # what no node or template could ever hold, and never counted as waiting.
    declared_demands: list[Demand] = field(default_factory=list)
    # Remote functions and actor classes pasted code declares with no GPU while nothing in it asks
    # for one (``@ray.remote … def f``): Ray hides every GPU from their workers.
    work_without_gpus: list[str] = field(default_factory=list)
    # Pasted constructions of pasted classes whose arguments their ``__init__`` cannot take.
    constructor_mismatches: list[ConstructorMismatch] = field(default_factory=list)
    # ``ray start`` command lines pasted as the way the cluster was started.
    start_commands: list[RayStartCommand] = field(default_factory=list)
    constraints: list[ResourceConstraint] = field(default_factory=list)
    node_types: list[NodeType] = field(default_factory=list)
    actors: list[RayActor] = field(default_factory=list)
    pending_tasks: list[RayTask] = field(default_factory=list)
    placement_groups: list[PlacementGroup] = field(default_factory=list)
    serve_applications: list[ServeApplication] = field(default_factory=list)
    jobs: list[RayJobInfo] = field(default_factory=list)
    tune: TuneTrials | None = None
    # Parts of the Ray layer this release's dashboard has no endpoint for (part -> the paths that
    # answered 404): what they would show is unknown, not empty. Only ``serve`` for now (Ray 2.5's
    # dashboard has no Serve REST API).
    unread: dict[str, list[str]] = field(default_factory=dict)

    @property
    def alive_nodes(self) -> list[RayNode]:
        return [n for n in self.nodes if n.alive]

    @property
    def nodes_complete(self) -> bool:
        """Whether ``nodes`` holds every alive node the status counts.

        ``ray status -v`` prints a ``Node:`` block per entry of the autoscaler's per-node report,
        which can hold fewer nodes than its ``Healthy:``/``Active:`` counts: the v1 monitor keys it
        by IP unless its provider keys nodes by id (Ray nodes sharing an IP print one block), and a
        paste may be cut inside the blocks. Then the listed nodes are a sample, and what holds
        for all nodes comes from the counts and the cluster totals."""
        return self.node_count is None or len(self.alive_nodes) >= self.node_count
