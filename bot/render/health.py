"""A health post: both layers of one cluster in a few lines, for a channel that did not ask.

Scheduled posts are read by people who are busy with something else, so a post says only what
decides whether to look closer: on the Kubernetes side, what is Pending and for how long and
where the GPUs are per model; on the Ray side, whether every ready worker Pod joined, whether Ray
registered the GPUs the Pods were given, what is waiting, and which actors sit on GPUs and since
when; then the most likely cause, if any. ``health_facts`` takes those facts from the diagnosis
(its ``capacity``, computed by the classifier) at a given time (pure); ``health_post_text``
writes them as a few lines in English or Chinese (pure), which ``bot.deliver.blocks.health`` puts
into a Slack message. A layer that was not read is said so, its figures are ``None`` in the facts,
never 0.

``scaling_up`` tells the scheduler when young Pending Pods are expected: cluster-autoscaler
triggered a scale-up, Karpenter nominated a node claim, or Ray's autoscaler is launching nodes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from bot.catalogue import default_catalogue
from bot.diagnosis import Capacity, Diagnosis, Finding, ScaleUp
from bot.render.capacity import describe_row, gap_summary
from bot.render.localize import localize
from bot.render.messages import Lang, say
from bot.render.slack import LAYER_EMOJI, SEVERITY_EMOJI, escape

# A scale-up signal older than this says nothing about now: the new node came, or it never will.
SCALE_UP_WINDOW = timedelta(minutes=15)
SHOWN_PENDING = 1
SHOWN_MODELS = 6
SHOWN_ACTORS = 3


@dataclass(frozen=True)
class PendingPod:
    name: str
    namespace: str
    age_s: float | None


@dataclass(frozen=True)
class HealthFacts:
    cluster: str
    pending_pods: tuple[PendingPod, ...]
    gpu_nodes: int | None  # None: Kubernetes not read (so for every Kubernetes figure here)
    capacity: Capacity
    ray_nodes_alive: int | None  # None: Ray not read (so for every Ray figure here)
    ready_worker_pods: int | None
    gpus_registered: float | None
    gpus_given: float | None
    pending_demands: int | None
    gpu_actors: tuple[tuple[str, float, float | None], ...] | None  # (actor name/class, GPUs held, age in s)
    scaling_up: bool  # autoscaler/cluster-autoscaler/Karpenter is adding capacity right now
    top_finding: Finding | None  # the first warning/critical finding


def _age(since: datetime | None, now: datetime) -> float | None:
    if since is None:
        return None
    # A hand-written snapshot may carry times without a zone; Kubernetes and Ray mean UTC.
    if since.tzinfo is None:
        since = since.replace(tzinfo=UTC)
    return max(0.0, (now - since).total_seconds())


def _pending_pods(capacity: Capacity, now: datetime) -> tuple[PendingPod, ...]:
    """The diagnosed cluster's unscheduled Pods, oldest first, aged at ``now``."""
    found = [PendingPod(p.name, p.namespace, _age(p.created, now)) for p in capacity.pending_pods]
    return tuple(sorted(found, key=lambda p: (p.age_s is None, -(p.age_s or 0.0), p.namespace, p.name)))


def _gpu_actors(capacity: Capacity, now: datetime) -> tuple[tuple[str, float, float | None], ...] | None:
    if not capacity.ray_read:
        return None
    held = [(actor.name, actor.gpus, _age(actor.started, now)) for actor in capacity.gpu_actors]
    return tuple(sorted(held, key=lambda a: (-a[1], -(a[2] or 0.0), a[0])))


def _recent(signal: ScaleUp, now: datetime) -> bool:
    age = _age(signal.at, now)
    return age is None or age <= SCALE_UP_WINDOW.total_seconds()


