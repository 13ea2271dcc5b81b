"""What a button press on a diagnosis acts on: its configured cluster and the thread it sits in.

A button carries a cluster name in its value, and Slack sends where it was pressed; neither is
trusted. The cluster must be one of the configuration's, and the message one raydiag posted
(``pressed_on_our_message``, checked by ``bot.slack.middleware`` before any listener runs).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from slack_bolt import BoltContext
from slack_sdk import WebClient

from bot.config import ClusterConfig
from bot.deliver.blocks import note
from bot.deliver.slack_poster import post
from bot.render.messages import Lang, say
from bot.slack.bot import Bot


@dataclass(frozen=True)
class Press:
    """A button press on a diagnosis: who, where (the thread), and which configured cluster."""

    cluster: ClusterConfig
    channel: str
    thread: str
    user: str
    lang: Lang

    def announce(self, client: WebClient, action: str) -> None:
        """Say in the thread who pressed what, before anything runs."""
        text = say("slack.pressed", self.lang, user=self.user, action=action, cluster=self.cluster.name)
        post(client, self.channel, note(text), self.thread)


def button_press(bot: Bot, body: dict[str, Any], client: WebClient) -> Press | None:
    """The press, or None after an ephemeral refusal when the button names no configured cluster."""
    channel, thread = thread_of(body)
    user = str((body.get("user") or {}).get("id") or "")
    lang = bot.lang(channel, user)
    cluster = button_cluster(bot, body)
    if cluster is None:
        client.chat_postEphemeral(channel=channel, user=user, text=say("slack.refused_cluster", lang))
        return None
    return Press(cluster, channel, thread, user, lang)


def button_cluster(bot: Bot, body: dict[str, Any]) -> ClusterConfig | None:
    """The configured cluster a button names; crafted payloads naming anything else get None."""
    try:
        value = json.loads(body["actions"][0].get("value") or "{}")
    except (KeyError, IndexError, TypeError, ValueError):
        return None
    name = value.get("cluster") if isinstance(value, dict) else None
    return bot.config.cluster(name) if isinstance(name, str) else None


def pressed_on_our_message(body: dict[str, Any], context: BoltContext) -> bool:
    """Whether a button sits on a message this bot posted.

    An ephemeral message (the quiz's) was shown by this app to the one person pressing it, and
    Slack may send it without its ``message``: that is ours too.
    """
    if (body.get("container") or {}).get("is_ephemeral"):
        return True
    message = body.get("message")
    if not isinstance(message, dict):
        return False
    ours = {v for v in (context.get("bot_id"), context.get("bot_user_id")) if v}
    return bool(ours) and (message.get("bot_id") in ours or message.get("user") in ours)


def thread_of(body: dict[str, Any]) -> tuple[str, str]:
    container = body.get("container") or {}
    message = body.get("message") or {}
    channel = container.get("channel_id") or (body.get("channel") or {}).get("id") or ""
    thread = message.get("thread_ts") or container.get("message_ts") or message.get("ts") or ""
    return str(channel), str(thread)
