"""A real Alertmanager on loopback, for the tests: Debian's ``prometheus-alertmanager`` binary,
started with a config the test writes, in a temporary folder, stopped (by PID) at the end.

Run ``make alertmanager`` (or install Debian's ``prometheus-alertmanager`` package) to get it::

    with serve_alertmanager(config) as manager:      # config: the alertmanager.yml as a dict
        manager.fire({"alertname": "RayWorkerPending", "namespace": "ml", "pod": "w-1"})
        ...                                            # its receivers are called on their own

Clustering is off (``--cluster.listen-address=``), so one process is the whole Alertmanager.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import shutil
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from tests.support.bot_process import free_port, stop

INSTALL_HINT = "run `make alertmanager` (or install Debian's `prometheus-alertmanager` package)"
NAMES = ("prometheus-alertmanager", "alertmanager")


class AlertmanagerUnavailable(RuntimeError):
    """Alertmanager cannot be started here; the message says how to fix that."""


def binary() -> str:
    for name in NAMES:
        found = shutil.which(name)
        if found:
            return found
    raise AlertmanagerUnavailable(f"no Alertmanager binary on PATH: {INSTALL_HINT}")


@dataclass
class Alertmanager:
    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def fire(
        self,
        labels: Mapping[str, str],
        annotations: Mapping[str, str] | None = None,
        *,
        ends_in: timedelta = timedelta(hours=1),
    ) -> None:
        """Push one alert through the API as Prometheus would (``POST /api/v2/alerts``)."""
        self.push([_alert(labels, annotations or {}, datetime.now(UTC) + ends_in)])

    def fire_together(self, label_sets: Sequence[Mapping[str, str]]) -> None:
        """Several alerts in one push, so that one notification carries them all. They start now:
        Alertmanager flushes a new group at once when its first alert started more than
        ``group_wait`` ago, before the dispatcher has inserted the others."""
        now = datetime.now(UTC)
        self.push([_alert(labels, {}, now + timedelta(hours=1), starts=now) for labels in label_sets])

    def resolve_together(self, label_sets: Sequence[Mapping[str, str]]) -> None:
        ended = datetime.now(UTC) - timedelta(seconds=1)
        self.push([_alert(labels, {}, ended) for labels in label_sets])

    def resolve(self, labels: Mapping[str, str], annotations: Mapping[str, str] | None = None) -> None:
        """The same alert with an end time in the past: Alertmanager sends it as resolved."""
        self.push([_alert(labels, annotations or {}, datetime.now(UTC) - timedelta(seconds=1))])

    def push(self, alerts: Sequence[Mapping[str, Any]]) -> None:
        request = urllib.request.Request(
            f"{self.url}/api/v2/alerts",
            data=json.dumps(list(alerts)).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=10) as answer:
            if answer.status != 200:
                raise RuntimeError(f"Alertmanager refused the alerts: HTTP {answer.status}")

    def alerts(self) -> list[dict[str, Any]]:
        with urllib.request.urlopen(f"{self.url}/api/v2/alerts", timeout=10) as answer:
            found: list[dict[str, Any]] = json.loads(answer.read())
            return found

    def logs(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")


def _alert(
    labels: Mapping[str, str],
    annotations: Mapping[str, str],
    ends: datetime,
    starts: datetime | None = None,
) -> dict[str, Any]:
    begun = starts or datetime.now(UTC) - timedelta(minutes=5)
    return {
        "labels": dict(labels),
        "annotations": dict(annotations),
        "startsAt": begun.isoformat(),
        "endsAt": ends.isoformat(),
        "generatorURL": "http://prometheus.example:9090/graph?g0.expr=up",
    }


@contextlib.contextmanager
def serve_alertmanager(config: Mapping[str, Any], timeout: float = 20.0) -> Iterator[Alertmanager]:
    """Start Alertmanager with ``config`` (the YAML document as a dict) on a free loopback port."""
    command = binary()
    with tempfile.TemporaryDirectory(prefix="raydiag-alertmanager-") as folder:
        root = Path(folder)
        (root / "alertmanager.yml").write_text(yaml.safe_dump(dict(config)), encoding="utf-8")
        port = free_port()
        log = root / "alertmanager.log"
        with log.open("wb") as sink:
            process = subprocess.Popen(
                [
                    command,
                    f"--config.file={root / 'alertmanager.yml'}",
                    f"--storage.path={root / 'data'}",
                    f"--web.listen-address=127.0.0.1:{port}",
                    "--cluster.listen-address=",
                    "--log.level=debug",
                ],
                stdout=sink,
                stderr=subprocess.STDOUT,
            )
        manager = Alertmanager(f"http://127.0.0.1:{port}", process, log)
        try:
            _wait_ready(manager, timeout)
            yield manager
        finally:
            stop(process, timeout=10)


def _wait_ready(manager: Alertmanager, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if manager.process.poll() is not None:
            raise AlertmanagerUnavailable(f"Alertmanager exited at start:\n{manager.logs()[-2000:]}")
        try:
            with urllib.request.urlopen(f"{manager.url}/-/ready", timeout=2) as answer:
                if answer.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.1)
    raise AlertmanagerUnavailable(f"Alertmanager not ready after {timeout:.0f} s:\n{manager.logs()[-2000:]}")


# --- receivers ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Delivery:
    """One webhook request Alertmanager made: its path, Authorization header and JSON body."""

    path: str
    authorization: str | None
    body: Any


class _Sink(http.server.ThreadingHTTPServer):
    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _SinkHandler)
        self.received: list[Delivery] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _SinkHandler(http.server.BaseHTTPRequestHandler):
    server: _Sink

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.received.append(Delivery(self.path, self.headers.get("Authorization"), json.loads(body)))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()


@contextlib.contextmanager
def webhook_sink() -> Iterator[_Sink]:
    """A loopback server that records what a webhook receiver posts (``sink.received``)."""
    sink = _Sink()
    thread = threading.Thread(target=sink.serve_forever, daemon=True)
    thread.start()
    try:
        yield sink
    finally:
        sink.shutdown()
        sink.server_close()


def slack_and_webhook(
    slack_api: str,
    webhook_url: str,
    *,
    webhook_token: str,
    slack_channel: str = "C0INCIDENT",
    slack_fields: Mapping[str, str] | None = None,
    group_by: Sequence[str] = ("alertname", "namespace"),
    group_wait: str = "0s",
) -> dict[str, Any]:
    """An alertmanager.yml that sends every alert to a Slack receiver (``chat.postMessage`` on
    ``slack_api`` with a bot token, as for a Slack app) and to a webhook receiver with a bearer
    token; ``slack_fields`` overrides the Slack template (``title``, ``text``)."""
    return {
        "route": {
            "receiver": "slack",
            "group_by": list(group_by),
            "group_wait": group_wait,
            "group_interval": "1s",
            "repeat_interval": "1h",
            # A matched child route replaces its parent's receiver, so both receivers are children
            # and the first lets the next one match too.
            "routes": [{"receiver": "slack", "continue": True}, {"receiver": "raydiag"}],
        },
        "receivers": [
            {
                "name": "slack",
                "slack_configs": [
                    {
                        "api_url": f"{slack_api}chat.postMessage",
                        "channel": slack_channel,
                        "send_resolved": True,
                        "http_config": {"authorization": {"credentials": "xoxb-alertmanager-app"}},
                        **(slack_fields or {}),
                    }
                ],
            },
            {
                "name": "raydiag",
                "webhook_configs": [
                    {
                        "url": webhook_url,
                        "send_resolved": True,
                        "http_config": {"authorization": {"credentials": webhook_token}},
                    }
                ],
            },
        ],
    }
