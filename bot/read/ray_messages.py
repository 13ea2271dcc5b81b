"""Messages Ray prints when work cannot be placed, and how to read a demand out of them.

Several components speak here, each in its own notation:

* the raylet's warnings about a task or actor that ``cannot be scheduled right now``. Two differ in
  what Ray itself concluded: the "resource deadlock" warning (``...this is likely due to all cluster
  resources being claimed by actors``; Ray 1.x put the maps in ``It requires {CPU: 1.000000} for
  placement, but this node only has remaining {...}``, Ray 2.x in ``Required resources for this
  actor or task:`` / ``for this lease:`` and ``Available resources on this node:`` lines) is printed
  for work queued on a node that could run it, so its demand is marked ``reported_held``; the
  infeasible warning (``...however the cluster currently cannot provide the requested resources``)
  marks it infeasible. An ``available/total`` remaining map is the only per-node figure many users
  ever paste, so it becomes a ``RayNode``;
* the autoscaler: ``No available node types can fulfill resource request(s) {...}`` and ``could not
  find a node type to satisfy the request: [{...}, ...]`` (no node type could ever hold it), and
  v1's ``Warning: The following resource request cannot be scheduled right now: {...}. This is
  likely due to all cluster resources being claimed by actors`` (it fits a node type, but the
  cluster is full of actors: held);
* Ray Tune and Train: ``You asked for 3.0 CPUs and 1.0 GPUs per trial, but the cluster only has
  ...``, the pre-1.0 ``TuneError: Insufficient cluster resources to launch trial: trial requested
  ... but the cluster has only ...``, Train v2's ``The worker group requires {"GPU": 2} but the
  cluster only has a maximum of {"GPU": 1}``, and the ``== Status ==`` table's ``Resources
  requested: 0/8 CPUs, 0/0 GPUs, ...`` / ``Logical resource usage: 4.0/8 CPUs, 0/0 GPUs`` line, which
  gives the cluster's totals;
* Ray Serve's controller: ``Deployment 'X' in application 'Y' has 2 replicas that have taken more
  than 30s to be scheduled. ... Resources required for each replica: {...}, total resources
  available: {...}``;
* Ray before 0.5: ``Could not find a node with enough GPUs or other resources to create this
  actor. The local scheduler information is [{... 'NumCPUs': 32.0, 'NumGPUs': 1.0 ...}]``;
* the raylet/GCS client, ``ray start`` and Ray Client: connection failures, nodes the GCS marked
  dead (missed heartbeats or health checks, a raylet that died) and version mismatches, kept as text
  for the connectivity rules;
* what fails after placement: a runtime_env that cannot be built, worker processes the raylet
  started that never registered, an actor whose constructor raised, a Serve controller that cannot
  update its deployments, kept as text for the application rules.

These messages wrap over several lines and are often cut mid-way; ``starts_message`` and
``continues_message`` let the line reader join them into one logical line first, and the readers
here take whatever part is present.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace

from bot.read import ray_resource_figures, ray_start_command, tune_status
from bot.read.autoscaler_text import (
    INFEASIBLE_EVENT,
    counted_shapes,
    infeasible_requests,
    printed_bundles,
)
from bot.read.formats import Format, Tag
from bot.read.found import Found, RayStatusFigures
from bot.read.ray_resource_maps import (
    find_maps,
    node_ip_from_resources,
    parse_amount,
    parse_usage,
)
from bot.read.ray_status_text import placement_group_demand
from bot.snapshot.ray import Demand, RayNode, ResourceConstraint

SCHEDULER_FORMAT = Format("ray scheduling warning", Tag.RAY_DRIVER_WARNING)
AUTOSCALER_FORMAT = Format("ray autoscaler message", Tag.RAY_LOG)
CONNECTION_FORMAT = Format("ray connection messages", Tag.RAY_LOG)
APPLICATION_FORMAT = Format("ray application failure messages", Tag.RAY_EXCEPTION)
TUNE_FORMAT = Format("ray tune resource warning", Tag.RAY_DRIVER_WARNING)
SERVE_FORMAT = Format("ray serve controller message", Tag.RAY_SERVE)
LEGACY_FORMAT = Format("ray legacy scheduler error", Tag.RAY_EXCEPTION)
FRAMEWORK_FORMAT = Format("resource check of a framework on ray", Tag.RAY_EXCEPTION)

_STARTERS = (
    "cannot be scheduled right now",
    "cannot currently be scheduled",
    "No available node types can fulfill",
    "could not find a node type to satisfy",
    "Version mismatch",
    "Insufficient cluster resources to launch",
    "replicas that have taken more than",
    "Could not find a node with enough GPUs",
    "not have enough resources to launch workers",
    "Waiting for creating a placement group of specs",
    "Cannot provide a placement group of",
)
_LOG_PREFIX = re.compile(
    r"^\s*(?:\[?\d{4}-\d\d-\d\d[ T]\d|\(\w[\w ,=+.:-]*\)\s|[IWEF]\d{4}\s|(?:WARNING|ERROR|INFO|DEBUG)\b|\$\s)"
)
_YAML_KEY_ONLY = re.compile(r"^\s*[\w.-]+:\s*$")

_REQUIRES = (
    "It requires ",
    "Required resources for this actor or task:",
    "Required resources for this lease:",
    "Required resources for this task:",
)
_REMAINING = ("this node only has remaining ", "Available resources on this node:")
# The raylet's "resource deadlock" warning: the work is queued on a node that could run it.
_HELD_SIGNS = ("claimed by actors", "only has remaining")
_RAYLET_INFEASIBLE = "cluster currently cannot provide the requested resources"
# Autoscaler v1's ``resource_demand_scheduler`` warning for shapes no node type holds.
_NO_NODE_TYPE = "could not find a node type to satisfy"
_NOT_NOW = "following resource request cannot be scheduled right now"
# Matched against the lower-cased line (IGNORECASE is several times slower on every loose line).
_CONNECTION = re.compile(
    r"failed to connect to gcs|unable to connect to gcs|failed to get cluster id from gcs|"
    r"gcs (?:server|client).{0,40}(?:unavailable|timed? ?out|failed)|version mismatch|"
    r"could not connect to (?:the )?(?:ray )?cluster|could not find any running ray instance|"
    r"\bray start\b.{0,2000}--address|has been marked dead because the|missing too many heartbeats|"
    r"health check failed for node|this node is disconnected|"
    r"raylet is terminated\. termination is unexpected|local raylet died|ray client connection timeout|"
    r"python minor versions differ between client|"
    r"client ray installation incompatible|"
    # Before Ray 1.11 (and with an external Redis for GCS fault tolerance since) every process
    # reached the head through Redis: ``redis_context.cc`` and ``services.py`` wordings.
    r"redis_context\.cc.{0,80}(?:failed|could not)|could not establish connection to redis|"
    r"(?:failed|unable) to connect to (?:the )?redis|could not connect to redis|"
    r"waiting for redis server at|could not allocate redis context|have not registered with redis"
)
# Failures after the work was placed (runtime env, worker start, constructor, Serve controller).
_APPLICATION = re.compile(
    r"failed to set ?up runtime env|runtimeenvsetuperror|runtime_env setup failed|"
    r"runtime env failed to be created|could not find conda environment|"
    r"some workers of the worker process\(\d+\) have not|error raised in its creation task|"
    r"exception updating (?:backend|deployment|application) state"
)
_NUM = r"\d+(?:\.\d+)?"
# Tune's and Train's insufficient-resources warnings (Ray 1.x-2.x): the request with the totals.
_TUNE = re.compile(
    rf"You asked for (?P<cpu>{_NUM}) (?:CPU|cpu)s? and (?P<gpu>{_NUM}) (?:GPU|gpu)s?(?: per trial)?, but the "
    rf"cluster only has (?P<have_cpu>{_NUM}) (?:CPU|cpu)s? and (?P<have_gpu>{_NUM}) (?:GPU|gpu)s?"
)
# Tune before 1.0 raised this instead of queueing the trial.
_TUNE_LEGACY = re.compile(
    r"Insufficient cluster resources to launch trial: trial requested (?P<asked>.{1,400}?) "
    r"but the cluster has only (?P<have>.{1,400}?)(?:\.\s+[A-Z]|\.?\s*$)"
)
_TUNE_ITEM = re.compile(rf"(?P<amount>{_NUM})\s*(?P<unit>[KMGT]i?B)?\s+(?P<name>[A-Za-z_][\w:.-]*)")
# Train v2: the whole worker group against the largest cluster the autoscaler may build.
_TRAIN_GROUP = re.compile(
    rf'The worker group requires \{{"(?P<name>[^"]{{1,100}})": (?P<need>{_NUM})\}} but the cluster '
    rf'only has a maximum of \{{"(?P=name)": (?P<have>{_NUM})\}}'
)
# ``== Status ==`` tables: ``Resources requested: 4/8 CPUs, 0/0 GPUs, 0.0/6.4 GiB heap, ...``
# (Ray 0.x-1.x) and ``Logical resource usage: 4.0/8 CPUs, 0/0 GPUs (0.0/1.0 accelerator_type:T4)``.
_TUNE_USAGE = re.compile(r"(?:Resources requested|Logical resource usage): (?P<body>.{1,2000})")
_TUNE_USAGE_ITEM = re.compile(
    rf"(?P<used>{_NUM})\s*(?:[KMGT]i?B)?\s*/\s*(?P<total>{_NUM})\s*(?P<unit>[KMGT]i?B)?\s+(?P<name>[A-Za-z_][\w:.-]*)"
)
_TUNE_NAMES = {
    "CPUs": "CPU",
    "CPU": "CPU",
    "GPUs": "GPU",
    "GPU": "GPU",
    "heap": "memory",
    "objects": "object_store_memory",
}
_RAY_DEFINED = frozenset({"CPU", "GPU", "TPU", "memory", "object_store_memory"})
# Serve's controller: replicas waiting for a node (``deployment_state.py``, Ray 2.x).
_SERVE_PENDING = re.compile(
    r"Resources required for each replica: (?P<required>\[.{0,2000}?\]|\{.{0,2000}?\}), "
    r"(?:total )?resources available: (?P<available>\{.{0,2000}?\})"
)
# Frameworks on Ray that check free resources before they start: AReaL (``Required: 16 CPU, 4 GPU,
# 351.56 GB memory. Available: 80.0 CPU, 8.0 GPU, 255.89 GB memory``, the cluster's totals), verl
# and vLLM (what is free now: the totals are not printed, so the GPUs may be held or missing).
_FRAMEWORK_TOTALS = re.compile(
    r"not have enough resources to launch workers\. Required: (?P<need>.{1,300}?)\. "
    r"Available: (?P<have>.{1,300}?)(?:\.\s|\.?$)"
)
_FRAMEWORK_FREE = re.compile(
    rf"Total available GPUs (?P<have>{_NUM}) is less than total desired GPUs (?P<need>{_NUM})|"
    r"Current node has no GPU available"
)
# vLLM's ``ray_utils`` waiting for the placement group of its workers (0.4+): the bundles, the first
# pinned to the driver's node with a ``node:<ip>`` resource. A pin that no Ray node registers (the
# IP vLLM sees is not the one Ray registered) can never be placed.
_VLLM_SPECS = re.compile(
    r"(?:Waiting for creating a placement group of specs for \d+ seconds\. specs=|"
    r"Cannot provide a placement group of placement_group_specs=)(?P<specs>\[.{0,20000}?\])"
)
_LEGACY_ACTOR = "Could not find a node with enough GPUs or other resources to create this actor"
_LEGACY_KEYS = {"NumCPUs": "CPU", "NumGPUs": "GPU"}
_VERSION = re.compile(r"\bray, version (\d+\.\d+\.\d+\S*)")


def starts_message(line: str) -> bool:
    return any(starter in line for starter in _STARTERS)


def continues_message(line: str) -> bool:
    """Whether a line after a Ray message is more of it rather than something new."""
    if not line.strip() or _LOG_PREFIX.match(line) or _YAML_KEY_ONLY.match(line):
        return False
    return not starts_message(line)


def _segment(text: str, openers: tuple[str, ...]) -> str | None:
    for opener in openers:
        at = text.find(opener)
        if at >= 0:
            return text[at + len(opener) :]
    return None


def _required_shape(text: str) -> dict[str, float]:
    segment = _segment(text, _REQUIRES)
    if segment is None:
        return {}
    # Ray 1.x printed the map twice, ``{CPU: 1} for execution and {CPU: 1} for placement``.
    stops = [
        at
        for stop in (" for execution", " for placement", "Available resources on this node", ". ")
        if (at := segment.find(stop)) >= 0
    ]
    if stops:
        segment = segment[: min(stops)]
    shape: dict[str, float] = {}
    for found in find_maps(segment)[:20]:
        for key, value in found.shape.items():
            shape[key] = shape.get(key, 0.0) + value
    return shape


def _remaining_node(text: str) -> RayNode | None:
    """The node the warning was printed on: ``available/total name`` items, possibly cut short."""
    segment = _segment(text, _REMAINING)
    if segment is None:
        return None
    opening = segment.find("{")
    if opening < 0:
        return None
    body = segment[opening + 1 :]
    closing = body.find("}")
    if closing >= 0:
        body = body[:closing]
    total: dict[str, float] = {}
    available: dict[str, float] = {}
    for item in body.split(","):
        usage = parse_usage(item)
        if usage is not None:
            available[usage.name] = usage.first
            total[usage.name] = usage.second
    if not total:
        # Ray 1.x printed only what is left (``{CPU: 7.000000}, {memory: 12.7 GiB}``); without the
        # totals a node would look smaller than it is, so no node is made from it.
        return None
    return RayNode(
        node_ip=node_ip_from_resources(total),
        is_head="node:__internal_head__" in total,
        resources_total=total,
        resources_available=available,
    )


def _infeasible_demands(text: str, found: Found) -> list[Demand]:
    """The autoscaler's "No available node types can fulfill ..." (read in :mod:`bot.snapshot`).

    A ``cluster constraint`` (``request_resources()``) that fits no node type is kept as that
    constraint: nothing waits on it, so it is no demand."""
    requests = infeasible_requests(text)
    if requests.constraint:
        for shape, count in requests.shapes:
            found.add_constraint(
                ResourceConstraint(shape=shape, count=count, infeasible=True, source_text=text)
            )
        return []
    if requests.bundles:
        return [placement_group_demand(requests.bundles, None, 1, text, infeasible=True)]
    return [
        Demand(shape=shape, count=count, kind="task_or_actor", infeasible=True, source_text=text)
        for shape, count in requests.shapes
    ]


def _demands_after(text: str, opener: str, infeasible: bool, held: bool = False) -> list[Demand]:
    """The maps after ``opener``, in the notations :mod:`bot.read.autoscaler_text` reads."""
    segment = text[text.find(opener) + len(opener) :]
    if "placement group" in segment[:200]:
        bundles = printed_bundles(segment)
        return [placement_group_demand(bundles, None, 1, text, infeasible=infeasible)] if bundles else []
    return [
        Demand(
            shape=shape,
            count=count,
            kind="task_or_actor",
            infeasible=infeasible,
            reported_held=held,
            source_text=text,
        )
        for shape, count in counted_shapes(segment)
    ]


def _set_cluster_totals(found: Found, totals: dict[str, float], used: dict[str, float]) -> None:
    """Cluster-wide totals from a Tune or Train message; a pasted ``ray status`` says more."""
    if not totals:
        return
    if found.ray_status is None:
        found.ray_status = RayStatusFigures(totals=totals, used=used)
    elif not found.ray_status.totals:
        found.ray_status.totals = totals
        found.ray_status.used = used


def _tune_items(text: str) -> dict[str, float]:
    """``11 CPUs, 1 GPUs, 1.37 GiB heap, 0.44 GiB objects`` → Ray's resource names and units."""
    shape: dict[str, float] = {}
    for item in _TUNE_ITEM.finditer(text):
        name = _TUNE_NAMES.get(item.group("name"), item.group("name"))
        amount = parse_amount(item.group("amount"), item.group("unit"))
        if amount is not None:
            shape[name] = amount
    return shape


