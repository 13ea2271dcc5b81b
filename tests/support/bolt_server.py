"""The bot's Bolt app behind its own threaded HTTP endpoint on loopback, for the length of a block."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from slack_bolt import App

from bot.slack.app import Bot
from bot.slack.server import SlackHTTPServer


@contextlib.contextmanager
def bolt_over_http(bot: Bot, app: App) -> Iterator[str]:
    """Yields the events URL (``.../slack/events``); stops the server and the bot's diagnosis pool after."""
    server = SlackHTTPServer(app, "127.0.0.1", 0)
    server.start_background()
    try:
        yield server.url + "/slack/events"
    finally:
        server.shutdown()
        server.server_close()
        bot.runs.shutdown()
