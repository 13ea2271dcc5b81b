"""``raydiag serve --http`` as a real child process, for tests that need the whole program.

The process gets its own data folder (``RAYDIAG_DATA_DIR``) so nothing is written to the home
folder, waits until ``/healthz`` answers, and is stopped (terminate, then kill) on exit.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def stop(process: subprocess.Popen[bytes], timeout: float = 20.0) -> None:
    """SIGTERM, then SIGKILL if it is still running after ``timeout`` seconds; reaped either way."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=timeout)


@dataclass
class BotProcess:
    process: subprocess.Popen[bytes]
    base: str

    @property
    def events_url(self) -> str:
        return self.base + "/slack/events"

    def kill(self) -> None:
        """Die without warning, as a replica does when its node goes away."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=20)


@contextlib.contextmanager
def bot_process(
    config: Path,
    slack_url: str,
    data_dir: Path,
    *,
    secret: str = "process-secret",
    extra_env: Mapping[str, str] | None = None,
    startup_s: float = 60.0,
) -> Iterator[BotProcess]:
    port = free_port()
    data_dir.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "SLACK_BOT_TOKEN": "xoxb-process",
        "SLACK_SIGNING_SECRET": secret,
        "RAYDIAG_CONFIG": str(config),
        "RAYDIAG_SLACK_API_URL": slack_url,
        "RAYDIAG_DATA_DIR": str(data_dir),
        **(extra_env or {}),
    }
    env.pop("SLACK_APP_TOKEN", None)
    log = data_dir / f"serve-{port}.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "bot", "serve", "--http", "--host", "127.0.0.1", "--port", str(port)],
            cwd=REPO,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    running = BotProcess(process, f"http://127.0.0.1:{port}")
    try:
        deadline = time.monotonic() + startup_s
        while time.monotonic() < deadline and process.poll() is None:
            try:
                with urllib.request.urlopen(running.base + "/healthz", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                time.sleep(0.2)
        if process.poll() is not None:
            raise AssertionError(f"raydiag serve exited during start-up:\n{log.read_text()[-3000:]}")
        yield running
    finally:
        stop(process)
