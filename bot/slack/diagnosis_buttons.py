"""The buttons under every diagnosis: run it again, or mute the cluster's unasked posts for a while.

Both act on the configured cluster the button names, in the thread it sits in (``button_press``);
the probe buttons beside them are ``bot.slack.probe_actions``.
"""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt import App
from slack_sdk import WebClient

from bot.deliver.blocks import note
from bot.deliver.slack_poster import post
from bot.render.messages import say
from bot.render.slack import ACTION_MUTE, ACTION_RERUN
from bot.slack.bot import Bot, ack_only
from bot.slack.buttons import button_press
from bot.slack.diagnosis_posts import deliver_diagnosis
from bot.store import StoreError

LOG = logging.getLogger(__name__)


def register(app: App, bot: Bot) -> None:
    """Rerun and mute: acked at once, the work done lazily."""

    def rerun(body: dict[str, Any], client: WebClient) -> None:
        press = button_press(bot, body, client)
        if press is not None:
            press.announce(client, say("slack.rerun", press.lang))
            deliver_diagnosis(
                bot,
                client,
                press.cluster,
                press.cluster.namespace,
                press.channel,
                press.user,
                thread_ts=press.thread,
                trigger="button",
            )

    def mute(body: dict[str, Any], client: WebClient) -> None:
        press = button_press(bot, body, client)
        if press is None:
            return
        hours = bot.config.slack.mute_hours
        try:
            bot.mutes.mute(press.cluster.name, hours * 3600, by=press.user)
        except StoreError as error:
            LOG.warning("mute of %s not saved: %s", press.cluster.name, error)
            client.chat_postEphemeral(
                channel=press.channel, user=press.user, text=say("state.mute_failed", press.lang)
            )
            return
        text = say("slack.muted", press.lang, user=press.user, cluster=press.cluster.name, hours=hours)
        post(client, press.channel, note(text), press.thread)

    app.action(ACTION_RERUN)(ack=ack_only, lazy=[rerun])
    app.action(ACTION_MUTE)(ack=ack_only, lazy=[mute])
