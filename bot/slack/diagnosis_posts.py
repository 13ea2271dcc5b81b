"""Posting a diagnosis thread, and keeping it for the verdicts people give on it.

Every way a diagnosis reaches Slack (``/raydiag``, a mention or a shortcut, an alert, a paste)
posts through ``post_diagnosis``. With a state store, the diagnosis is kept under a fresh id that
its "Right cause?" buttons carry, together with where it was posted and what it was given
(redacted); without one there is nowhere to keep a verdict, so no buttons are shown. Keeping it is
best effort: a database that fails after the post costs that diagnosis its verdicts, never the post.
A deleted message (the diagnosis, or the paste it answered) takes its kept diagnosis with it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from slack_sdk import WebClient

from bot.deliver.blocks.thread import render_thread
from bot.deliver.slack_poster import post_thread
from bot.diagnosis import Diagnosis
from bot.render.messages import Lang
from bot.store import StoredDiagnosis, StoreError
from bot.verdicts import asked_cause, kept_input, new_diagnosis_id

if TYPE_CHECKING:
    from bot.slack.app import Bot

LOG = logging.getLogger(__name__)


def post_diagnosis(
    bot: Bot,
    client: WebClient,
    channel: str,
    diagnosis: Diagnosis,
    lang: Lang,
    thread_ts: str | None,
    *,
    trigger: str,
    pasted: str | None = None,
    source_ts: str | None = None,
) -> str | None:
    """Post the thread (root in ``thread_ts``'s thread, or in the channel); returns the root's ts.

    ``pasted`` is the text a paste diagnosis read (None: a cluster the bot read itself), and
    ``source_ts`` the person's message it came from.
    """
    store = bot.store
    verdict_id = new_diagnosis_id() if store is not None else None
    messages = render_thread(diagnosis, bot.catalogue, lang, verdict_id)
    root_ts = post_thread(client, channel, messages, thread_ts)
    if store is None or verdict_id is None or root_ts is None:
        return root_ts
    record = StoredDiagnosis(
        id=verdict_id,
        channel=channel,
        message_ts=root_ts,
        thread_ts=thread_ts,
        source_ts=source_ts,
        trigger=trigger[:16],
        cluster=diagnosis.cluster,
        input=kept_input(diagnosis, pasted),
        diagnosis=diagnosis.model_dump_json(),
        asked_cause=asked_cause(diagnosis),
        posted_at=store.clock(),
    )
    try:
        store.save_diagnosis(record)
    except StoreError as error:
        LOG.warning("diagnosis posted in %s but not kept for verdicts: %s", channel, error)
    return root_ts


def forget_deleted(bot: Bot, event: Mapping[str, Any]) -> None:
    """A ``message_deleted`` event: forget what the deleted message carried or was the input of."""
    store = bot.store
    channel, ts = event.get("channel"), event.get("deleted_ts")
    if store is None or not isinstance(channel, str) or not isinstance(ts, str):
        return
    try:
        forgotten = store.forget_message(channel, ts)
    except StoreError as error:
        LOG.warning("cannot forget the diagnoses of a deleted message: %s", error)
        return
    if forgotten:
        LOG.info("message %s in %s deleted: %d kept diagnosis(es) forgotten", ts, channel, forgotten)
