"""Messages that reach the bot: a mention, a message in an incident channel, the message shortcut,
another app's alert, and the deletion of a message raydiag answered.

A mention, shortcut or incident message is diagnosed (the cluster it names) or explained (the
output it pastes) by ``enrich``; alerts go to ``bot.slack.alerts``; a deletion to
``forget_deleted``.
"""

from __future__ import annotations

from typing import Any, Literal

from slack_bolt import App
from slack_sdk import WebClient

from bot.deliver.blocks import note
from bot.deliver.slack_poster import post
from bot.render.messages import say
from bot.slack.alerts import answer_alert, is_own
from bot.slack.bot import Bot, ack_only
from bot.slack.commands import named_clusters
from bot.slack.diagnosis_posts import deliver_diagnosis, forget_deleted, post_diagnosis
from bot.slack.slash_command import usage_blocks
from bot.workers import Busy

SHORTCUT_CALLBACK = "raydiag_diagnose_message"

# How a message reached the bot: mentioned, posted in an incident channel, or sent by the shortcut.
MessageTrigger = Literal["mention", "incident", "shortcut"]


def register(app: App, bot: Bot) -> None:
    """Mentions, channel messages and the shortcut: acked at once, read lazily."""

    def on_mention(event: dict[str, Any], client: WebClient) -> None:
        enrich(bot, client, event, trigger="mention")

    def on_message(
        event: dict[str, Any], client: WebClient, context: dict[str, Any], body: dict[str, Any]
    ) -> None:
        if event.get("subtype") == "message_deleted":
            # A deleted diagnosis, or a deleted paste it answered: its kept input goes with it.
            forget_deleted(bot, event)
            return
        if event.get("channel") not in bot.config.slack.incident_channels:
            return
        if event.get("bot_id") or event.get("subtype") == "bot_message":
            # Another app's message: an alert, perhaps. raydiag's own posts are never read back.
            own = frozenset(
                i for i in (context.get("bot_id"), context.get("bot_user_id"), body.get("api_app_id")) if i
            )
            if not is_own(event, own):
                answer_alert(bot, client, event)
            return
        # A message that mentions the bot also arrives as app_mention; that listener answers it.
        mention = f"<@{context.get('bot_user_id')}>"
        if mention not in str(event.get("text")):
            enrich(bot, client, event, trigger="incident")

    app.event("app_mention")(ack=ack_only, lazy=[on_mention])
    app.event("message")(ack=ack_only, lazy=[on_message])

    def on_shortcut(body: dict[str, Any], client: WebClient) -> None:
        message = body.get("message") or {}
        event = {
            "channel": (body.get("channel") or {}).get("id"),
            "user": (body.get("user") or {}).get("id"),
            "text": message.get("text", ""),
            "ts": message.get("ts"),
            "thread_ts": message.get("thread_ts"),
        }
        enrich(bot, client, event, trigger="shortcut")

    app.shortcut(SHORTCUT_CALLBACK)(ack=ack_only, lazy=[on_shortcut])


def enrich(bot: Bot, client: WebClient, event: dict[str, Any], *, trigger: MessageTrigger) -> None:
    """A mention, a shortcut or an incident-channel message: diagnose the cluster it names, or
    explain the output it pastes. An incident-channel message that names nothing known and
    explains nothing gets no answer; a mention gets the usage."""
    if event.get("bot_id") or event.get("subtype") in ("bot_message", "message_changed", "message_deleted"):
        return
    mentioned = trigger != "incident"
    channel = str(event.get("channel") or "")
    user = event.get("user")
    text = str(event.get("text") or "")
    thread = str(event.get("thread_ts") or event.get("ts") or "") or None
    lang = bot.lang(channel, user)
    for cluster in named_clusters(text, bot.config)[:2]:
        if not mentioned and bot.mutes.muted(cluster.name):
            continue
        deliver_diagnosis(
            bot, client, cluster, cluster.namespace, channel, None, thread_ts=thread, trigger=trigger
        )
        return
    try:
        diagnosis = bot.diagnoser.explain(text, "paste")
    except Busy:
        if mentioned:
            post(client, channel, note(say("slack.busy", lang)), thread)
        return
    if diagnosis.findings:
        post_diagnosis(
            bot,
            client,
            channel,
            diagnosis,
            lang,
            thread,
            trigger=trigger,
            pasted=text,
            source_ts=str(event.get("ts") or "") or None,
        )
    elif mentioned:
        post(
            client,
            channel,
            {"text": say("slack.usage", lang), "blocks": usage_blocks(bot.config, lang)},
            thread,
        )
