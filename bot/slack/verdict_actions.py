"""The "Right cause?" buttons: "Yes" records at once, "No" opens a modal with the ten causes.

The listeners ack at once and work lazily, like the probe buttons, and are held to the same rules:
only a press on a message raydiag posted reaches them (``buttons_only_on_our_messages`` in
``bot.slack.middleware``), only people on the probe allow-list may give a verdict (``may_start_work``),
and each accepted verdict is said in the thread, naming who gave it. The button carries only the
id of a kept diagnosis; it is accepted only when that diagnosis was posted in the very message the
button was pressed on, and only while the store still keeps it (a deleted message, or the paste it
answered, takes it away). The database keeps one verdict per person and diagnosis, so a repeated
click (or a second modal) changes nothing. Every refusal is an ephemeral line that says why.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

from slack_bolt import Ack, App
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.deliver.blocks.verdicts import (
    OTHER_BLOCK,
    OTHER_VALUE,
    audit_note,
    modal_answer,
    modal_place,
    said_words,
    verdict_modal,
)
from bot.deliver.slack_poster import post
from bot.diagnosis import Diagnosis
from bot.render.messages import Lang, say
from bot.render.slack import ACTION_VERDICT_RIGHT, ACTION_VERDICT_WRONG, VIEW_VERDICT
from bot.slack.bot import Bot, ack_only
from bot.slack.buttons import thread_of
from bot.slack.probe_actions import may_start_work
from bot.snapshot.data import load_json
from bot.store import Store, StoredDiagnosis, StoreError, Verdict
from bot.verdicts import Choice, is_diagnosis_id, read_choice

LOG = logging.getLogger(__name__)


@dataclass(frozen=True)
class Asked:
    """A verdict about to be given: who, on which kept diagnosis, answered where."""

    store: Store
    record: StoredDiagnosis
    user: str
    channel: str
    lang: Lang

    @property
    def thread(self) -> str:
        return self.record.thread_ts or self.record.message_ts

    def said(self) -> str:
        return said_words(load_json(Diagnosis, self.record.diagnosis), self.lang)


def _tell(client: WebClient, channel: str, user: str, key: str, lang: Lang) -> None:
    try:
        client.chat_postEphemeral(channel=channel, user=user, text=say(key, lang))
    except SlackApiError as error:
        LOG.warning("could not tell %s why a verdict was refused: %s", user, error.response.get("error"))


def _pressed_id(body: dict[str, Any]) -> str | None:
    try:
        value = json.loads(body["actions"][0].get("value") or "{}")
    except (KeyError, IndexError, TypeError, ValueError, AttributeError):
        return None
    found = value.get("diagnosis") if isinstance(value, dict) else None
    return found if is_diagnosis_id(found) else None


def _asked(
    bot: Bot, client: WebClient, user: str, channel: str, message_ts: str, diagnosis_id: str | None
) -> Asked | None:
    """The kept diagnosis a verdict is about, after every check; None after an ephemeral refusal."""
    lang = bot.lang(channel, user)
    store = bot.store
    if store is None:
        _tell(client, channel, user, "verdict.unavailable", lang)
        return None
    if not may_start_work(bot, client, user):
        _tell(client, channel, user, "verdict.refused", lang)
        return None
    if diagnosis_id is None:
        _tell(client, channel, user, "verdict.foreign", lang)
        return None
    try:
        record = store.diagnosis(diagnosis_id)
        already = store.verdict(diagnosis_id, user) if record is not None else None
    except StoreError as error:
        LOG.warning("verdict not read: %s", error)
        _tell(client, channel, user, "verdict.failed", lang)
        return None
    if record is None:
        _tell(client, channel, user, "verdict.gone", lang)
        return None
    if (record.channel, record.message_ts) != (channel, message_ts):
        LOG.warning("refused a verdict from %s: %s was not posted in that message", user, diagnosis_id)
        _tell(client, channel, user, "verdict.foreign", lang)
        return None
    if already is not None:
        _tell(client, channel, user, "verdict.already", lang)
        return None
    return Asked(store, record, user, channel, lang)


def _give(client: WebClient, asked: Asked, choice: Choice | None) -> None:
    """Record the verdict (``choice`` None: "right") and say so in the thread; once per person."""
    verdict = Verdict(
        diagnosis_id=asked.record.id,
        user=asked.user,
        right=choice is None,
        cause=None if choice is None else choice.cause,
        other=None if choice is None else choice.other,
        given_at=asked.store.clock(),
    )
    try:
        recorded = asked.store.record_verdict(verdict)
    except StoreError as error:
        LOG.warning("verdict not saved: %s", error)
        _tell(client, asked.channel, asked.user, "verdict.failed", asked.lang)
        return
    if not recorded:
        # Another click won the race, or the diagnosis went away since it was read.
        _tell(client, asked.channel, asked.user, "verdict.already", asked.lang)
        return
    LOG.info(
        "verdict on %s by %s: %s",
        asked.record.id,
        asked.user,
        "right" if choice is None else (choice.cause or "something else"),
    )
    post(client, asked.channel, audit_note(asked.user, asked.said(), choice, asked.lang), asked.thread)


def _press(body: dict[str, Any]) -> tuple[str, str, str]:
    """(user, channel, ts of the message pressed on): the message itself, not its thread."""
    channel, _ = thread_of(body)
    message = body.get("message") or {}
    container = body.get("container") or {}
    ts = str(message.get("ts") or container.get("message_ts") or "")
    return str((body.get("user") or {}).get("id") or ""), channel, ts


def right(bot: Bot, body: dict[str, Any], client: WebClient) -> None:
    user, channel, ts = _press(body)
    asked = _asked(bot, client, user, channel, ts, _pressed_id(body))
    if asked is not None:
        _give(client, asked, None)


def wrong(bot: Bot, body: dict[str, Any], client: WebClient) -> None:
    user, channel, ts = _press(body)
    asked = _asked(bot, client, user, channel, ts, _pressed_id(body))
    if asked is None:
        return
    view = verdict_modal(asked.record.id, channel, ts, asked.record.asked_cause, asked.said(), asked.lang)
    try:
        client.views_open(trigger_id=str(body.get("trigger_id") or ""), view=view)
    except SlackApiError as error:
        LOG.warning("could not open the verdict modal: %s", error.response.get("error"))
        _tell(client, channel, user, "verdict.failed", asked.lang)


def submitted(bot: Bot, body: dict[str, Any], client: WebClient) -> None:
    view = body.get("view") or {}
    user = str((body.get("user") or {}).get("id") or "")
    place = modal_place(view)
    if place is None:
        LOG.warning("refused a verdict modal from %s without its message", user)
        return
    diagnosis_id, channel, ts = place
    asked = _asked(bot, client, user, channel, ts, diagnosis_id if is_diagnosis_id(diagnosis_id) else None)
    if asked is None:
        return
    choice = read_choice(*modal_answer(view))
    if choice is None or (choice.cause is not None and choice.cause == asked.record.asked_cause):
        _tell(client, channel, user, "verdict.bad_choice", asked.lang)
        return
    _give(client, asked, choice)


def register(app: App, bot: Bot) -> None:
    """Listen to "Yes", "No" and the modal's submission; each acks at once and works lazily."""

    def ack_view(ack: Ack, body: dict[str, Any]) -> None:
        # The one check done before acking: Slack shows a modal's errors only in the ack's answer.
        value, text = modal_answer(body.get("view") or {})
        if value == OTHER_VALUE and not (text or "").strip():
            user = str((body.get("user") or {}).get("id") or "")
            needed = say("verdict.other_needed", bot.lang(None, user))
            ack(response_action="errors", errors={OTHER_BLOCK: needed})
            return
        ack()

    def on_right(body: dict[str, Any], client: WebClient) -> None:
        right(bot, body, client)

    def on_wrong(body: dict[str, Any], client: WebClient) -> None:
        wrong(bot, body, client)

    def on_submitted(body: dict[str, Any], client: WebClient) -> None:
        submitted(bot, body, client)

    app.action(ACTION_VERDICT_RIGHT)(ack=ack_only, lazy=[on_right])
    app.action(ACTION_VERDICT_WRONG)(ack=ack_only, lazy=[on_wrong])
    app.view(VIEW_VERDICT)(ack=ack_view, lazy=[on_submitted])
