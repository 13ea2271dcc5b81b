"""`raydiag serve` in Socket Mode as a real process, against a loopback Socket Mode server.

The Web API stand-in answers ``apps.connections.open`` with the loopback server's URL; the server
speaks slack_sdk's protocol (hello, envelopes, acks, ``disconnect``), as bolt-python's own adapter
tests do with their mock server. Covered: a slash command, a button, a mention delivered twice, a
refresh, ``/readyz`` following the socket, SIGTERM, and Alertmanager's webhook on the same port.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import parse_qsl

from tests.slack.test_alertmanager_webhook import TOKEN as ALERTMANAGER_TOKEN
from tests.slack.test_alertmanager_webhook import _post as post_alertmanager
from tests.slack.test_startup_checks import APP_TOKEN, BOT_TOKEN, serve_env, serve_process
from tests.support.slack_api import (
    BOT_USER_ID,
    SlackWebAPI,
    app_mention_event,
    block_actions_payload,
    event_callback_payload,
    serve_slack,
    slash_command_body,
)
from tests.support.socket_mode import SocketModeServer, serve_socket_mode

CHANNEL = "C111"


def readyz(base: str) -> int:
    try:
        with urllib.request.urlopen(base + "/readyz", timeout=5) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as error:
        return int(error.code)
    except OSError:
        return 0  # not listening yet


def wait_readyz(base: str, status: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    seen = None
    while time.monotonic() < deadline:
        seen = readyz(base)
        if seen == status:
            return
        time.sleep(0.1)
    raise AssertionError(f"/readyz answered {seen}, not {status}, for {timeout} s")


def command(slack: SlackWebAPI, text: str) -> dict[str, str]:
    """A slash command's fields, as the Socket Mode envelope's payload carries them."""
    return dict(parse_qsl(slash_command_body(text=text, response_url=slack.response_url())))


def posts_in_thread(slack: SlackWebAPI, thread_ts: str) -> list[dict[str, object]]:
    return [c.params for c in slack.calls_to("chat.postMessage") if c.params.get("thread_ts") == thread_ts]


def wait_posts_in_thread(
    slack: SlackWebAPI, thread_ts: str, timeout: float = 30.0
) -> list[dict[str, object]]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        posts = posts_in_thread(slack, thread_ts)
        if posts:
            return posts
        time.sleep(0.05)
    raise AssertionError(f"nothing posted in thread {thread_ts} after {timeout} s")


def test_socket_mode_answers_commands_buttons_and_mentions_across_a_refresh(tmp_path: Path) -> None:
    with serve_slack() as slack, serve_socket_mode(slack) as socket:
        env = serve_env(
            tmp_path,
            slack,
            SLACK_BOT_TOKEN=BOT_TOKEN,
            SLACK_APP_TOKEN=APP_TOKEN,
            RAYDIAG_ALERTMANAGER_TOKEN=ALERTMANAGER_TOKEN,
        )
        with serve_process(tmp_path, env) as (process, base, log):
            first = socket.wait_connected(timeout=60)
            # slack_sdk may ask twice at start (its monitor races the first session); one connection opens.
            opens = len(slack.calls_to("apps.connections.open"))
            assert {call.token for call in slack.calls_to("apps.connections.open")} == {APP_TOKEN}
            assert first.path.startswith("/link/?ticket=")
            wait_readyz(base, 200)

            # Alertmanager's webhook is served on the health/metrics port in Socket Mode too.
            notification = json.dumps({"version": "4", "alerts": []}).encode()
            assert post_alertmanager(base, notification, "not-the-token")[0] == 401
            status, said = post_alertmanager(base, notification, ALERTMANAGER_TOKEN)
            assert status == 503 and "alertmanager.channel" in said  # this config names no channel

            # A slash command: its ack carries the ephemeral help, as the HTTP response would.
            help_ack = socket.wait_ack(socket.slash_command(command(slack, "help")))
            assert help_ack.connection == first.number
            assert help_ack.payload is not None and help_ack.payload["response_type"] == "ephemeral"
            assert "`gpu-prod`" in json.dumps(help_ack.payload["blocks"])

            # A button on raydiag's own message: acked at once, then the mute is said in its thread.
            message_ts = "1733000000.000500"
            press = block_actions_payload(
                "raydiag_mute",
                value=json.dumps({"cluster": "gpu-prod"}),
                user_id="U0ENGINEER",
                channel_id=CHANNEL,
                message_ts=message_ts,
            )
            button_ack = socket.wait_ack(socket.interactive(press))
            assert button_ack.payload is None
            [muted] = wait_posts_in_thread(slack, message_ts)
            assert "<@U0ENGINEER>" in json.dumps(muted) and "gpu-prod" in json.dumps(muted)

            # The same mention delivered twice (Slack's retry keeps the event_id): answered once.
            mention_ts = "1733000000.000900"
            mention = event_callback_payload(
                app_mention_event(text=f"<@{BOT_USER_ID}> hello", channel=CHANNEL, ts=mention_ts),
                event_id="Ev0SOCKET01",
            )
            socket.wait_ack(socket.event(mention))
            socket.wait_ack(socket.event(mention, retry_attempt=1))
            [usage] = wait_posts_in_thread(slack, mention_ts)
            assert "/raydiag" in json.dumps(usage)
            time.sleep(1.5)  # a second answer, if any, would be posted by now
            assert len(posts_in_thread(slack, mention_ts)) == 1

            # Slack's refresh: the bot opens a new connection, closes the old one, and is acked there.
            socket.disconnect()
            second = socket.wait_connected(count=2)
            socket.wait_closed(first)
            # A fresh URL for it (slack_sdk may ask once more as the old one closes); one new connection.
            assert len(slack.calls_to("apps.connections.open")) > opens
            assert [c.number for c in socket.connections] == [first.number, second.number]
            after = socket.wait_ack(socket.slash_command(command(slack, "help"), connection=second))
            assert after.connection == second.number
            assert after.payload is not None and "`gpu-prod`" in json.dumps(after.payload["blocks"])
            wait_readyz(base, 200)

            process.terminate()
            assert process.wait(timeout=30) == 0, log.read_text()
            socket.wait_closed(second, timeout=5)  # it closed its connection on the way out
        output = log.read_text()
    assert "Traceback" not in output, output
    assert "Socket Mode: connected" in output


def test_readyz_follows_the_socket(tmp_path: Path) -> None:
    with serve_slack() as slack, serve_socket_mode(slack) as socket:
        socket.stop_listening()  # the socket server is down: connections are refused
        env = serve_env(tmp_path, slack, SLACK_BOT_TOKEN=BOT_TOKEN, SLACK_APP_TOKEN=APP_TOKEN)
        with serve_process(tmp_path, env) as (process, base, log):
            wait_readyz(base, 503, timeout=60)
            with urllib.request.urlopen(base + "/healthz", timeout=5) as health:
                assert health.status == 200  # alive, just not ready
            slack.wait_for("apps.connections.open", count=2, timeout=30)  # it keeps trying
            assert all(readyz(base) == 503 for _ in range(10))

            # Listening again, but answering handshakes with 503: still not ready.
            socket.refuse()
            socket.listen()
            wait_until_refused(socket)
            assert readyz(base) == 503
            assert socket.connections == []

            socket.accept()
            first = socket.wait_connected()
            wait_readyz(base, 200)

            # The server goes away: not ready while the bot reconnects, ready again once it has.
            socket.stop_listening(drop=True)
            socket.wait_closed(first)
            wait_readyz(base, 503)
            socket.listen()
            socket.wait_connected(count=2)
            wait_readyz(base, 200)
            socket.wait_ack(socket.slash_command(command(slack, "help")))

            process.terminate()
            assert process.wait(timeout=30) == 0, log.read_text()
        output = log.read_text()
    assert "Traceback" not in output, output
    assert "Socket Mode: disconnected; not ready until it reconnects" in output


def wait_until_refused(socket: SocketModeServer, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while socket.refused == 0:
        assert time.monotonic() < deadline, "the bot did not try to connect"
        time.sleep(0.05)