def _read_tune(text: str, found: Found) -> bool:
    recognised = False
    if tune := _TUNE.search(text):
        cpu, gpu = parse_amount(tune.group("cpu")) or 0.0, parse_amount(tune.group("gpu")) or 0.0
        # A trial (or a Train run) reserves its resources as one placement group; the bundles are
        # not printed, so the shape is the whole request.
        found.add_demand(Demand(shape={"CPU": cpu, "GPU": gpu}, kind="placement_group", source_text=text))
        have_cpu, have_gpu = parse_amount(tune.group("have_cpu")), parse_amount(tune.group("have_gpu"))
        _set_cluster_totals(found, {"CPU": have_cpu or 0.0, "GPU": have_gpu or 0.0}, {})
        recognised = True
    if legacy := _TUNE_LEGACY.search(text):
        asked = {k: v for k, v in _tune_items(legacy.group("asked")).items() if k in ("CPU", "GPU") or v}
        have = _tune_items(legacy.group("have"))
        have.setdefault("GPU", 0.0)
        if asked:
            found.add_demand(Demand(shape=asked, kind="placement_group", infeasible=True, source_text=text))
        _set_cluster_totals(found, have, {})
        recognised = True
    if group := _TRAIN_GROUP.search(text):
        name = group.group("name")
        wanted, largest = parse_amount(group.group("need")), parse_amount(group.group("have"))
        if wanted:
            found.add_demand(Demand(shape={name: wanted}, kind="placement_group", source_text=text))
            _set_cluster_totals(found, {name: largest or 0.0}, {})
        recognised = True
    if usage := _TUNE_USAGE.search(text):
        totals: dict[str, float] = {}
        used: dict[str, float] = {}
        for item in _TUNE_USAGE_ITEM.finditer(usage.group("body")):
            name = _TUNE_NAMES.get(item.group("name"), item.group("name"))
            total = parse_amount(item.group("total"), item.group("unit"))
            spent = parse_amount(item.group("used"), item.group("unit"))
            if total is not None:
                totals[name], used[name] = total, spent or 0.0
        if "CPU" in totals:
            _set_cluster_totals(found, totals, used)
            found.recognise(tune_status.FORMAT)
            return True
    if recognised:
        found.recognise(TUNE_FORMAT)
    return recognised


