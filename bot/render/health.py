"""A health post: both layers of one cluster in a few lines, for a channel that did not ask.

Scheduled posts are read by people who are busy with something else, so a post says only what
decides whether to look closer: on the Kubernetes side, what is Pending and for how long and
where the GPUs are per model; on the Ray side, whether every ready worker Pod joined, whether Ray
registered the GPUs the Pods were given, what is waiting, and which actors sit on GPUs and since
when; then the most likely cause, if any. ``health_facts`` gathers those facts from a snapshot and
its diagnosis (pure); ``render_health_post`` writes them as a Slack message in English or Chinese.

``scaling_up`` tells the scheduler when young Pending Pods are expected: cluster-autoscaler
triggered a scale-up, Karpenter nominated a node claim, or Ray's autoscaler is launching nodes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from slack_sdk.models.blocks import Block, ContextBlock, MarkdownTextObject, SectionBlock

from bot.catalogue import default_catalogue
from bot.classify.context import RAY_NODE_TYPE_LABEL, Context
from bot.diagnosis import Diagnosis, Finding
from bot.render.capacity import (
    RAY_GPU,
    GpuModelCapacity,
    capacity_figures,
    describe_row,
    gap_summary,
    waiting_work,
)
from bot.render.localize import localize
from bot.render.messages import Lang, say
from bot.render.slack import (
    FALLBACK_LIMIT,
    LAYER_EMOJI,
    MAX_BLOCKS,
    SECTION_LIMIT,
    SEVERITY_EMOJI,
    clip,
    escape,
)
from bot.snapshot.gpu import is_gpu_node
from bot.snapshot.kubernetes import Event
from bot.snapshot.model import Snapshot
from bot.snapshot.ray import RayState

# A scale-up signal older than this says nothing about now: the new node came, or it never will.
SCALE_UP_WINDOW = timedelta(minutes=15)
SHOWN_PENDING = 1
SHOWN_MODELS = 6
SHOWN_ACTORS = 3
_RAY_ADDING_NODES = re.compile(r"\bAdding \d+ node\(s\) of type\b")


@dataclass(frozen=True)
class PendingPod:
    name: str
    namespace: str
    age_s: float | None


@dataclass(frozen=True)
class HealthFacts:
    cluster: str
    pending_pods: tuple[PendingPod, ...]
    gpu_nodes: int
    capacity: tuple[GpuModelCapacity, ...]
    ray_nodes_alive: int
    ready_worker_pods: int
    gpus_registered: float
    gpus_given: float
    pending_demands: int
    gpu_actors: tuple[tuple[str, float, float | None], ...]  # (actor name/class, GPUs held, age in s)
    scaling_up: bool  # autoscaler/cluster-autoscaler/Karpenter is adding capacity right now
    top_finding: Finding | None  # the first warning/critical finding


def _age(since: datetime | None, now: datetime) -> float | None:
    if since is None:
        return None
    # A hand-written snapshot may carry times without a zone; Kubernetes and Ray mean UTC.
    if since.tzinfo is None:
        since = since.replace(tzinfo=UTC)
    return max(0.0, (now - since).total_seconds())


def _pending_pods(ctx: Context, now: datetime) -> tuple[PendingPod, ...]:
    """Unscheduled Pods of the cluster's namespace and of the RayCluster itself, oldest first."""
    namespace = ctx.snapshot.namespace
    pods = [
        pod
        for pod in ctx.unscheduled_pods
        if namespace is None or pod.namespace == namespace or (pod.is_ray and ctx.in_scope(pod))
    ]
    found = [PendingPod(p.name, p.namespace, _age(p.created, now)) for p in pods]
    return tuple(sorted(found, key=lambda p: (p.age_s is None, -(p.age_s or 0.0), p.namespace, p.name)))


def _ready_workers(ctx: Context) -> int:
    return sum(
        1
        for pod in ctx.ray_pods
        if pod.labels.get(RAY_NODE_TYPE_LABEL) == "worker"
        and ctx.in_scope(pod)
        and pod.phase == "Running"
        and pod.ready
    )


