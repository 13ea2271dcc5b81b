"""Typed facts a finding carries beside its string params: lists of things, each a frozen dataclass.

A finding's ``params`` are the flat strings its rule templates name (``{pod}``, ``{resource}``).
What is a list (the resources a node lacks, the closest nodes, the node groups a scale-up grew,
the holders of a resource) is carried here as typed values instead of numbered string keys
(``lacking.1.resource``), and the renderer (``bot/render/localize.py``) words them directly in the
reader's language. Each fact names its ``fact`` kind, so that a stored diagnosis reads back as the
same types and the JSON of a finding is stable.

A leaf module: detectors, the diagnosis models and the renderers import it; it imports nothing of
raydiag.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class Shortfall:
    """A resource a node lacks for a Pod: amounts as written for that resource (``4``, ``16Gi``)."""

    resource: str
    needed: str
    free: str
    allocatable: str
    fact: Literal["shortfall"] = "shortfall"


@dataclass(frozen=True)
class RefusedOn:
    """kube-scheduler's own resource reason, verbatim (``Insufficient nvidia.com/gpu``), and the
    number of nodes it gave it for."""

    reason: str
    nodes: int
    fact: Literal["refused-on"] = "refused-on"


@dataclass(frozen=True)
class ClosestNode:
    """A node that came closest to fitting a Pod, and what it lacks."""

    node: str
    lacking: tuple[Shortfall, ...] = ()
    fact: Literal["closest-node"] = "closest-node"


@dataclass(frozen=True)
class ScaleUpGroup:
    """A node group cluster-autoscaler grew for a Pod: ``current`` → ``new`` nodes, at most ``maximum``."""

    group: str
    current: int
    new: int
    maximum: int | None = None
    fact: Literal["scale-up-group"] = "scale-up-group"


@dataclass(frozen=True)
class PluginPod:
    """A GPU device-plugin Pod on a node, its phase and whether it is Ready."""

    name: str
    phase: str
    ready: bool
    fact: Literal["plugin-pod"] = "plugin-pod"


@dataclass(frozen=True)
class MissingEndpoint:
    """A path of Ray's dashboard that answered HTTP 404."""

    path: str
    fact: Literal["missing-endpoint"] = "missing-endpoint"


@dataclass(frozen=True)
class ActorHolder:
    """An ALIVE Ray actor that holds a resource; empty strings where the source does not say."""

    resources: str
    class_name: str = ""
    actor_id: str = ""
    name: str = ""
    job: str = ""
    detached: bool = False
    node_ip: str = ""
    fact: Literal["actor-holder"] = "actor-holder"

    @property
    def label(self) -> str:
        return self.name or self.actor_id or self.class_name


@dataclass(frozen=True)
class GroupHolder:
    """A created placement group whose bundles reserve a resource."""

    name: str
    bundles: str
    strategy: str = ""
    fact: Literal["group-holder"] = "group-holder"

    @property
    def label(self) -> str:
        return self.name


@dataclass(frozen=True)
class ReservedHolder:
    """What placement groups reserve of a resource, and how much of it they use."""

    resource: str
    reserved: str
    used: str
    fact: Literal["reserved-holder"] = "reserved-holder"

    @property
    def label(self) -> str:
        return self.resource


Holder = ActorHolder | GroupHolder | ReservedHolder
Fact = Shortfall | RefusedOn | ClosestNode | ScaleUpGroup | PluginPod | MissingEndpoint | Holder
