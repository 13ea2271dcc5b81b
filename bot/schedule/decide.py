"""Whether a scheduled run speaks: post a new message, edit the last one in place, or stay quiet.

A pure function of what the channel was last told (``PostState``), what the cluster shows now
(findings and ``HealthFacts``), the time, and whether the cluster is muted. Scheduled posts that
repeat themselves teach a channel to ignore the bot, so by default a run speaks only when it has
news:

* the set of alarms changed — a (cause, rule, subject) appeared or went away;
* an alarm crossed a duration threshold ("still pending after 40 min"), each threshold said once;
* otherwise the last post's figures are refreshed in place (``edit``), or nothing happens when
  editing is turned off.

Digest schedules post every run. A mute silences everything. Info findings are not alarms, nor are
Pods pending for less than the grace period while the autoscaler is adding capacity: that is
scaling working as intended. Durations come from when the bot first observed an alarm, or from the
Pod's own age when the alarm is about a pending Pod, whichever is longer.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Literal

from bot.diagnosis import Finding, finding_key
from bot.render.health import HealthFacts
from bot.store import PostState, ScheduleMode

Action = Literal["post", "edit", "quiet"]
Reason = Literal["first", "changed", "resolved", "threshold", "digest", "unchanged", "muted"]


@dataclass(frozen=True)
class PostRules:
    """How talkative a schedule is (``health_posts`` in the configuration)."""

    mode: ScheduleMode = "changes"
    grace: timedelta = timedelta(minutes=10)
    thresholds_minutes: tuple[int, ...] = (40, 120)
    edit_unchanged: bool = True


@dataclass(frozen=True)
class Crossing:
    """An alarm that has now lasted ``minutes`` (a configured threshold) without being announced so."""

    finding: Finding
    minutes: int


@dataclass(frozen=True)
class Decision:
    action: Action
    reason: Reason
    # What to save once the post (if any) went out; the caller fills in the new message ts.
    state: PostState
    new: tuple[Finding, ...] = ()
    resolved: tuple[str, ...] = ()
    crossings: tuple[Crossing, ...] = ()


def alarms(findings: Iterable[Finding], facts: HealthFacts, grace: timedelta) -> dict[str, Finding]:
    """The findings a scheduled post may speak about, by key (first of each key wins)."""
    young = (
        {
            (pod.namespace, pod.name)
            for pod in facts.pending_pods
            if pod.age_s is not None and pod.age_s < grace.total_seconds()
        }
        if facts.scaling_up
        else set()
    )
    chosen: dict[str, Finding] = {}
    for finding in findings:
        if finding.severity == "info":
            continue
        subject = finding.subject
        if subject.kind == "Pod" and (subject.namespace, subject.name) in young:
            continue
        chosen.setdefault(finding_key(finding), finding)
    return chosen


def decide(
    previous: PostState | None,
    schedule_id: str,
    findings: Sequence[Finding],
    facts: HealthFacts,
    now: datetime,
    *,
    muted: bool,
    rules: PostRules,
) -> Decision:
    current = alarms(findings, facts, rules.grace)
    before = previous or PostState(schedule_id)
    first_seen = {key: before.first_seen.get(key, now) for key in current}
    pod_ages = {(pod.namespace, pod.name): pod.age_s for pod in facts.pending_pods}
    lasted = {key: _lasted(finding, now - first_seen[key], pod_ages) for key, finding in current.items()}
    crossings = tuple(
        Crossing(current[key], minutes)
        for key in current
        if (minutes := _newly_crossed(lasted[key], before.announced.get(key, ()), rules.thresholds_minutes))
    )
    new_keys = [key for key in current if key not in before.posted_keys]
    gone = tuple(sorted(before.posted_keys - current.keys()))
    # What a quiet run keeps: the channel still knows only the last post; durations keep counting.
    observed = replace(before, schedule_id=schedule_id, first_seen=first_seen, observed_at=now)
    posted = replace(
        observed,
        posted_keys=frozenset(current),
        announced={
            key: _reached(lasted[key], before.announced.get(key, ()), rules.thresholds_minutes)
            for key in current
        },
        message_ts=None,
        posted_at=now,
    )
    action, reason = _verdict(
        previous,
        rules,
        muted=muted,
        changed=bool(new_keys),
        gone=bool(gone),
        empty=not current,
        crossed=bool(crossings),
        can_edit=bool(before.message_ts),
    )
    return Decision(
        action,
        reason,
        posted if action == "post" else observed,
        new=tuple(current[key] for key in new_keys),
        resolved=gone,
        crossings=crossings,
    )


def _verdict(
    previous: PostState | None,
    rules: PostRules,
    *,
    muted: bool,
    changed: bool,
    gone: bool,
    empty: bool,
    crossed: bool,
    can_edit: bool,
) -> tuple[Action, Reason]:
    if muted:
        return "quiet", "muted"
    if previous is None or previous.posted_at is None:
        return "post", "first"
    if rules.mode == "digest":
        return "post", "digest"
    if changed:
        return "post", "changed"
    if gone:
        return "post", "resolved" if empty else "changed"
    if crossed:
        return "post", "threshold"
    if rules.edit_unchanged and can_edit:
        return "edit", "unchanged"
    return "quiet", "unchanged"


def _lasted(
    finding: Finding, observed_for: timedelta, pod_ages: Mapping[tuple[str, str], float | None]
) -> timedelta:
    subject = finding.subject
    age = pod_ages.get((subject.namespace or "", subject.name or "")) if subject.kind == "Pod" else None
    return max(observed_for, timedelta(seconds=age)) if age is not None else observed_for


def _reached(lasted: timedelta, announced: Iterable[int], thresholds: Iterable[int]) -> tuple[int, ...]:
    return tuple(sorted({*announced, *(t for t in thresholds if lasted >= timedelta(minutes=t))}))


def _newly_crossed(lasted: timedelta, announced: Iterable[int], thresholds: Iterable[int]) -> int:
    """The longest threshold reached and not yet announced (0 when none): one post says the latest."""
    said = set(announced)
    fresh = [t for t in thresholds if t not in said and lasted >= timedelta(minutes=t)]
    return max(fresh, default=0)
