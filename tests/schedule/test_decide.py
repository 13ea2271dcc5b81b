"""The decision alone: post, edit or stay quiet, from the last post, the findings, the time and mutes.

Findings and facts come from classifying the realistic scenarios (the same path a scheduled run
takes), so the keys, subjects and Pod ages are the ones a real cluster produces.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

from bot.classify import classify
from bot.diagnosis import Finding
from bot.read.snapshot_file import parse_snapshot
from bot.render.health import HealthFacts, health_facts
from bot.schedule.decide import Decision, PostRules, alarms, decide, finding_key
from bot.store import PostState
from tests.schedule.conftest import PENDING_CREATED
from tests.support import scenarios
from tests.support.cluster import Bundle

RULES = PostRules()


def observe(bundle: Bundle, now: datetime) -> tuple[list[Finding], HealthFacts]:
    snapshot = parse_snapshot(bundle.to_json())
    diagnosis = classify(snapshot)
    return diagnosis.findings, health_facts(diagnosis, now)


def after(minutes: float) -> datetime:
    return PENDING_CREATED + timedelta(minutes=minutes)


def step(
    previous: PostState | None,
    bundle: Bundle,
    now: datetime,
    *,
    muted: bool = False,
    rules: PostRules = RULES,
) -> Decision:
    findings, facts = observe(bundle, now)
    decision = decide(previous, "a1b2c3", findings, facts, now, muted=muted, rules=rules)
    if decision.action == "post":  # what the runner saves once Slack answered
        return replace(decision, state=replace(decision.state, channel="C0MLPLATFORM", message_ts="1.0001"))
    return decision


def test_the_first_run_posts_and_the_same_picture_then_edits_it() -> None:
    first = step(None, scenarios.third_gpu_worker_no_free_gpu(), after(5))
    second = step(first.state, scenarios.third_gpu_worker_no_free_gpu(), after(20))

    assert (first.action, first.reason) == ("post", "first")
    assert [f.rule for f in first.new] == ["k8s-insufficient-resources"]
    assert (second.action, second.reason) == ("edit", "unchanged")
    assert second.state.posted_keys == first.state.posted_keys
    assert second.state.message_ts == "1.0001" and second.state.posted_at == after(5)


def test_an_unchanged_run_stays_quiet_when_edits_are_off_or_nothing_was_posted_yet() -> None:
    quiet_rules = PostRules(edit_unchanged=False)
    first = step(None, scenarios.healthy(), after(5), rules=quiet_rules)
    second = step(first.state, scenarios.healthy(), after(20), rules=quiet_rules)
    assert (second.action, second.reason) == ("quiet", "unchanged")

    no_message = replace(first.state, message_ts=None)
    assert step(no_message, scenarios.healthy(), after(20)).action == "quiet"


def test_a_finding_that_appears_or_goes_away_is_news() -> None:
    healthy = step(None, scenarios.healthy(), after(5))
    appeared = step(healthy.state, scenarios.gpu_worker_runs_but_never_joined(), after(20))
    swapped = step(appeared.state, scenarios.third_gpu_worker_no_free_gpu(), after(35))
    cleared = step(swapped.state, scenarios.healthy(), after(50))

    assert (appeared.action, appeared.reason) == ("post", "changed")
    assert [f.cause for f in appeared.new] == [8]
    assert (swapped.reason, [f.cause for f in swapped.new]) == ("changed", [1])
    assert swapped.resolved == tuple(appeared.state.posted_keys)
    assert (cleared.action, cleared.reason) == ("post", "resolved")
    assert cleared.state.posted_keys == frozenset()


def test_each_duration_threshold_is_announced_once_and_only_the_longest_when_several_pass() -> None:
    pending = scenarios.third_gpu_worker_no_free_gpu()
    state = step(None, pending, after(5)).state
    said = []
    for minutes in (20, 39, 41, 60, 119, 121, 200):
        decision = step(state, pending, after(minutes))
        state = decision.state
        said.append((minutes, decision.reason, [c.minutes for c in decision.crossings]))

    assert said == [
        (20, "unchanged", []),
        (39, "unchanged", []),
        (41, "threshold", [40]),
        (60, "unchanged", []),
        (119, "unchanged", []),
        (121, "threshold", [120]),
        (200, "unchanged", []),
    ]

    # Unseen for two hours (muted, say): one post names 120 min, not 40 then 120.
    late = step(step(None, pending, after(5)).state, pending, after(130))
    assert [c.minutes for c in late.crossings] == [120]
    assert late.state.announced[finding_key(late.crossings[0].finding)] == (40, 120)


def test_a_finding_already_old_when_first_seen_is_posted_as_new_and_not_again_for_its_age() -> None:
    healthy = step(None, scenarios.healthy(), after(0))
    arrives_old = step(healthy.state, scenarios.third_gpu_worker_no_free_gpu(), after(50))
    next_run = step(arrives_old.state, scenarios.third_gpu_worker_no_free_gpu(), after(65))

    assert (arrives_old.action, arrives_old.reason) == ("post", "changed")
    assert (next_run.action, next_run.reason) == ("edit", "unchanged")


def test_young_pending_pods_are_no_alarm_only_while_capacity_is_being_added() -> None:
    scaling = scenarios.autoscaler_scaled_up()
    not_scaling = scenarios.third_gpu_worker_no_free_gpu()
    grace = RULES.grace

    assert alarms(*observe(scaling, after(7)), grace) == {}
    assert len(alarms(*observe(scaling, after(11)), grace)) == 1
    assert len(alarms(*observe(not_scaling, after(7)), grace)) == 1
    assert len(alarms(*observe(scaling, after(7)), timedelta(0))) == 1


def test_info_findings_are_not_alarms() -> None:
    findings, facts = observe(scenarios.third_gpu_worker_no_free_gpu(), after(5))
    as_info = [replace(f, severity="info") for f in findings]
    assert alarms(as_info, facts, RULES.grace) == {}


def test_a_mute_keeps_quiet_but_time_still_counts_and_news_waits_for_the_end() -> None:
    healthy = step(None, scenarios.healthy(), after(0))
    muted = step(healthy.state, scenarios.gpu_worker_runs_but_never_joined(), after(15), muted=True)
    unmuted = step(muted.state, scenarios.gpu_worker_runs_but_never_joined(), after(60))

    assert (muted.action, muted.reason) == ("quiet", "muted")
    assert muted.state.posted_keys == frozenset() and muted.state.message_ts == "1.0001"
    assert (unmuted.action, unmuted.reason) == ("post", "changed")
    # Observed since 15 min while muted: at 60 min it has lasted 45, past the 40-min threshold.
    assert [c.minutes for c in unmuted.crossings] == [40]


def test_a_digest_posts_every_run_unless_muted() -> None:
    digest = PostRules(mode="digest")
    first = step(None, scenarios.healthy(), after(0), rules=digest)
    again = step(first.state, scenarios.healthy(), after(1440), rules=digest)
    muted = step(again.state, scenarios.healthy(), after(2880), rules=digest, muted=True)

    assert [(d.action, d.reason) for d in (first, again, muted)] == [
        ("post", "first"),
        ("post", "digest"),
        ("quiet", "muted"),
    ]
