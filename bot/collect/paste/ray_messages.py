"""Messages Ray prints when work cannot be placed, and how to read a demand out of them.

Three components speak here, each in its own notation:

* the core worker's scheduling warning: ``The actor or task with ID … cannot be scheduled right
  now. It requires {CPU: 1.000000}, {GPU: 1.000000} for placement, but this node only has remaining
  {11.000000/12.000000 CPU, …, 1.000000/1.000000 node:192.168.178.28}`` (Ray 2.x moved the maps to
  ``Required resources for this actor or task:`` and ``Available resources on this node:`` lines).
  The remaining map is the only per-node figure many users ever paste, so it becomes a ``RayNode``;
* the autoscaler: ``No available node types can fulfill resource request {...}`` and ``could not
  find a node type to satisfy the request: [{...}, ...]`` (never satisfiable: infeasible), and
  ``The following resource request cannot be scheduled right now: {...}`` (not now, maybe later);
* Ray Tune: ``You asked for 3.0 CPUs and 1.0 GPUs per trial, but the cluster only has ...``;
* the raylet/GCS client and ``ray start``: connection failures and version mismatches, kept as
  text for the connectivity rules.

These messages wrap over several lines and are often cut mid-way; ``starts_message`` and
``continues_message`` let the line reader join them into one logical line first, and the readers
here take whatever part is present.
"""

from __future__ import annotations

import re

from bot.collect.paste.found import Found
from bot.collect.paste.ray_resources import find_maps, node_ip_from_resources, parse_amount, parse_usage
from bot.snapshot.ray import Demand, RayNode

SCHEDULER_FORMAT = "ray scheduling warning"
AUTOSCALER_FORMAT = "ray autoscaler message"
CONNECTION_FORMAT = "ray connection messages"
TUNE_FORMAT = "ray tune resource warning"

_STARTERS = (
    "cannot be scheduled right now",
    "No available node types can fulfill",
    "could not find a node type to satisfy",
    "Version mismatch",
)
_LOG_PREFIX = re.compile(
    r"^\s*(?:\[?\d{4}-\d\d-\d\d[ T]\d|\(\w[\w ,=+.:-]*\)\s|[IWEF]\d{4}\s|(?:WARNING|ERROR|INFO|DEBUG)\b|\$\s)"
)
_YAML_KEY_ONLY = re.compile(r"^\s*[\w.-]+:\s*$")

_REQUIRES = ("It requires ", "Required resources for this actor or task:")
_REMAINING = ("this node only has remaining ", "Available resources on this node:")
_INFEASIBLE = ("No available node types can fulfill", "could not find a node type to satisfy")
_NOT_NOW = "following resource request cannot be scheduled right now"
_MAX_SHAPES = 50
# Matched against the lower-cased line (IGNORECASE is several times slower on every loose line).
_CONNECTION = re.compile(
    r"failed to connect to gcs|unable to connect to gcs|failed to get cluster id from gcs|"
    r"gcs (?:server|client).{0,40}(?:unavailable|timed? ?out|failed)|version mismatch|"
    r"could not connect to (?:the )?(?:ray )?cluster|could not find any running ray instance|"
    r"\bray start\b.{0,2000}--address"
)
# Ray Tune's insufficient-resources warning: the per-trial request, with the cluster's figures.
_TUNE = re.compile(
    r"You asked for (?P<cpu>[\d.]+) CPUs? and (?P<gpu>[\d.]+) GPUs? per trial, but the cluster only has "
    r"(?P<have_cpu>[\d.]+) CPUs? and (?P<have_gpu>[\d.]+) GPUs?"
)
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
    for stop in (" for placement", "Available resources on this node", ". "):
        at = segment.find(stop)
        if at >= 0:
            segment = segment[:at]
            break
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


def _demands_after(text: str, opener: str, infeasible: bool) -> list[Demand]:
    segment = text[text.find(opener) + len(opener) :]
    placement = "placement group" in segment[:200]
    counts: dict[str, tuple[dict[str, float], int]] = {}
    bundles: list[dict[str, float]] = []
    for found in find_maps(segment):
        if not found.shape:
            continue
        times = found.times or 1
        if placement:
            bundles.extend(dict(found.shape) for _ in range(min(times, 100)))
            continue
        key = repr(sorted(found.shape.items()))
        shape, count = counts.get(key, (found.shape, 0))
        counts[key] = (shape, count + times)
        if len(counts) >= _MAX_SHAPES:
            break
    if placement and bundles:
        total: dict[str, float] = {}
        for bundle in bundles:
            for key, value in bundle.items():
                total[key] = total.get(key, 0.0) + value
        return [
            Demand(
                shape=total, kind="placement_group", bundles=bundles, infeasible=infeasible, source_text=text
            )
        ]
    return [
        Demand(shape=shape, count=count, kind="task_or_actor", infeasible=infeasible, source_text=text)
        for shape, count in counts.values()
    ]


def read_message(text: str, found: Found) -> bool:
    """Read a demand, a node or a version out of one logical line; True if it was a Ray message."""
    recognised = False
    if "cannot be scheduled right now" in text and (
        "actor or task" in text or "It requires" in text or "Required resources" in text
    ):
        shape = _required_shape(text)
        if shape:
            found.add_demand(Demand(shape=shape, kind="task_or_actor", source_text=text))
        node = _remaining_node(text)
        if node is not None:
            found.add_ray_node(node)
        found.recognise(SCHEDULER_FORMAT)
        recognised = True
    for opener in _INFEASIBLE:
        if opener in text:
            for demand in _demands_after(text, opener, infeasible=True):
                found.add_demand(demand)
            found.recognise(AUTOSCALER_FORMAT)
            recognised = True
            break
    if _NOT_NOW in text:
        for demand in _demands_after(text, _NOT_NOW, infeasible=False):
            found.add_demand(demand)
        found.recognise(AUTOSCALER_FORMAT)
        recognised = True
    if tune := _TUNE.search(text):
        cpu, gpu = parse_amount(tune.group("cpu")), parse_amount(tune.group("gpu"))
        shape = {"CPU": cpu or 0.0, "GPU": gpu or 0.0}
        # A trial reserves its resources as one placement group; its bundles are not printed.
        found.add_demand(Demand(shape=shape, kind="placement_group", source_text=text))
        found.recognise(TUNE_FORMAT)
        recognised = True
    if _CONNECTION.search(text.lower()):
        found.recognise(CONNECTION_FORMAT)
        recognised = True
    if version := _VERSION.search(text):
        found.ray_version = version.group(1)
    return recognised
