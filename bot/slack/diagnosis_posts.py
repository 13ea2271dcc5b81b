"""Posting a diagnosis thread, and keeping it for the verdicts people give on it.

Every way a diagnosis reaches Slack (``/raydiag``, a mention or a shortcut, an alert, a paste)
posts through ``post_diagnosis``. With a state store, the diagnosis is kept under a fresh id that
its "Right cause?" buttons carry, together with where it was posted and what it was given
(redacted); without one there is nowhere to keep a verdict, so no buttons are shown. Keeping it is
best effort: a database that fails after the post costs that diagnosis its verdicts, never the post.
A deleted message (the diagnosis, or the paste it answered) takes its kept diagnosis with it.

A cluster's diagnosis is started (or joined) by ``deliver_diagnosis``, which posts it when it
finishes, from the thread that finished it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.config import ClusterConfig
from bot.deliver.blocks.thread import render_thread
from bot.deliver.slack_poster import post_thread
from bot.diagnoser import Trigger
from bot.diagnosis import Diagnosis
from bot.observe.logs import current_request_id, request_context
from bot.render.messages import Lang, say
from bot.slack.bot import Bot
from bot.snapshot.data import dump_json
from bot.snapshot.redact import redact
from bot.store import StoredDiagnosis, StoreError
from bot.verdicts import asked_cause, kept_input, new_diagnosis_id
from bot.workers import Busy

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
        diagnosis=dump_json(diagnosis),
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


def deliver_diagnosis(
    bot: Bot,
    client: WebClient,
    cluster: ClusterConfig,
    namespace: str,
    channel: str,
    user: str | None,
    thread_ts: str | None = None,
    notify: Callable[[str], None] | None = None,
    *,
    trigger: Trigger,
) -> None:
    """Start (or join) the diagnosis; it is posted when it finishes, from the diagnosis thread.

    The caller returns at once: Bolt's listener threads are never held while a cluster is read,
    so acknowledgements stay fast however many diagnoses are running.
    """
    lang = bot.lang(channel, user)
    try:
        submitted = bot.start(cluster, namespace, trigger)
    except Busy:
        _tell(client, channel, user, say("slack.busy", lang), thread_ts, notify)
        return
    if submitted.ahead:
        # Every worker is busy: say so now, so a late answer is not taken for a lost one.
        _tell(client, channel, user, say("slack.queued", lang, ahead=submitted.ahead), thread_ts, notify)

    request_id = current_request_id()

    def deliver(done: Future[Diagnosis]) -> None:
        # Runs in whichever thread finished the diagnosis: the asker's request id is set again here.
        with request_context(request_id):
            try:
                _deliver(bot, client, done, cluster, channel, user, thread_ts, notify, trigger)
            except Exception:  # posting failed even after retries: logged, never raised into a pool
                LOG.exception("could not deliver the diagnosis of %s", cluster.name)

    submitted.future.add_done_callback(deliver)


def _deliver(
    bot: Bot,
    client: WebClient,
    future: Future[Diagnosis],
    cluster: ClusterConfig,
    channel: str,
    user: str | None,
    thread_ts: str | None,
    notify: Callable[[str], None] | None,
    trigger: Trigger,
) -> None:
    lang = bot.lang(channel, user)
    run_id = id(future)
    try:
        diagnosis = future.result()
    except Exception as error:  # one bad diagnosis must not take the listener down
        LOG.exception("diagnosis of %s failed", cluster.name)
        _tell(
            client,
            channel,
            user,
            say("slack.failed", lang, cluster=cluster.name, error=redact(str(error))[:300]),
            thread_ts,
            notify,
        )
        return
    if thread_ts is None and not bot.claim_post(run_id, channel):
        _tell(client, channel, user, say("slack.joined", lang, cluster=cluster.name), None, notify)
        return
    try:
        post_diagnosis(bot, client, channel, diagnosis, lang, thread_ts, trigger=trigger)
    except SlackApiError as error:
        if error.response.get("error") in ("not_in_channel", "channel_not_found"):
            _tell(client, channel, user, say("slack.not_in_channel", lang), thread_ts, notify)
            return
        raise


def _tell(
    client: WebClient,
    channel: str,
    user: str | None,
    text: str,
    thread_ts: str | None,
    notify: Callable[[str], None] | None,
) -> None:
    if notify is not None:
        notify(text)
        return
    if user:
        client.chat_postEphemeral(channel=channel, user=user, text=text, thread_ts=thread_ts)
    else:
        client.chat_postMessage(channel=channel, text=text, thread_ts=thread_ts)