def health_facts(diagnosis: Diagnosis, now: datetime) -> HealthFacts:
    """What a health post says about ``diagnosis`` at ``now`` (a timezone-aware time)."""
    capacity = diagnosis.capacity
    kubernetes, ray = capacity.kubernetes_read, capacity.ray_read
    rows = capacity.models
    return HealthFacts(
        cluster=diagnosis.cluster or "?",
        pending_pods=_pending_pods(capacity, now),
        gpu_nodes=capacity.gpu_nodes,
        capacity=capacity,
        ray_nodes_alive=capacity.ray_nodes_alive,
        ready_worker_pods=capacity.ready_worker_pods,
        gpus_registered=sum(row.registered_in_ray or 0.0 for row in rows) if ray else None,
        gpus_given=sum(row.given_to_ray_pods or 0.0 for row in rows) if kubernetes else None,
        pending_demands=sum(demand.count for demand in capacity.demands) if ray else None,
        gpu_actors=_gpu_actors(capacity, now),
        scaling_up=any(_recent(signal, now) for signal in capacity.scale_ups),
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
    if facts.gpu_nodes is None:
        lines = [say("health.kubernetes_unread", lang)]
    else:
        lines = [_pending_line(facts, lang), say("health.gpu_nodes", lang, count=facts.gpu_nodes)]
        lines += [describe_row("health.model", row, lang) for row in facts.capacity.models[:SHOWN_MODELS]]
    return f"*{say('layer.kubernetes', lang)}*\n" + "\n".join(f"• {line}" for line in lines)


def _actors_line(facts: HealthFacts, lang: Lang) -> str:
    if facts.gpu_actors is None:
        return say("health.actors.unread", lang)
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


def _unread(facts: HealthFacts) -> str:
    """The suffix of the wording for what was not read: ``""`` when both layers were."""
    kubernetes, ray = facts.gpu_nodes is not None, facts.ray_nodes_alive is not None
    if kubernetes and ray:
        return ""
    return ".kubernetes_unread" if ray else ".ray_unread" if kubernetes else ".unread"


def _ray_section(facts: HealthFacts, lang: Lang) -> str:
    unread = _unread(facts)
    lines = [
        say(f"health.ray_nodes{unread}", lang, alive=facts.ray_nodes_alive, ready=facts.ready_worker_pods),
        say(f"health.gpus{unread}", lang, registered=facts.gpus_registered, given=facts.gpus_given),
        say("health.demands", lang, count=facts.pending_demands)
        if facts.pending_demands is not None
        else say("health.demands.unread", lang),
        _actors_line(facts, lang),
    ]
    registered, given = facts.gpus_registered, facts.gpus_given
    if registered is not None and given is not None and registered < given:
        lines.append(gap_summary(facts.capacity, lang))
    return f"*{say('layer.ray', lang)}*\n" + "\n".join(f"• {line}" for line in lines)


def _finding_line(finding: Finding, cluster: str, lang: Lang) -> str:
    rule = default_catalogue().get(finding.rule)
    title = localize(finding, default_catalogue(), lang, cluster).title if rule else finding.rule
    cause = say("cause", lang, cause=finding.cause) if finding.cause else say("no_cause", lang)
    return say("health.top", lang, title=escape(title), code=finding.code, cause=cause)


@dataclass(frozen=True)
class HealthPostText:
    """The words of a health post in mrkdwn, before they are put into Slack blocks."""

    sections: tuple[str, ...]  # the title line, the Kubernetes side, the Ray side, the most likely cause
    note: str | None  # said under the sections, smaller: a scale-up is under way
    fallback: str  # the notification's plain text


def health_post_text(facts: HealthFacts, lang: Lang, *, headline: str | None = None) -> HealthPostText:
    """What a health post says; ``headline`` e.g. "still pending after 40 min"."""
    top = facts.top_finding
    emoji = SEVERITY_EMOJI[top.severity] if top is not None else LAYER_EMOJI["healthy"]
    title = f"*{escape(facts.cluster)}* · {say('health.title', lang)}"
    if headline:
        title += f" — {escape(headline)}"
    finding = _finding_line(top, facts.cluster, lang) if top is not None else say("health.no_finding", lang)
    note = f":arrows_counterclockwise: {say('health.scaling_up', lang)}" if facts.scaling_up else None
    fallback = f"{facts.cluster} · {say('health.title', lang)}"
    if headline:
        fallback += f" — {headline}"
    fallback += f": {finding}"
    return HealthPostText(
        sections=(f"{emoji} {title}", _kubernetes_section(facts, lang), _ray_section(facts, lang), finding),
        note=note,
        fallback=fallback,
    )
