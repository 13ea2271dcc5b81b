"""Rules over what the person said in words (``Snapshot.stated``), combined with what tools showed.

A stated fact is a retelling: a version from memory, a GPU count from the purchase order. It can
point at a cause no output in the paste shows, so it is judged, but every finding built on it quotes
the sentence as the user's words, is at most a warning, and names the command whose output would
settle it. Where the paste holds the tool's own output for the same question, the tool's rule
decides (those rules supersede these), and a tool fact that agrees only strengthens the quote.

Versions are compared where Ray compares them: Ray's version must be the same on the client, the
head and every worker (a version given as ``2.9`` matches any ``2.9.x``); Python's only in its minor
version, since Ray warns and goes on when only the patch differs. Two versions on the same side
("upgraded the cluster from 2.9 to 2.10", "tried 2.9 and 2.10 locally") are no mismatch.
"""

from __future__ import annotations

from collections.abc import Iterable

from bot.catalogue import Rule
from bot.classify.context import RAY_NODE_TYPE_LABEL, Context
from bot.classify.registry import Hit, detector
from bot.classify.versions import image_tag
from bot.diagnosis import STATED_SOURCE, Evidence, Subject
from bot.snapshot.stated import Stated, StatedNodeGpus

__all__ = ["stated_evidence", "stated_node_gpus"]

_MAX_QUOTE = 600
_MAX_EVIDENCE = 4
# The pairs of places whose versions must agree: what connects from outside against the cluster,
# and the head against its workers.
_PAIRS = (("cluster", "client"), ("head", "worker"))
_COMPONENT_NAMES = {"ray": "Ray", "python": "Python"}


def stated_evidence(quote: str) -> Evidence:
    """A sentence the person wrote, quoted as evidence and labelled as their words."""
    return Evidence(source=STATED_SOURCE, text=quote[:_MAX_QUOTE], source_phrase="evidence.stated")


def _stated(ctx: Context) -> Stated | None:
    return ctx.snapshot.stated


def stated_node_gpus(ctx: Context) -> StatedNodeGpus | None:
    """The most GPUs the person says one node has: with several statements, the most generous, so
    that a demand is called too large only when it is larger than every node they describe."""
    stated = _stated(ctx)
    if stated is None or not stated.node_gpus:
        return None
    return max(stated.node_gpus, key=lambda fact: fact.gpus)


def _compatible(component: str, one: str, other: str) -> bool:
    """Whether two versions may be the same release: ``2.9`` matches ``2.9.3``; Python compares
    only major and minor."""
    left, right = one.lower().lstrip("v").split("."), other.lower().lstrip("v").split(".")
    if component == "python":
        left, right = left[:2], right[:2]
    common = min(len(left), len(right))
    return left[:common] == right[:common]


# Where a version was seen: (version, whether a person said it, the evidence for it).
_Seen = tuple[str, bool, Evidence]


def _tool_versions(ctx: Context) -> dict[str, list[_Seen]]:
    """Ray versions the tools' output places on the cluster's side: a RayCluster's ``rayVersion``,
    and the Ray image tags of its head and worker groups."""
    seen: dict[str, list[_Seen]] = {}
    for cluster in ctx.kube.rayclusters:
        source = f"raycluster {cluster.name}"
        if cluster.ray_version:
            evidence = Evidence(source=source, text=f"rayVersion: {cluster.ray_version}")
            seen.setdefault("cluster", []).append((cluster.ray_version, False, evidence))
        groups = [("head", cluster.head)] if cluster.head else []
        groups += [("worker", group) for group in cluster.worker_groups]
        for side, group in groups:
            container = group.ray_container if group else None
            version = _ray_image_version(container.image if container else None)
            if version and container and container.image:
                evidence = Evidence(source=source, text=f"image: {container.image}")
                seen.setdefault(side, []).append((version, False, evidence))
    for pod in ctx.ray_pods:
        side = "head" if pod.labels.get(RAY_NODE_TYPE_LABEL) == "head" else "worker"
        for container in pod.containers[:1]:
            version = _ray_image_version(container.image)
            if version and container.image:
                evidence = Evidence(source=f"pod {pod.name}", text=f"image: {container.image}")
                seen.setdefault(side, []).append((version, False, evidence))
    return seen