def _ray_nodes_alive(ray: RayState | None) -> int:
    if ray is None:
        return 0
    if ray.nodes:
        return len(ray.alive_nodes)
    return ray.node_count or 0


def _gpu_actors(ray: RayState | None, now: datetime) -> tuple[tuple[str, float, float | None], ...]:
    if ray is None:
        return ()
    held = [
        (actor.name or actor.class_name or actor.actor_id or "?", gpus, _age(actor.start_time, now))
        for actor in ray.actors
        if actor.state.upper() == "ALIVE" and (gpus := actor.required_resources.get(RAY_GPU, 0.0)) > 0
    ]
    return tuple(sorted(held, key=lambda a: (-a[1], -(a[2] or 0.0), a[0])))


def _recent(event: Event, now: datetime) -> bool:
    age = _age(event.last_seen or event.first_seen, now)
    return age is None or age <= SCALE_UP_WINDOW.total_seconds()


def _scaling_up(ctx: Context, now: datetime) -> bool:
    for event in ctx.kube.events:
        source = (event.source or "").lower()
        if not _recent(event, now):
            continue
        if event.reason == "TriggeredScaleUp":
            return True
        if event.reason == "Nominated" and ("karpenter" in source or "nodeclaim/" in event.message):
            return True
    ray = ctx.ray
    if ray is not None and ray.pending_nodes:
        return True
    return any(
        _RAY_ADDING_NODES.search(text.text) for text in ctx.texts if text.source not in ("event", "job")
    )


def _gpu_node_count(ctx: Context) -> int:
    return sum(1 for node in ctx.kube.nodes if is_gpu_node(node))


def health_facts(snapshot: Snapshot, diagnosis: Diagnosis, now: datetime) -> HealthFacts:
    """What a health post says about ``snapshot`` at ``now`` (a timezone-aware time)."""
    ctx = Context(snapshot)
    capacity = tuple(capacity_figures(snapshot))
    ray = snapshot.ray
    return HealthFacts(
        cluster=diagnosis.cluster or snapshot.cluster or "?",
        pending_pods=_pending_pods(ctx, now),
        gpu_nodes=_gpu_node_count(ctx),
        capacity=capacity,
        ray_nodes_alive=_ray_nodes_alive(ray),
        ready_worker_pods=_ready_workers(ctx),
        gpus_registered=sum(row.registered_in_ray for row in capacity),
        gpus_given=sum(row.given_to_ray_pods for row in capacity),
        pending_demands=sum(count for _, count in waiting_work(ray)) if ray is not None else 0,
        gpu_actors=_gpu_actors(ray, now),
        scaling_up=_scaling_up(ctx, now),
        top_finding=next((f for f in diagnosis.findings if f.severity in ("critical", "warning")), None),
    )