def _read_framework(text: str, found: Found) -> bool:
    recognised = False
    if match := _FRAMEWORK_TOTALS.search(text):
        need = _tune_items(match.group("need"))
        if need:
            found.add_demand(Demand(shape=need, kind="placement_group", source_text=text))
            _set_cluster_totals(found, _tune_items(match.group("have")), {})
            recognised = True
    if match := _FRAMEWORK_FREE.search(text):
        need_text = match.group("need")
        gpus = (parse_amount(need_text) if need_text else None) or 1.0
        found.add_demand(
            Demand(shape={"GPU": gpus}, kind="placement_group", reported_held=True, source_text=text)
        )
        recognised = True
    if recognised:
        found.recognise(FRAMEWORK_FORMAT)
    return recognised


def _json_shape(text: str) -> dict[str, float] | list[dict[str, float]] | None:
    try:
        value = json.loads(text)
    except ValueError:
        # Serve before 2.0 printed Python reprs (``{'CPU': 1}``).
        maps = [m.shape for m in find_maps(text)[:100]]
        if text.startswith("["):
            return maps
        return maps[0] if maps else None
    if isinstance(value, dict):
        return {str(k): float(v) for k, v in value.items() if isinstance(v, int | float)}
    if isinstance(value, list):
        return [
            {str(k): float(v) for k, v in item.items() if isinstance(v, int | float)}
            for item in value[:100]
            if isinstance(item, dict)
        ]
    return None