def _ray_image_version(image: str | None) -> str | None:
    """``rayproject/ray:2.9.0-py310-gpu`` → ``2.9.0``; an image that is not Ray's says nothing."""
    if not image or "ray" not in image.rsplit("/", 1)[-1].split(":", 1)[0]:
        return None
    tag = image_tag(image) or ""
    head = tag.split("-", 1)[0]
    parts = head.split(".")
    return head if len(parts) == 3 and all(part.isdigit() for part in parts) else None


def _sides(ctx: Context, component: str) -> dict[str, list[_Seen]]:
    stated = _stated(ctx)
    seen: dict[str, list[_Seen]] = {}
    for fact in stated.versions if stated else ():
        if fact.component == component:
            seen.setdefault(fact.side, []).append((fact.version, True, stated_evidence(fact.quote)))
    if component == "ray" and seen:
        for side, found in _tool_versions(ctx).items():
            seen.setdefault(side, []).extend(found)
    return seen


@detector("stated_versions", ("component", "version_a", "version_b", "side_a", "side_b"))
def stated_versions(ctx: Context, rule: Rule) -> Iterable[Hit]:
    """Versions the person places on two sides that must agree, and that do not."""
    for component, name in _COMPONENT_NAMES.items():
        seen = _sides(ctx, component)
        if not any(said for found in seen.values() for _, said, _ in found):
            continue
        for side_a, side_b in _PAIRS:
            # The cluster's side is the cluster, its head and its workers, whichever was named.
            first = seen.get(side_a, []) + (
                seen.get("head", []) + seen.get("worker", []) if side_a == "cluster" else []
            )
            second = seen.get(side_b, [])
            if not first or not second:
                continue
            if not any(said for _, said, _ in first + second):
                continue  # tools on both sides: the image rules judge that
            if any(_compatible(component, a, b) for a, _, _ in first for b, _, _ in second):
                continue
            # The person's sentences first, then what the tools showed: both sides stay in sight.
            evidence: list[Evidence] = []
            for said_now in (True, False):
                room = _MAX_EVIDENCE - 1 if said_now else _MAX_EVIDENCE
                for _, said, shown in first + second:
                    if (
                        said is said_now
                        and len(evidence) < room
                        and shown.text not in {e.text for e in evidence}
                    ):
                        evidence.append(shown)
            yield Hit(
                Subject(kind="Text", name=name),
                tuple(evidence),
                {
                    "component": name,
                    "version_a": ", ".join(dict.fromkeys(v for v, _, _ in first)),
                    "version_b": ", ".join(dict.fromkeys(v for v, _, _ in second)),
                    "side_a": side_a,
                    "side_b": side_b,
                },
            )
            break  # one finding per component: the client pair is the one a person acts on first


def _ray_node_count(ctx: Context) -> int | None:
    ray = ctx.ray
    if ray is None:
        return None
    if ray.node_count is not None:
        return ray.node_count
    return len(ray.alive_nodes) or None


@detector("stated_join_gap", ("ray_nodes", "quote"))
def stated_join_gap(ctx: Context, rule: Rule) -> Iterable[Hit]:
    """Pods the person says run, while Ray, as they tell it, shows fewer nodes."""
    stated = _stated(ctx)
    if stated is None or not stated.join_gaps:
        return
    counted = _ray_node_count(ctx)
    evidence = [stated_evidence(gap.quote) for gap in stated.join_gaps[:_MAX_EVIDENCE]]
    said = next((gap.ray_nodes for gap in stated.join_gaps if gap.ray_nodes is not None), None)
    if counted is not None:
        # ``ray status`` in the paste says how many nodes Ray has: quoted beside the words.
        evidence.append(
            Evidence(
                source="ray status",
                text=f"{counted} Ray node(s)",
                phrase="evidence.ray_node_count",
                values={"count": str(counted)},
            )
        )
    yield Hit(
        Subject(kind="Text", name="join"),
        tuple(evidence),
        {
            "ray_nodes": str(counted if counted is not None else said) if (counted or said) else "",
            "quote": stated.join_gaps[0].quote[:_MAX_QUOTE],
        },
    )