def format_duration(seconds: float, lang: Lang) -> str:
    whole = int(seconds)
    if whole < 60:
        return say("duration.seconds", lang, seconds=whole)
    if whole < 3600:
        return say("duration.minutes", lang, minutes=whole // 60)
    if whole < 86400:
        return say("duration.hours", lang, hours=whole // 3600, minutes=whole % 3600 // 60)
    return say("duration.days", lang, days=whole // 86400, hours=whole % 86400 // 3600)


def _pending_line(facts: HealthFacts, lang: Lang) -> str:
    if not facts.pending_pods:
        return say("health.pending_none", lang)
    oldest = facts.pending_pods[0]
    name = escape(f"{oldest.namespace}/{oldest.name}")
    count = len(facts.pending_pods)
    if oldest.age_s is None:
        return say("health.pending_no_age", lang, count=count, name=name)
    return say("health.pending", lang, count=count, name=name, age=format_duration(oldest.age_s, lang))


def _kubernetes_section(facts: HealthFacts, lang: Lang) -> str:
    lines = [_pending_line(facts, lang), say("health.gpu_nodes", lang, count=facts.gpu_nodes)]
    lines += [describe_row("health.model", row, lang) for row in facts.capacity[:SHOWN_MODELS]]
    return f"*{say('layer.kubernetes', lang)}*\n" + "\n".join(f"• {line}" for line in lines)


def _actors_line(facts: HealthFacts, lang: Lang) -> str:
    if not facts.gpu_actors:
        return say("health.no_actors", lang)
    shown = []
    for name, gpus, age in facts.gpu_actors[:SHOWN_ACTORS]:
        label = escape(name[:80])
        if age is None:
            shown.append(say("health.actor_no_age", lang, name=label, gpus=gpus))
        else:
            shown.append(say("health.actor", lang, name=label, gpus=gpus, age=format_duration(age, lang)))
    more = len(facts.gpu_actors) - SHOWN_ACTORS
    if more > 0:
        shown.append(say("health.more_actors", lang, count=more))
    return say("health.actors", lang, actors=("、" if lang == "zh" else ", ").join(shown))


def _ray_section(facts: HealthFacts, lang: Lang) -> str:
    lines = [
        say("health.ray_nodes", lang, alive=facts.ray_nodes_alive, ready=facts.ready_worker_pods),
        say("health.gpus", lang, registered=facts.gpus_registered, given=facts.gpus_given),
        say("health.demands", lang, count=facts.pending_demands),
        _actors_line(facts, lang),
    ]
    if facts.gpus_registered < facts.gpus_given:
        lines.append(gap_summary(facts.capacity, lang))
    return f"*{say('layer.ray', lang)}*\n" + "\n".join(f"• {line}" for line in lines)


def _finding_line(finding: Finding, cluster: str, lang: Lang) -> str:
    rule = default_catalogue().get(finding.rule)
    title = localize(finding, default_catalogue(), lang, cluster).title if rule else finding.rule
    cause = say("cause", lang, cause=finding.cause) if finding.cause else say("no_cause", lang)
    return say("health.top", lang, title=escape(title), code=finding.code, cause=cause)


def render_health_post(facts: HealthFacts, lang: Lang, *, headline: str | None = None) -> dict[str, Any]:
    """The post as ``{"text": ..., "blocks": [...]}``; ``headline`` e.g. "still pending after 40 min"."""
    top = facts.top_finding
    emoji = SEVERITY_EMOJI[top.severity] if top is not None else LAYER_EMOJI["healthy"]
    title = f"*{escape(facts.cluster)}* · {say('health.title', lang)}"
    if headline:
        title += f" — {escape(headline)}"
    blocks: list[Block] = [
        SectionBlock(text=MarkdownTextObject(text=clip(f"{emoji} {title}", SECTION_LIMIT, lang))),
        SectionBlock(
            text=MarkdownTextObject(text=clip(_kubernetes_section(facts, lang), SECTION_LIMIT, lang))
        ),
        SectionBlock(text=MarkdownTextObject(text=clip(_ray_section(facts, lang), SECTION_LIMIT, lang))),
    ]
    finding = _finding_line(top, facts.cluster, lang) if top is not None else say("health.no_finding", lang)
    blocks.append(SectionBlock(text=MarkdownTextObject(text=clip(finding, SECTION_LIMIT, lang))))
    if facts.scaling_up:
        note = f":arrows_counterclockwise: {say('health.scaling_up', lang)}"
        blocks.append(ContextBlock(elements=[MarkdownTextObject(text=note)]))
    assert len(blocks) <= MAX_BLOCKS
    for block in blocks:
        block.validate_json()
    fallback = f"{facts.cluster} · {say('health.title', lang)}"
    if headline:
        fallback += f" — {headline}"
    fallback += f": {finding}"
    return {"text": clip(fallback, FALLBACK_LIMIT, lang), "blocks": [block.to_dict() for block in blocks]}
