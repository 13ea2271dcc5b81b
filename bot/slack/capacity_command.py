"""``/raydiag <cluster> capacity``: the cluster's GPUs layer by layer, as a chart in the channel.

The diagnosis names a cause; the chart shows the numbers behind it (8 GPUs allocatable, 8 given
to Ray Pods, 4 registered in Ray), which is what people paste into an incident channel. The
handler runs lazily after the listener acked: it asks the bot's ``Diagnoser`` for the cluster's
diagnosis (joining a run already under way), draws the PNG from its capacity figures and uploads
it with them as the comment. Failures are told to the person
who asked, never posted to the channel.
"""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt import Respond
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.diagnoser import Busy
from bot.render.capacity import capacity_comment
from bot.render.capacity_chart import render_capacity_png
from bot.render.messages import say
from bot.render.slack import clip, escape
from bot.slack.bot import Bot
from bot.slack.commands import Command
from bot.snapshot.redact import redact

LOG = logging.getLogger(__name__)
COMMENT_LIMIT = 3000
SHOWN_ERRORS = 3


def register_capacity(bot: Bot) -> None:
    bot.handlers["capacity"] = post_capacity


def post_capacity(
    bot: Bot, command: Command, payload: dict[str, Any], client: WebClient, respond: Respond
) -> None:
    cluster = command.cluster
    if cluster is None:  # the grammar only makes a capacity command for a configured cluster
        return
    channel = str(payload.get("channel_id") or "")
    lang = bot.lang(channel, payload.get("user_id"))
    try:
        diagnosis = bot.diagnoser.run(cluster, command.namespace or cluster.namespace, "slash")
    except Busy:
        respond(response_type="ephemeral", text=say("slack.busy", lang))
        return
    except Exception as error:  # a collection that fails outright is told, not raised into Bolt
        LOG.exception("could not read %s for its capacity picture", cluster.name)
        reason = escape(redact(str(error))[:300])
        text = say("slack.capacity_failed", lang, cluster=cluster.name, error=reason)
        respond(response_type="ephemeral", text=text)
        return
    figures = diagnosis.capacity
    comment = capacity_comment(figures, cluster=cluster.name, lang=lang)
    if diagnosis.errors:
        unread = "; ".join(escape(f"{e.source}: {e.message}") for e in diagnosis.errors[:SHOWN_ERRORS])
        comment += f"\n:warning: {say('heading.errors', lang)}: {unread}"
    try:
        client.files_upload_v2(
            channel=channel,
            file=render_capacity_png(figures, cluster=cluster.name, lang=lang),
            filename=f"raydiag-capacity-{cluster.name}.png",
            title=say("capacity.title", lang, cluster=cluster.name),
            initial_comment=clip(comment, COMMENT_LIMIT, lang),
        )
    except SlackApiError as error:
        if error.response.get("error") in ("not_in_channel", "channel_not_found"):
            respond(response_type="ephemeral", text=say("slack.not_in_channel", lang))
            return
        raise
