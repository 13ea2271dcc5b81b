"""Load and soak of the Slack bot as a real process, against the compound incident, on loopback.

Two parts (issue 7):

* **burst**: 50 signed `/raydiag` commands and 20 button presses (re-run, head check, ray status)
  sent at once; every ack is timed, and every request must end in an answer (its thread, its
  probe result, or a "busy"/"queued"/"already running" note);
* **soak**: one `/raydiag` a second for ``--soak-minutes`` (30 by default), bounded in time and
  count; the bot's resident memory is read from ``/proc/<pid>/status`` every 10 s.

The bot is `raydiag serve --http` in its own process (so its RSS is its own); the Kubernetes API
server serving the compound scenario and the Slack Web API stand-in run in this process. The
dashboard URL is a closed loopback port, so each diagnosis also reports an unreachable dashboard.

    .venv/bin/python benchmarks/bench_load.py [--soak-minutes 30] [--markdown RELIABILITY.md]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import yaml  # noqa: E402

from benchmarks.bench_slack import compound  # noqa: E402
from benchmarks.markdown_block import write_block  # noqa: E402
from bot.render.slack import ACTION_HEAD_CHECK, ACTION_RAY_STATUS, ACTION_RERUN  # noqa: E402
from tests.support.bot_process import BotProcess, bot_process, free_port  # noqa: E402
from tests.support.cluster import CLUSTER, NS  # noqa: E402
from tests.support.kube_api import ObjectStore, serve  # noqa: E402
from tests.support.slack_api import (  # noqa: E402
    SlackWebAPI,
    block_actions_body,
    post_signed,
    serve_slack,
    slash_command_body,
)

SECRET = "load-secret"
MARK_START = "<!-- bench-load:start -->"
MARK_END = "<!-- bench-load:end -->"
CLUSTERS = 5
PRESSES = (ACTION_RERUN, ACTION_HEAD_CHECK, ACTION_RAY_STATUS)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))] if ordered else float("nan")


@dataclass
class Requests:
    """What was sent where, and how long each ack took; answers are read from the Slack stand-in."""

    sent: dict[str, float] = field(default_factory=dict)  # channel -> time sent
    acks: list[float] = field(default_factory=list)
    failed_acks: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def send(self, channel: str, url: str, body: str) -> None:
        with self.lock:
            self.sent[channel] = time.time()
        started = time.monotonic()
        try:
            answer = post_signed(url, body, SECRET)
            status = answer.status
        except OSError as error:
            status = 0
            with self.lock:
                self.failed_acks.append(f"{channel}: {error}")
        elapsed = time.monotonic() - started
        with self.lock:
            self.acks.append(elapsed)
            if status != 200 and status:
                self.failed_acks.append(f"{channel}: HTTP {status}")


def answers(slack: SlackWebAPI, requests: Requests, needed: Callable[[str], int]) -> dict[str, float]:
    """Channel -> time of its answer, for the channels that got as many messages as they need."""
    count: dict[str, int] = {}
    last: dict[str, float] = {}
    for call in slack.calls:
        if call.method == "response_url":
            channel = call.path.rsplit("/", 1)[-1]
        elif call.method in ("chat.postMessage", "chat.postEphemeral"):
            channel = str(call.params.get("channel") or "")
        else:
            continue
        if channel in requests.sent:
            count[channel] = count.get(channel, 0) + 1
            last[channel] = max(last.get(channel, 0.0), call.time)
    return {c: t for c, t in last.items() if count[c] >= needed(c)}


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def write_config(tmp: Path, kubeconfig: Path) -> Path:
    clusters = [
        {
            "name": f"gpu-{i}",
            "namespace": NS,
            "raycluster": CLUSTER,
            "kubeconfig": str(kubeconfig),
            "context": "loopback",
            "dashboard_url": f"http://127.0.0.1:{free_port()}",
        }
        for i in range(CLUSTERS)
    ]
    path = tmp / "raydiag.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "clusters": clusters,
                "collection": {"deadline_s": 20, "call_timeout_s": 5},
                "state": {"url": f"sqlite:///{tmp}/state.db"},
            }
        ),
        encoding="utf-8",
    )
    return path


def burst(bot: BotProcess, slack: SlackWebAPI, commands: int, presses: int) -> dict[str, Any]:
    requests = Requests()
    url = bot.events_url

    def command(index: int) -> None:
        channel = f"C0BURST{index:04d}"
        body = slash_command_body(
            text=f"gpu-{index % CLUSTERS}",
            channel_id=channel,
            user_id=f"U0LOAD{index:04d}",
            response_url=slack.response_url(channel),
        )
        requests.send(channel, url, body)

    def press(index: int) -> None:
        channel = f"C0PRESS{index:04d}"
        action = PRESSES[index % len(PRESSES)]
        body = block_actions_body(
            action,
            value=json.dumps({"cluster": f"gpu-{index % CLUSTERS}"}),
            user_id=f"U0PRESS{index:03d}",
            channel_id=channel,
            message_ts=f"1733000000.{index:06d}",
        )
        requests.send(channel, url, body)

    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=commands + presses) as pool:
        for index in range(commands):
            pool.submit(command, index)
        for index in range(presses):
            pool.submit(press, index)

    # A command is answered by its thread or a note; a press by its announcement and its result.
    def needed(channel: str) -> int:
        return 2 if channel.startswith("C0PRESS") else 1

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(answers(slack, requests, needed)) < commands + presses:
        time.sleep(0.2)
    time.sleep(2)
    done = answers(slack, requests, needed)
    totals = [done[c] - requests.sent[c] for c in done]
    return {
        "commands": commands,
        "presses": presses,
        "acks": requests.acks,
        "failed_acks": requests.failed_acks,
        "answered": len(done),
        "lost": sorted(set(requests.sent) - set(done)),
        "totals": totals,
        "wall_s": time.monotonic() - started,
    }


def soak(bot: BotProcess, slack: SlackWebAPI, minutes: float, rate: float) -> dict[str, Any]:
    requests = Requests()
    url = bot.events_url
    samples: list[tuple[float, int]] = []
    count = int(minutes * 60 * rate)
    started = time.monotonic()
    next_sample = started
    with ThreadPoolExecutor(max_workers=16) as pool:
        for index in range(count):
            due = started + index / rate
            while (now := time.monotonic()) < due:
                if now >= next_sample:
                    samples.append((now - started, rss_kib(bot.process.pid)))
                    next_sample += 10
                time.sleep(min(0.05, due - now))
            channel = f"C0SOAK{index:05d}"
            body = slash_command_body(
                text=f"gpu-{index % CLUSTERS}",
                channel_id=channel,
                user_id="U0SOAK0001",
                response_url=slack.response_url(channel),
            )
            pool.submit(requests.send, channel, url, body)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(answers(slack, requests, lambda _: 1)) < count:
        time.sleep(0.5)
    samples.append((time.monotonic() - started, rss_kib(bot.process.pid)))
    done = answers(slack, requests, lambda _: 1)
    totals = [done[c] - requests.sent[c] for c in done]
    return {
        "minutes": minutes,
        "rate": rate,
        "requests": count,
        "acks": requests.acks,
        "failed_acks": requests.failed_acks,
        "answered": len(done),
        "lost": sorted(set(requests.sent) - set(done))[:20],
        "totals": totals,
        "rss": samples,
    }


def _ms(values: list[float], share: float) -> str:
    return f"{percentile(values, share) * 1000:.0f} ms"


def _s(values: list[float], share: float) -> str:
    return f"{percentile(values, share):.2f} s"


def report(burst_result: dict[str, Any], soak_result: dict[str, Any], command: str) -> str:
    b, s = burst_result, soak_result
    rss = [kib for _, kib in s["rss"]]
    window = max(1, len(rss) // 6)
    early, late = statistics.mean(rss[:window]), statistics.mean(rss[-window:])
    drift = (late - early) / early * 100 if early else float("nan")
    lines = [
        MARK_START,
        f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC with `{command}`; the bot is `raydiag serve --http` "
        "in its own process (2-core machine, shared).",
        "",
        "| part | requests | acked | ack p50 / p95 / p99 / max | answered | lost | answer p50 / p95 / p99 / max |",
        "|---|--:|--:|---|--:|--:|---|",
        f"| burst: {b['commands']} `/raydiag` + {b['presses']} button presses at once | "
        f"{b['commands'] + b['presses']} | {len(b['acks']) - len(b['failed_acks'])} | "
        f"{_ms(b['acks'], 0.5)} / {_ms(b['acks'], 0.95)} / {_ms(b['acks'], 0.99)} / {_ms(b['acks'], 1.0)} | "
        f"{b['answered']} | {len(b['lost'])} | "
        f"{_s(b['totals'], 0.5)} / {_s(b['totals'], 0.95)} / {_s(b['totals'], 0.99)} / {_s(b['totals'], 1.0)} |",
        f"| soak: {s['rate']:g} `/raydiag` a second for {s['minutes']:g} min | {s['requests']} | "
        f"{len(s['acks']) - len(s['failed_acks'])} | "
        f"{_ms(s['acks'], 0.5)} / {_ms(s['acks'], 0.95)} / {_ms(s['acks'], 0.99)} / {_ms(s['acks'], 1.0)} | "
        f"{s['answered']} | {s['requests'] - s['answered']} | "
        f"{_s(s['totals'], 0.5)} / {_s(s['totals'], 0.95)} / {_s(s['totals'], 0.99)} / {_s(s['totals'], 1.0)} |",
        "",
        f"Bot RSS during the soak (every 10 s, {len(rss)} samples): first sixth {early / 1024:.0f} MiB, last "
        f"sixth {late / 1024:.0f} MiB ({drift:+.1f}%), peak {max(rss) / 1024:.0f} MiB. Failed acks: "
        f"{len(b['failed_acks']) + len(s['failed_acks'])}. Targets: zero lost answers, every ack under 3 s, "
        f"RSS stable within 10% — "
        + (
            "met."
            if not b["lost"]
            and s["answered"] == s["requests"]
            and max(b["acks"] + s["acks"]) < 3
            and abs(drift) <= 10
            and not (b["failed_acks"] or s["failed_acks"])
            else "NOT met."
        ),
        MARK_END,
    ]
    return "\n".join(lines)


def write_markdown(path: Path, block: str) -> None:
    write_block(path, block, MARK_START, MARK_END, heading="## Load and soak")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commands", type=int, default=50)
    parser.add_argument("--presses", type=int, default=20)
    parser.add_argument("--soak-minutes", type=float, default=30.0)
    parser.add_argument("--rate", type=float, default=1.0, help="soak commands per second")
    parser.add_argument("--markdown", type=Path, help="write the results block into this file")
    args = parser.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="raydiag-load-"))
    with serve_slack() as slack, serve(ObjectStore.from_bundle(compound())) as kube:
        config = write_config(tmp, kube.kubeconfig(tmp / "kubeconfig"))
        with bot_process(config, slack.url, tmp / "data", secret=SECRET) as bot:
            burst_result = burst(bot, slack, args.commands, args.presses)
            print(f"burst: answered {burst_result['answered']}, lost {burst_result['lost']}", flush=True)
            slack.clear()
            soak_result = soak(bot, slack, args.soak_minutes, args.rate)
    command = "benchmarks/bench_load.py " + " ".join(argv if argv is not None else sys.argv[1:])
    block = report(burst_result, soak_result, command.strip())
    print(block)
    if args.markdown:
        write_markdown(args.markdown, block)
    ok = "met." in block.splitlines()[-2]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
