"""One scheduled run: claim it, read the cluster, decide, post or edit, remember what was said.

The run is claimed in the store before anything is read, keyed by (schedule, fire time): after a
restart, on a second replica, or when a coalesced missed run and a regular one meet, exactly one
caller gets the claim and the others do nothing. A claimed run that then fails is not retried —
a lost post is better than a repeated one, and the next run will speak if there is news.

The cluster is diagnosed through the bot's one ``Diagnoser`` (sharing a run already under way for
the same cluster): the post's figures (``health_facts``), its findings and the chart all come from
that one diagnosis. The capacity
chart goes into the post's thread, so the channel shows one message per post.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal, Protocol
from zoneinfo import ZoneInfo

from bot.catalogue import Catalogue
from bot.config import ClusterConfig, Config, HealthPostConfig
from bot.deliver.blocks.health import render_health_post
from bot.deliver.slack_poster import post, update, upload_file
from bot.diagnoser import Diagnoser
from bot.diagnosis import Diagnosis, Finding
from bot.observe.metrics import Metrics, PostResult
from bot.render.capacity_chart import render_capacity_png
from bot.render.health import HealthFacts, health_facts
from bot.render.localize import localize
from bot.render.messages import Lang, say
from bot.schedule.decide import Decision, PostRules, decide
from bot.schedule.jobs import latest_fire_time
from bot.store import PostState, Schedule, Store

if TYPE_CHECKING:  # the client is handed to deliver/, which makes every Slack call
    from slack_sdk import WebClient

LOG = logging.getLogger(__name__)


class _Mutes(Protocol):
    def muted(self, cluster: str) -> bool: ...


class Speaker(Protocol):
    """What a scheduled post needs of the running bot (``bot.slack.bot.Bot`` is one): its
    configuration and catalogue, the one ``Diagnoser``, metrics, mutes and each channel's language.
    A narrow interface, so the schedule package does not depend on the Slack transport."""

    @property
    def config(self) -> Config: ...
    @property
    def catalogue(self) -> Catalogue: ...
    @property
    def metrics(self) -> Metrics: ...
    @property
    def diagnoser(self) -> Diagnoser: ...
    @property
    def mutes(self) -> _Mutes: ...

    def lang(self, channel: str | None, user: str | None) -> Lang: ...


Skipped = Literal["gone", "claimed-elsewhere", "unknown-cluster", "failed"]


@dataclass(frozen=True)
class RunOutcome:
    """What a run did: ``post``/``edit``/``quiet`` with the decision's reason, or ``skipped`` and why."""

    schedule_id: str
    action: Literal["post", "edit", "quiet", "skipped"]
    reason: str
    fire_time: datetime | None = None
    message_ts: str | None = None


def rules_for(schedule: Schedule, settings: HealthPostConfig) -> PostRules:
    return PostRules(
        mode=schedule.mode,
        grace=timedelta(minutes=settings.grace_minutes),
        thresholds_minutes=tuple(settings.thresholds_minutes),
        edit_unchanged=settings.unchanged == "edit",
    )


def _post_result(outcome: RunOutcome) -> PostResult:
    if outcome.action == "post":
        return "sent"
    if outcome.action == "edit":
        return "edited"
    return "muted" if outcome.reason == "muted" else "suppressed"