def _read_serve(text: str, found: Found) -> bool:
    """Replicas that no node accepted: a demand, unless what is free now would already fit it."""
    match = _SERVE_PENDING.search(text)
    if match is None:
        return False
    found.recognise(SERVE_FORMAT)
    required = _json_shape(match.group("required"))
    available = _json_shape(match.group("available"))
    free = available if isinstance(available, dict) else {}
    if isinstance(required, dict) and required:
        # What is free is summed over the whole cluster: when it would fit, yet the replica has
        # waited, no single node has that much (or a runtime env is still installing). When it does
        # not fit, the resources may be held or missing; ``ray.available_resources()`` leaves out
        # what is used up and the totals are not printed, so Ray's "claimed" reading is kept.
        fits_cluster = all(free.get(k, 0.0) + 1e-9 >= v for k, v in required.items())
        # A Ray-defined resource ``available`` leaves out has nothing free, or none at all: used up
        # (5), never registered (4, 6) or in a group that did not scale (9) read the same, so the
        # demand is left unjudged. A custom resource keeps Ray's "claimed" reading: the rules for
        # GPU-type and custom resources registered nowhere (6, 7) judge it against the nodes.
        short_but_listed = not fits_cluster and all(k in free for k in required if k in _RAY_DEFINED)
        found.add_demand(
            Demand(
                shape=required,
                kind="actor",
                reported_held=short_but_listed,
                listed=not fits_cluster and not short_but_listed,
                source_text=text,
            )
        )
    elif isinstance(required, list) and required:
        total: dict[str, float] = {}
        for bundle in required:
            for key, value in bundle.items():
                total[key] = total.get(key, 0.0) + value
        found.add_demand(
            Demand(
                shape=total, kind="placement_group", bundles=required, reported_held=True, source_text=text
            )
        )
    return True


