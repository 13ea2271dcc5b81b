"""The bot's HTTP server (its Bolt app, /metrics, /alertmanager) on loopback, for the length of a block."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from slack_bolt import App

from bot.slack.bot import Bot
from bot.slack.server import SlackHTTPServer


@contextlib.contextmanager
def serving(server: SlackHTTPServer) -> Iterator[str]:
    """Runs ``server`` in the background for the block; yields its base URL, stops it after."""
    server.start_background()
    try:
        yield server.url
    finally:
        server.shutdown()
        server.server_close()


@contextlib.contextmanager
def bolt_over_http(bot: Bot, app: App) -> Iterator[str]:
    """Yields the events URL (``.../slack/events``); stops the server and the bot's diagnosis pool after."""
    try:
        with serving(SlackHTTPServer(app, "127.0.0.1", 0)) as url:
            yield url + "/slack/events"
    finally:
        bot.runs.shutdown()