class ScheduledPosts:
    """Runs schedules for one bot: the APScheduler job calls ``run_due``; tests call ``run``."""

    def __init__(self, bot: Speaker, store: Store, client: WebClient) -> None:
        self.bot = bot
        self.store = store
        self.client = client

    def run_due(self, schedule_id: str) -> RunOutcome:
        """Run the schedule's latest fire time (a late or coalesced job is for that one)."""
        schedule = self.store.schedule(schedule_id)
        if schedule is None:
            return RunOutcome(schedule_id, "skipped", "gone")
        now = self.store.clock()
        return self.run(schedule_id, latest_fire_time(schedule, now) or now)

    def run(self, schedule_id: str, fire_time: datetime) -> RunOutcome:
        schedule = self.store.schedule(schedule_id)
        if schedule is None:
            return RunOutcome(schedule_id, "skipped", "gone", fire_time)
        cluster = self.bot.config.cluster(schedule.cluster)
        if cluster is None:
            LOG.warning(
                "schedule %s names cluster %s, which is no longer configured", schedule.id, schedule.cluster
            )
            return RunOutcome(schedule_id, "skipped", "unknown-cluster", fire_time)
        if not self.store.claim_run(schedule.id, fire_time, self.store.clock()):
            return RunOutcome(schedule_id, "skipped", "claimed-elsewhere", fire_time)
        try:
            outcome = self._speak(schedule, cluster, fire_time)
        except Exception:  # logged with the schedule; the scheduler goes on with the next run
            LOG.exception("scheduled health post %s for %s failed", schedule.id, schedule.cluster)
            self.bot.metrics.record_scheduled_post("failed")
            return RunOutcome(schedule_id, "skipped", "failed", fire_time)
        self.bot.metrics.record_scheduled_post(_post_result(outcome))
        return outcome

    def _speak(self, schedule: Schedule, cluster: ClusterConfig, fire_time: datetime) -> RunOutcome:
        diagnosis = self.bot.diagnoser.run(cluster, schedule.namespace, "schedule")
        now = self.store.clock()
        facts = health_facts(diagnosis, now)
        previous = self.store.post_state(schedule.id)
        decision = decide(
            previous,
            schedule.id,
            diagnosis.findings,
            facts,
            now,
            muted=self.bot.mutes.muted(cluster.name),
            rules=rules_for(schedule, self.bot.config.health_posts),
        )
        lang = self.bot.lang(schedule.channel, None)
        state = decision.state
        if decision.action == "post":
            message = render_health_post(
                facts, lang, headline=self._headline(decision, schedule, facts, lang)
            )
            ts = post(self.client, schedule.channel, message)
            state = replace(state, channel=schedule.channel, message_ts=ts)
            if ts and self.bot.config.health_posts.chart:
                self._attach_chart(diagnosis, schedule, cluster, ts, lang)
        elif decision.action == "edit" and previous is not None and previous.posted_at is not None:
            headline = say(
                "schedule.headline.unchanged",
                lang,
                since=_clock_time(previous.posted_at, schedule.timezone),
                now=_clock_time(now, schedule.timezone),
            )
            self._edit(previous, render_health_post(facts, lang, headline=headline))
        self.store.save_post_state(state, now)
        LOG.info("schedule %s (%s): %s, %s", schedule.id, cluster.name, decision.action, decision.reason)
        return RunOutcome(schedule.id, decision.action, decision.reason, fire_time, state.message_ts)

    def _headline(self, decision: Decision, schedule: Schedule, facts: HealthFacts, lang: Lang) -> str:
        if decision.reason == "first":
            key = "schedule.headline.first_digest" if schedule.mode == "digest" else "schedule.headline.first"
            return say(key, lang, cron=schedule.cron, timezone=schedule.timezone)
        if decision.reason == "digest":
            return say("schedule.headline.digest", lang)
        if decision.reason == "resolved":
            return say("schedule.headline.resolved", lang)
        if decision.reason == "changed" and decision.new:
            title = self._title(decision.new[0], lang, facts.cluster)
            more = len(decision.new) - 1
            if more:
                return say("schedule.headline.new_more", lang, title=title, more=more)
            return say("schedule.headline.new", lang, title=title)
        if decision.reason == "changed":
            return say("schedule.headline.cleared", lang, count=len(decision.resolved))
        crossing = max(decision.crossings, key=lambda c: c.minutes)
        subject = crossing.finding.subject
        if subject.kind == "Pod" and subject.name in {p.name for p in facts.pending_pods}:
            return say("schedule.headline.still_pending", lang, name=subject.name, minutes=crossing.minutes)
        title = self._title(crossing.finding, lang, facts.cluster)
        return say("schedule.headline.unresolved", lang, title=title, minutes=crossing.minutes)

    def _title(self, finding: Finding, lang: Lang, cluster: str) -> str:
        if self.bot.catalogue.get(finding.rule) is None:
            return finding.rule
        return localize(finding, self.bot.catalogue, lang, cluster).title

    def _attach_chart(
        self, diagnosis: Diagnosis, schedule: Schedule, cluster: ClusterConfig, ts: str, lang: Lang
    ) -> None:
        figures = diagnosis.capacity
        if not figures.models:
            return
        # The post is out; a chart Slack refuses is logged there, not retried.
        upload_file(
            self.client,
            schedule.channel,
            ts,
            render_capacity_png(figures, cluster=cluster.name, lang=lang),
            filename=f"raydiag-capacity-{cluster.name}.png",
            title=say("capacity.title", lang, cluster=cluster.name),
        )

    def _edit(self, previous: PostState, message: dict[str, Any]) -> None:
        # A post someone deleted cannot be edited: logged; the next post with news is a new one.
        update(self.client, str(previous.channel), str(previous.message_ts), message)


def _clock_time(when: datetime, timezone: str) -> str:
    """09:30 CET: the time of day in the schedule's own time zone, as the channel reads its cron."""
    return when.astimezone(ZoneInfo(timezone)).strftime("%H:%M %Z")
