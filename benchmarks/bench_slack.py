"""Load test of the Slack bot: N concurrent /raydiag commands against the compound scenario.

Everything is on loopback: the bot's threaded HTTP endpoint, a Slack Web API stand-in, and the
Kubernetes API server serving the compound incident (pending GPU worker, worker that never joined,
GPU-type demand). Measures the time to acknowledge each command and the time until its whole thread
(root plus one reply per finding) has been posted.

    .venv/bin/python benchmarks/bench_slack.py [--commands 50] [--clusters 5]
    .venv/bin/python benchmarks/bench_slack.py --sequential 20

``--sequential N`` sends N commands one after another, each after the previous thread is complete,
and reports how long after each command its root message and its whole thread were posted (the
latency one person sees, not the load).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import yaml

from bot.config import load_config
from bot.slack.app import build_app
from bot.slack.bot import Bot
from bot.slack.server import SlackHTTPServer
from tests.support import scenarios
from tests.support.cluster import CLUSTER, GPU_WORKERS, NS
from tests.support.kube_api import ObjectStore, serve
from tests.support.slack_api import post_signed, serve_slack, slash_command_body

SECRET = "load-secret"


def compound() -> scenarios.Bundle:
    bundle = scenarios.third_gpu_worker_no_free_gpu()
    scenarios._drop_ray_node(bundle, GPU_WORKERS[1])
    return scenarios._with_demand(bundle, {"GPU": 1.0, "accelerator_type:H100": 0.001}, 2)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--commands", type=int, default=50)
    parser.add_argument(
        "--clusters", type=int, default=5, help="distinct configured names for the same cluster"
    )
    parser.add_argument("--sequential", type=int, default=0, help="one command at a time, this many")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="raydiag-load-"))
    with serve_slack() as slack, serve(ObjectStore.from_bundle(compound())) as kube:
        kubeconfig = kube.kubeconfig(tmp / "kubeconfig")
        clusters = [
            {
                "name": f"gpu-{i}",
                "namespace": NS,
                "raycluster": CLUSTER,
                "kubeconfig": str(kubeconfig),
                "context": "loopback",
                "dashboard_url": "http://127.0.0.1:9",
            }
            for i in range(args.clusters)
        ]
        path = tmp / "raydiag.yaml"
        path.write_text(yaml.safe_dump({"clusters": clusters, "collection": {"deadline_s": 20}}))
        config = load_config(path)
        bot = Bot(config=config)  # the live collector, as the service runs it
        server = SlackHTTPServer(
            build_app(bot, token="xoxb-load", signing_secret=SECRET, api_url=slack.url), "127.0.0.1", 0
        )
        server.start_background()
        url = server.url + "/slack/events"
        if args.sequential:
            try:
                return sequential(url, slack, args.sequential)
            finally:
                server.shutdown()
                bot.runs.shutdown()
        acks: list[float] = []
        sent: dict[str, float] = {}
        lock = threading.Lock()

        def one(index: int) -> None:
            channel = f"C0LOAD{index:04d}"
            body = slash_command_body(
                text=f"gpu-{index % args.clusters}",
                channel_id=channel,
                user_id=f"U0LOAD{index:04d}",
                response_url=slack.response_url(channel),
            )
            with lock:
                sent[channel] = time.time()
            started = time.monotonic()
            answer = post_signed(url, body, SECRET)
            with lock:
                acks.append(time.monotonic() - started)
            assert answer.status == 200, answer.status

        started = time.monotonic()
        with ThreadPoolExecutor(max_workers=args.commands) as pool:
            list(pool.map(one, range(args.commands)))

        def finished() -> dict[str, float]:
            """Channel -> time of its last message: the full thread, or the 'already running' note."""
            last: dict[str, float] = {}
            for call in slack.calls:
                channel = (
                    call.path.rsplit("/", 1)[-1]
                    if call.method == "response_url"
                    else str(call.params.get("channel") or "")
                )
                if channel in sent and call.method in ("chat.postMessage", "response_url"):
                    last[channel] = max(last.get(channel, 0.0), call.time)
            return last

        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and len(finished()) < args.commands:
            time.sleep(0.2)
        time.sleep(3)  # replies still being posted under the last roots
        done = finished()
        wall = time.monotonic() - started
        server.shutdown()
        bot.runs.shutdown()
    answered = len(done)
    totals = [done[ch] - sent[ch] for ch in done]
    print(f"commands: {args.commands}, distinct clusters: {args.clusters}")
    print(
        f"acked: {len(acks)}; ack p50 {statistics.median(acks) * 1000:.0f} ms, p95 {percentile(acks, 0.95) * 1000:.0f} ms,"
        f" max {max(acks) * 1000:.0f} ms"
    )
    print(
        f"answered: {answered}/{args.commands}; time to full thread p50 {statistics.median(totals):.2f} s,"
        f" p95 {percentile(totals, 0.95):.2f} s, max {max(totals):.2f} s; wall {wall:.1f} s"
    )
    return 0 if answered == args.commands and max(acks) < 3 else 1


def sequential(url: str, slack: object, runs: int) -> int:
    """Each command alone: seconds from sending it to its root message and to its last reply."""
    roots: list[float] = []
    threads: list[float] = []
    for index in range(runs):
        channel = f"C0SEQ{index:04d}"
        body = slash_command_body(
            text="gpu-0",
            channel_id=channel,
            user_id="U0SEQ0001",
            response_url=slack.response_url(channel),  # type: ignore[attr-defined]
        )
        sent = time.time()
        assert post_signed(url, body, SECRET).status == 200
        posts: list[float] = []
        quiet_since = give_up = time.monotonic()
        # Complete: posted, and no new reply for a second (at most 60 s per command).
        while (not posts or time.monotonic() - quiet_since < 1.0) and time.monotonic() - give_up < 60:
            time.sleep(0.05)
            now = [
                c.time
                for c in slack.calls  # type: ignore[attr-defined]
                if c.method == "chat.postMessage" and c.params.get("channel") == channel
            ]
            if len(now) != len(posts):
                posts, quiet_since = now, time.monotonic()
        if not posts:
            print(f"command {index}: nothing posted within 60 s")
            return 1
        roots.append(min(posts) - sent)
        threads.append(max(posts) - sent)
    print(f"sequential commands: {runs}")
    print(
        f"root message: p50 {statistics.median(roots):.2f} s, p95 {percentile(roots, 0.95):.2f} s, "
        f"max {max(roots):.2f} s"
    )
    print(
        f"whole thread: p50 {statistics.median(threads):.2f} s, p95 {percentile(threads, 0.95):.2f} s, "
        f"max {max(threads):.2f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
