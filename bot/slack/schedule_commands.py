"""``/raydiag schedule add|list|remove``: health posts managed from Slack.

Adding or removing a schedule starts or stops unasked posts in a channel, so it needs the same
permission as starting a probe (``probes.allowed_users`` / ``allowed_groups``, checked by
``may_start_work``); listing is open to everyone. A schedule is posted into the channel where it
was added. Schedules from the configuration file are listed but not removable here: the next
start would bring them back. Every answer is ephemeral, in the asker's language.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any, Protocol
from zoneinfo import ZoneInfo

from slack_bolt import Respond
from slack_sdk import WebClient
from slack_sdk.models.blocks import Block, SectionBlock

from bot.cron import next_fire_time
from bot.render.messages import Lang, say
from bot.render.slack import escape
from bot.slack.bot import Bot
from bot.slack.commands import Command
from bot.slack.probe_actions import may_start_work
from bot.store import Schedule, Store, StoreError

LOG = logging.getLogger(__name__)
SECTION_LIMIT = 2900
MAX_SECTIONS = 45


class Scheduler(Protocol):
    """What the commands need of the running scheduler (``bot.schedule.jobs.HealthScheduler`` is
    one): its store, and adding or removing a schedule's job. The Slack transport does not import
    the schedule package; ``bot.serve`` hands the scheduler in."""

    @property
    def store(self) -> Store: ...

    def add(self, schedule: Schedule) -> None: ...

    def remove(self, schedule_id: str) -> None: ...


def register_schedules(bot: Bot, scheduler: Scheduler) -> None:
    commands = ScheduleCommands(scheduler)
    bot.handlers["schedule-add"] = commands.add
    bot.handlers["schedule-list"] = commands.list
    bot.handlers["schedule-remove"] = commands.remove


class ScheduleCommands:
    def __init__(self, scheduler: Scheduler) -> None:
        self.scheduler = scheduler
        self.store = scheduler.store

    def add(
        self, bot: Bot, command: Command, payload: dict[str, Any], client: WebClient, respond: Respond
    ) -> None:
        user, channel, lang = _asker(bot, payload)
        if command.schedule is None or command.cluster is None:
            return
        if not may_start_work(bot, client, user):
            _answer(respond, say("schedule.refused", lang))
            return
        try:
            schedule = self.store.add_schedule(
                channel=channel,
                cluster=command.cluster.name,
                namespace=command.namespace or command.cluster.namespace,
                cron=command.schedule.cron,
                timezone=command.schedule.timezone,
                mode=command.schedule.mode,
                created_by=user,
                now=self.store.clock(),
            )
            self.scheduler.add(schedule)
        except StoreError as error:
            LOG.warning("schedule not added: %s", error)
            _answer(respond, say("schedule.store_failed", lang))
            return
        LOG.info("%s added schedule %s (%s, %s)", user, schedule.id, schedule.cluster, schedule.cron)
        _answer(
            respond,
            say(
                "schedule.added",
                lang,
                cluster=schedule.cluster,
                channel=schedule.channel,
                cron=schedule.cron,
                timezone=schedule.timezone,
                mode=say(f"schedule.mode.{schedule.mode}", lang),
                id=schedule.id,
                next=self._next(schedule, lang),
            ),
        )

    def list(
        self, bot: Bot, command: Command, payload: dict[str, Any], client: WebClient, respond: Respond
    ) -> None:
        _, _, lang = _asker(bot, payload)
        try:
            schedules = self.store.schedules()
        except StoreError as error:
            LOG.warning("schedules not listed: %s", error)
            _answer(respond, say("schedule.store_failed", lang))
            return
        if not schedules:
            _answer(respond, say("schedule.list_empty", lang))
            return
        lines = [self._line(schedule, lang) for schedule in schedules]
        blocks = _sections([say("schedule.list_heading", lang), *lines])
        respond(response_type="ephemeral", text=say("schedule.list_heading", lang), blocks=blocks)

    def remove(
        self, bot: Bot, command: Command, payload: dict[str, Any], client: WebClient, respond: Respond
    ) -> None:
        user, _, lang = _asker(bot, payload)
        schedule_id = command.schedule_id or ""
        if not may_start_work(bot, client, user):
            _answer(respond, say("schedule.refused", lang))
            return
        try:
            schedule = self.store.schedule(schedule_id)
            if schedule is None:
                _answer(respond, say("schedule.no_such", lang, id=schedule_id))
                return
            if schedule.from_config:
                _answer(respond, say("schedule.from_config", lang, id=schedule_id))
                return
            self.store.remove_schedule(schedule_id)
            self.scheduler.remove(schedule_id)
        except StoreError as error:
            LOG.warning("schedule %s not removed: %s", schedule_id, error)
            _answer(respond, say("schedule.store_failed", lang))
            return
        LOG.info("%s removed schedule %s", user, schedule_id)
        _answer(respond, say("schedule.removed", lang, id=schedule_id))

    def _next(self, schedule: Schedule, lang: Lang) -> str:
        when = next_fire_time(schedule.cron, schedule.timezone, self.store.clock())
        return say("schedule.never", lang) if when is None else local_time(when, schedule.timezone)

    def _line(self, schedule: Schedule, lang: Lang) -> str:
        line = say(
            "schedule.list_line",
            lang,
            id=schedule.id,
            cluster=schedule.cluster,
            channel=schedule.channel,
            cron=escape(schedule.cron),
            timezone=schedule.timezone,
            mode=say(f"schedule.mode.{schedule.mode}", lang),
            next=self._next(schedule, lang),
        )
        return line + (say("schedule.list_from_config", lang) if schedule.from_config else "")


def local_time(when: datetime, timezone: str) -> str:
    """2025-03-04 09:00 CET: a run time as the schedule's own time zone reads it."""
    return when.astimezone(ZoneInfo(timezone)).strftime("%Y-%m-%d %H:%M %Z")


def _asker(bot: Bot, payload: dict[str, Any]) -> tuple[str, str, Lang]:
    user = str(payload.get("user_id") or "")
    channel = str(payload.get("channel_id") or "")
    return user, channel, bot.lang(channel, user)


def _answer(respond: Respond, text: str) -> None:
    respond(response_type="ephemeral", text=text)


def _sections(lines: list[str]) -> list[dict[str, Any]]:
    """Lines packed into as few section blocks as Slack's 3000-character limit allows."""
    chunks: list[str] = []
    for line in lines:
        if chunks and len(chunks[-1]) + 1 + len(line) <= SECTION_LIMIT:
            chunks[-1] += "\n" + line
        else:
            chunks.append(line[:SECTION_LIMIT])
    blocks: list[Block] = [
        SectionBlock(text={"type": "mrkdwn", "text": chunk}) for chunk in chunks[:MAX_SECTIONS]
    ]
    for block in blocks:
        block.validate_json()
    return [block.to_dict() for block in blocks]
