"""Bolt's single endpoint ``POST /slack/events`` on a threaded server, plus health checks and metrics.

In HTTP mode Slack posts here; in Socket Mode (``events=False``) the same server answers the
kubelet's probes and Prometheus (``/healthz``, ``/readyz``, ``/metrics``) while events arrive over
the socket, and ``/slack/events`` answers 404.

With a receiver given, ``POST /alertmanager`` takes Alertmanager's webhook (``bot.slack.alerts``).

``/readyz`` answers what ``ready`` says, asked at each probe: in HTTP mode always ready once serving;
in Socket Mode ``raydiag serve`` sets it to the socket's state (503 until the WebSocket is connected,
and again while it is down and reconnecting), so a Pod that hears nothing from Slack is not Ready.

Bolt's development server handles one request at a time; a burst of slash commands during an
incident must each be acknowledged within 3 seconds, so requests are served on threads here.
"""

from __future__ import annotations

import http.server
import threading
from collections.abc import Callable, Sequence
from urllib.parse import urlsplit

from slack_bolt import App, BoltRequest

MAX_BODY = 1024 * 1024
EVENTS_PATH = "/slack/events"
ALERTMANAGER_PATH = "/alertmanager"


class _Handler(http.server.BaseHTTPRequestHandler):
    server: SlackHTTPServer
    protocol_version = "HTTP/1.1"
    # Headers and body leave in two writes; with Nagle's algorithm on, the body would wait for the
    # peer's delayed ACK of the headers (40 ms on Linux) on every keep-alive request.
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: object) -> None:
        return None

    def _send(
        self,
        status: int,
        body: bytes,
        content_type: str = "text/plain; charset=utf-8",
        headers: dict[str, str] | None = None,
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        if path == "/healthz":
            self._send(200, b"ok")
        elif path == "/readyz":
            ready = self.server.ready()
            self._send(200 if ready else 503, b"ready" if ready else b"not ready")
        elif path == "/metrics" and self.server.metrics is not None:
            body, content_type = self.server.metrics()
            self._send(200, body, content_type)
        else:
            self._send(404, b"not found")

    def do_POST(self) -> None:
        if urlsplit(self.path).path == ALERTMANAGER_PATH and self.server.alertmanager is not None:
            self._alertmanager(self.server.alertmanager)
            return
        # In Socket Mode events arrive over the socket: nothing is served here (Bolt, with no
        # signing secret, would log a traceback for each request).
        if urlsplit(self.path).path != EVENTS_PATH or not self.server.events:
            self._send(404, b"not found")
            return
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            self._send(413, b"too large")
            return
        body = self.rfile.read(length).decode("utf-8", errors="replace")
        headers: dict[str, str | Sequence[str]] = {
            key.lower(): [value] for key, value in self.headers.items()
        }
        response = self.server.app.dispatch(
            BoltRequest(body=body, headers=headers, query=urlsplit(self.path).query)
        )
        extra = {
            k: v[0]
            for k, v in response.headers.items()
            if k.lower() not in ("content-length", "content-type")
        }
        content_type = (response.headers.get("content-type") or ["text/plain; charset=utf-8"])[0]
        self._send(response.status, (response.body or "").encode("utf-8"), content_type, extra)

    def _alertmanager(self, receive: Callable[[bytes, str | None], tuple[int, str]]) -> None:
        """Alertmanager's webhook: the receiver checks the token and answers before diagnosing."""
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            self._send(413, b"too large")
            return
        status, text = receive(self.rfile.read(length), self.headers.get("Authorization"))
        self._send(status, text.encode("utf-8"))


class SlackHTTPServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    # A burst of commands during an incident must not overflow the listen backlog (default 5).
    request_queue_size = 256

    def __init__(
        self,
        app: App,
        host: str,
        port: int,
        ready: Callable[[], bool] = lambda: True,
        metrics: Callable[[], tuple[bytes, str]] | None = None,
        *,
        events: bool = True,
        alertmanager: Callable[[bytes, str | None], tuple[int, str]] | None = None,
    ) -> None:
        super().__init__((host, port), _Handler)
        self.app = app
        self.events = events
        # POST /alertmanager (bot.slack.alerts.webhook_receiver); None: not served (404).
        self.alertmanager = alertmanager
        self.ready = ready
        self.metrics = metrics

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}"

    def start_background(self) -> threading.Thread:
        thread = threading.Thread(target=self.serve_forever, name="raydiag-http", daemon=True)
        thread.start()
        return thread
