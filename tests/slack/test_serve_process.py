"""`raydiag serve --http --port N` as a real process: Bolt's endpoint answers signed commands."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import yaml

from tests.support.slack_api import post_signed, serve_slack, slash_command_body

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_http_mode_serves_slack_events_and_health(tmp_path: Path) -> None:
    config = tmp_path / "raydiag.yaml"
    config.write_text(yaml.safe_dump({"clusters": [{"name": "gpu-prod", "namespace": "ml"}]}))
    port = free_port()
    with serve_slack() as slack:
        env = {
            **os.environ,
            "SLACK_BOT_TOKEN": "xoxb-process",
            "SLACK_SIGNING_SECRET": "process-secret",
            "RAYDIAG_CONFIG": str(config),
            "RAYDIAG_SLACK_API_URL": slack.url,
        }
        env.pop("SLACK_APP_TOKEN", None)
        process = subprocess.Popen(
            [sys.executable, "-m", "bot", "serve", "--http", "--host", "127.0.0.1", "--port", str(port)],
            cwd=REPO,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            base = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                try:
                    with urllib.request.urlopen(base + "/healthz", timeout=2) as answer:
                        if answer.status == 200:
                            break
                except OSError:
                    time.sleep(0.3)
            answer = post_signed(base + "/slack/events", slash_command_body(text="help"), "process-secret")
            assert answer.status == 200
            assert "`gpu-prod`" in str(answer.json()["blocks"])
            assert post_signed(base + "/slack/events", slash_command_body(text="help"), "wrong").status == 401
        finally:
            process.terminate()
            process.wait(timeout=20)
