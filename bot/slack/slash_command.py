"""``/raydiag``: acked at once with what needs no work (usage, a refusal, "working on it"), then
the diagnosis or the sub-command's handler runs lazily.

The grammar is ``bot.slack.commands``; sub-commands (capacity, quiz, schedule) are handlers other
surface modules put in ``Bot.handlers``, so this module names none of them.
"""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt import Ack, App, Respond
from slack_sdk import WebClient

from bot.config import Config
from bot.render.messages import Lang, say
from bot.slack.bot import Bot
from bot.slack.commands import HANDLED_KINDS, Command, parse_command
from bot.slack.diagnosis_posts import deliver_diagnosis

LOG = logging.getLogger(__name__)


def usage_blocks(config: Config, lang: Lang, note: str | None = None) -> list[dict[str, Any]]:
    names = ", ".join(f"`{c.name}`" for c in config.clusters)
    clusters = say("slack.clusters", lang, names=names) if names else say("slack.no_clusters", lang)
    text = "\n\n".join(part for part in (note, say("slack.usage", lang), clusters) if part)
    return [{"type": "section", "text": {"type": "mrkdwn", "text": text[:3000]}}]


def command_reply(
    command: Command, config: Config, lang: Lang, handled: frozenset[str] = frozenset()
) -> list[dict[str, Any]] | None:
    """The ephemeral answer for commands that need no lazy work; None when a diagnosis or handler runs."""
    if command.kind == "diagnose" or command.kind in handled:
        return None
    if command.kind in HANDLED_KINDS:
        return usage_blocks(config, lang, say("slack.unavailable", lang, what=command.kind))
    note = {
        "help": None,
        "bad-schedule": say("slack.bad_schedule", lang, text=command.word[:100]),
        "unknown-cluster": say("slack.unknown_cluster", lang, name=command.word),
        "bad-namespace": say("slack.bad_namespace", lang, name=command.word),
        "invalid": say("slack.invalid", lang, text=command.word[:100]),
    }[command.kind]
    return usage_blocks(config, lang, note)


def register(app: App, bot: Bot) -> None:
    """The slash command: a quick ack, then the work."""

    def ack_command(ack: Ack, command: dict[str, Any]) -> None:
        parsed = parse_command(command.get("text", ""), bot.config)
        lang = bot.lang(command.get("channel_id"), command.get("user_id"))
        reply = command_reply(parsed, bot.config, lang, frozenset(bot.handlers))
        if reply is not None:
            ack(response_type="ephemeral", blocks=reply, text=say("slack.usage", lang)[:300])
            return
        if parsed.kind in bot.handlers:
            ack()
            return
        assert parsed.cluster is not None
        ack(response_type="ephemeral", text=say("slack.working", lang, cluster=parsed.cluster.name))

    def run_command(command: dict[str, Any], client: WebClient, respond: Respond) -> None:
        parsed = parse_command(command.get("text", ""), bot.config)
        handler = bot.handlers.get(parsed.kind)
        if handler is not None:
            try:
                handler(bot, parsed, command, client, respond)
            except Exception:  # a failing sub-command is logged and told, never raised into Bolt
                LOG.exception("/raydiag %s failed", parsed.kind)
                _respond(
                    respond,
                    say(
                        "slack.failed",
                        bot.lang(command.get("channel_id"), None),
                        cluster=parsed.kind,
                        error="internal error",
                    ),
                )
            return
        if parsed.kind != "diagnose" or parsed.cluster is None:
            return
        deliver_diagnosis(
            bot,
            client,
            parsed.cluster,
            parsed.namespace or parsed.cluster.namespace,
            command["channel_id"],
            command.get("user_id"),
            notify=lambda text: _respond(respond, text),
            trigger="slash",
        )

    app.command("/raydiag")(ack=ack_command, lazy=[run_command])


def _respond(respond: Respond, text: str) -> None:
    respond(response_type="ephemeral", text=text)
