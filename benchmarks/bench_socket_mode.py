"""Socket Mode: how long an envelope waits for its ack right after Slack's ``refresh_requested``.

Slack asks a Socket Mode app to reconnect (``{"type": "disconnect", "reason": "refresh_requested"}``)
a few times an hour. The app opens a new connection; an envelope Slack delivers on it should be acked
at once, like any other. This runs raydiag's Bolt app (``build_app``) under each of Bolt's two
synchronous adapters against the loopback Socket Mode server and Web API stand-in:

* ``builtin``: ``slack_bolt.adapter.socket_mode.SocketModeHandler`` (slack_sdk's built-in client);
* ``websocket_client``: ``slack_bolt.adapter.socket_mode.websocket_client.SocketModeHandler``.

Each run: connect, send ``disconnect``, wait for the new connection's hello, deliver ``/raydiag help``
on it, wait for the ack. It reports, per adapter, the median and worst over the runs of the time from
the envelope to its ack, and from the ``disconnect`` to the ack, plus the same command acked on a
settled connection for comparison.

    .venv/bin/python benchmarks/bench_socket_mode.py [--runs 10] [--adapter builtin|websocket_client]
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.config import ClusterConfig, Config
from bot.slack.app import build_app
from bot.slack.bot import Bot
from tests.support.slack_api import SlackWebAPI, serve_slack, slash_command_body
from tests.support.socket_mode import SocketModeServer, serve_socket_mode

APP_TOKEN = "xapp-1-A123-1-benchmark"
BOT_TOKEN = "xoxb-1-benchmark"
ADAPTERS = ("builtin", "websocket_client")


def handler_for(adapter: str, app: Any) -> Any:
    if adapter == "builtin":
        from slack_bolt.adapter.socket_mode import SocketModeHandler

        return SocketModeHandler(app, APP_TOKEN)
    from slack_bolt.adapter.socket_mode.websocket_client import SocketModeHandler as WebSocketClientHandler

    return WebSocketClientHandler(app, APP_TOKEN)


def command_fields(slack: SlackWebAPI) -> dict[str, str]:
    from urllib.parse import parse_qsl

    return dict(parse_qsl(slash_command_body(text="help", response_url=slack.response_url())))


def one_run(
    adapter: str, bot: Bot, slack: SlackWebAPI, socket: SocketModeServer
) -> tuple[float, float, float]:
    """(settled ack, envelope-to-ack after refresh, disconnect-to-ack after refresh), in seconds."""
    app = build_app(bot, token=BOT_TOKEN, signing_secret="", api_url=slack.url)
    handler = handler_for(adapter, app)
    before = len(socket.connections)
    handler.connect()
    try:
        socket.wait_connected(count=before + 1)
        settled_id = socket.slash_command(command_fields(slack))
        settled = socket.wait_ack(settled_id).time - socket.sent(settled_id).time
        # Let the client settle into reading the connection before Slack asks for a refresh.
        time.sleep(0.5)
        refreshed_at = time.monotonic()
        socket.disconnect()
        connection = socket.wait_connected(count=before + 2)
        envelope = socket.slash_command(command_fields(slack), connection=connection)
        ack = socket.wait_ack(envelope, timeout=60)
        return settled, ack.time - socket.sent(envelope).time, ack.time - refreshed_at
    finally:
        handler.close()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--adapter", choices=ADAPTERS, action="append")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    adapters = args.adapter or list(ADAPTERS)
    config = Config(clusters=[ClusterConfig(name="gpu-prod", namespace="ml")])
    bot = Bot(config=config)
    try:
        with serve_slack() as slack, serve_socket_mode(slack) as socket:
            print(
                "| adapter | runs | settled ack, median | ack after refresh, median | worst | disconnect to ack, median |"
            )
            print("|---|--:|--:|--:|--:|--:|")
            for adapter in adapters:
                results = [one_run(adapter, bot, slack, socket) for _ in range(args.runs)]
                settled = [r[0] for r in results]
                after = [r[1] for r in results]
                total = [r[2] for r in results]
                print(
                    f"| {adapter} | {args.runs} | {statistics.median(settled) * 1000:.1f} ms "
                    f"| {statistics.median(after) * 1000:.1f} ms | {max(after) * 1000:.1f} ms "
                    f"| {statistics.median(total) * 1000:.1f} ms |",
                    flush=True,
                )
    finally:
        bot.runs.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