def _read_legacy_actor(text: str, found: Found) -> bool:
    """Ray 0.x: the local schedulers' totals; the actor asked for at least one GPU."""
    at = text.find(_LEGACY_ACTOR)
    if at < 0:
        return False
    found.recognise(LEGACY_FORMAT)
    for item in find_maps(text[at:])[:200]:
        total = {_LEGACY_KEYS[k]: v for k, v in item.shape.items() if k in _LEGACY_KEYS}
        if total:
            found.add_ray_node(RayNode(resources_total=total))
    found.add_demand(Demand(shape={"GPU": 1.0}, kind="actor", reported_held=True, source_text=text))
    return True


def _read_vllm(text: str, found: Found) -> bool:
    match = _VLLM_SPECS.search(text)
    if match is None:
        return False
    bundles = [m.shape for m in find_maps(match.group("specs"))[:1000] if m.shape]
    if bundles:
        pinned = any(key.startswith("node:") for bundle in bundles for key in bundle)
        demand = placement_group_demand(bundles, "PACK", 1, text)
        # Without a pin it waits like any group, and the paste may not say why.
        found.add_demand(replace(demand, listed=not pinned))
    found.recognise(FRAMEWORK_FORMAT)
    return True


def read_message(text: str, found: Found) -> bool:
    """Read a demand, a node or a version out of one logical line; True if it was a Ray message."""
    recognised = False
    if ("cannot be scheduled right now" in text or "cannot currently be scheduled" in text) and (
        "actor or task" in text or "It requires" in text or "Required resources" in text
    ):
        shape = _required_shape(text)
        infeasible = _RAYLET_INFEASIBLE in text
        held = not infeasible and any(sign in text for sign in _HELD_SIGNS)
        if shape:
            found.add_demand(
                Demand(
                    shape=shape,
                    kind="task_or_actor",
                    infeasible=infeasible,
                    reported_held=held,
                    source_text=text,
                )
            )
        node = _remaining_node(text)
        if node is not None:
            found.add_ray_node(node)
        found.recognise(SCHEDULER_FORMAT)
        recognised = True
    if INFEASIBLE_EVENT in text or _NO_NODE_TYPE in text:
        if INFEASIBLE_EVENT in text:
            demands = _infeasible_demands(text, found)
        else:
            demands = _demands_after(text, _NO_NODE_TYPE, infeasible=True)
        for demand in demands:
            found.add_demand(demand)
        found.recognise(AUTOSCALER_FORMAT)
        recognised = True
    if _NOT_NOW in text:
        # Autoscaler v1 prints this only for requests some node type fits, once the raylets
        # report the cluster full of actors.
        for demand in _demands_after(text, _NOT_NOW, infeasible=False, held="claimed by actors" in text):
            found.add_demand(demand)
        found.recognise(AUTOSCALER_FORMAT)
        recognised = True
    recognised = _read_tune(text, found) or recognised
    recognised = _read_serve(text, found) or recognised
    recognised = _read_legacy_actor(text, found) or recognised
    recognised = _read_framework(text, found) or recognised
    recognised = _read_vllm(text, found) or recognised
    recognised = tune_status.read_line(text, found) or recognised
    recognised = ray_resource_figures.read_figure_line(text, found) or recognised
    recognised = ray_start_command.read_line(text, found) or recognised
    lowered = text.lower()
    if _CONNECTION.search(lowered):
        found.recognise(CONNECTION_FORMAT)
        recognised = True
    if _APPLICATION.search(lowered):
        found.recognise(APPLICATION_FORMAT)
        recognised = True
    if version := _VERSION.search(text):
        found.ray_version = version.group(1)
    return recognised
