"""`raydiag diagnose --cluster` against the guide's quick checks typed by hand, on one cluster, in one run.

Run from the repository root::

    .venv/bin/python benchmarks/bench_cluster_cli.py                      # 10 interleaved runs
    .venv/bin/python benchmarks/bench_cluster_cli.py --markdown BENCHMARKS.md

The cluster is the compound scenario of the demo and of ``tests/integration/test_live_ray.py``: a
real Ray cluster of four raylets on loopback addresses (``bot.demo.local_ray``) running the demo's
broken workload, and the demo's recorded KubeRay state served by the loopback Kubernetes API
server (``tests/support/kube_api.py``), which ``kubectl`` and the official client both talk to.

Each run times, as separate processes and one after the other:

- ``raydiag diagnose --cluster … --format text`` (``python -m bot``, what the ``raydiag`` script runs);
- the manual sequence, each command as its own process: ``kubectl get raycluster,pods``,
  ``kubectl describe pod`` of the pending worker, ``kubectl get events``, ``kubectl get nodes``,
  ``kubectl get svc,endpoints``, ``kubectl logs`` of the head, and ``ray status``. Its time is the
  sum of the commands' wall times: the machine's share only, nothing for reading or typing.

The runs alternate, so a busy spell lands on both. A last run in a fresh process times the steps of
``diagnose --cluster`` itself: imports, each Kubernetes and dashboard call (calls that overlap are
each timed on their own), classify and render.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.markdown_block import write_block  # noqa: E402
from bot.collect.deadline import Deadline  # noqa: E402
from bot.collect.ray_dashboard import DashboardReader, collect_ray  # noqa: E402
from bot.demo import kuberay_state as state  # noqa: E402
from bot.demo.__main__ import demands_seen  # noqa: E402
from bot.demo.local_ray import LocalCluster, running_cluster  # noqa: E402
from bot.read.ray_json import ray_state  # noqa: E402
from tests.support.cluster import Bundle  # noqa: E402
from tests.support.kube_api import ObjectStore, serve  # noqa: E402

MARK_START = "<!-- bench-cluster-cli:start -->"
MARK_END = "<!-- bench-cluster-cli:end -->"
HEADING = "## `diagnose --cluster` against the manual quick checks"
TARGET_S = 1.0
TARGET_RATIO = 0.5

# One fresh process: the steps of `raydiag diagnose --cluster`, each timed; one JSON line out.
BREAKDOWN = r"""
import json, sys, time
marks = [("start", time.perf_counter())]
def mark(name):
    marks.append((name, time.perf_counter()))
calls = []
import gc
gc.disable()  # as bot.cli.entrypoint runs every command
import bot.cli
from bot.catalogue import default_catalogue
from bot.config import Config
from bot.diagnoser import NO_METER, Diagnoser
from bot.collect import kubernetes as k8s, ray_dashboard as dash
mark("imports (cli, catalogue, config, Diagnoser with the classifier, collectors)")
catalogue = default_catalogue()
mark("catalogue from the cache")
send, get = k8s.KubernetesReader._send, dash.DashboardReader.get
def timed_send(self, call, timeout):
    begin = time.perf_counter()
    try:
        return send(self, call, timeout)
    finally:
        calls.append(("kubernetes " + call.describe(), begin, time.perf_counter()))
def timed_get(self, path):
    begin = time.perf_counter()
    try:
        return get(self, path)
    finally:
        calls.append(("dashboard GET " + path, begin, time.perf_counter()))
k8s.KubernetesReader._send, dash.DashboardReader.get = timed_send, timed_get
from bot.collect.live import Target, collect_live
kubeconfig, context, cluster, namespace, url = sys.argv[1:6]
target = Target(cluster=cluster, namespace=namespace, kubeconfig=kubeconfig, context=context, dashboard_url=url)
collect_begin = time.perf_counter()
snapshot = collect_live(target)
mark("collect both layers (wall; the Kubernetes client is imported here)")
diagnoser = Diagnoser(Config(), catalogue=catalogue, metrics=NO_METER)
diagnosis = diagnoser.judge(snapshot, "cli")
diagnoser.shutdown()
mark("classify (in the Diagnoser's pool)")
out = bot.cli.render(diagnosis, catalogue, "text", "en")
mark("render (text)")
steps = {name: end - begin for (_, begin), (name, end) in zip(marks, marks[1:])}
print(json.dumps({"steps": steps, "calls": [(n, b - collect_begin, e - b) for n, b, e in calls]}))
"""


def _wait_for_workload(cluster: LocalCluster, log_name: str, timeout: float = 180) -> None:
    log = cluster.temp_dir / log_name
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
        if "READY" in text.split():
            break
        if cluster.procs[-1].poll() is not None:
            raise SystemExit(f"the workload exited: {text[-2000:]}")
        time.sleep(0.5)
    else:
        raise SystemExit(f"the workload was not ready within {timeout:g}s")
    while time.monotonic() < deadline:  # Ray's autoscaler report lists the stuck demands
        if demands_seen(ray_state(collect_ray(DashboardReader(cluster.dashboard_url, Deadline(10))))):
            return
        time.sleep(1)
    raise SystemExit(f"Ray's autoscaler report did not list the workload's demands within {timeout:g}s")


@contextmanager
def compound_cluster() -> Iterator[tuple[LocalCluster, Path]]:
    """The real Ray cluster with the broken workload, and a kubeconfig for the loopback API server."""
    with running_cluster(say=lambda _: None) as cluster, tempfile.TemporaryDirectory() as tmp:
        driver = [sys.executable, "-m", "bot.demo.workload", "--address", cluster.gcs_address]
        cluster.spawn([*driver, "--node-ip", cluster.head_ip], "workload.log")
        _wait_for_workload(cluster, "workload.log")
        with serve(ObjectStore.from_bundle(Bundle.from_state(state.load_state()))) as api:
            yield cluster, api.kubeconfig(Path(tmp) / "kubeconfig")


def commands(cluster: LocalCluster, kubeconfig: Path) -> tuple[list[str], list[list[str]]]:
    kubectl = ["kubectl", "--kubeconfig", str(kubeconfig), "--context", "loopback"]
    ns = ["-n", state.NAMESPACE]
    raydiag = [
        sys.executable, "-m", "bot", "diagnose", "--cluster", state.CLUSTER, "--namespace", state.NAMESPACE,
        "--kubeconfig", str(kubeconfig), "--context", "loopback", "--dashboard-url", cluster.dashboard_url,
        "--format", "text",
    ]  # fmt: skip
    ray = str(Path(sys.executable).with_name("ray"))
    manual = [
        [*kubectl, "get", "raycluster,pods", *ns, "-o", "wide"],
        [*kubectl, "describe", "pod", state.A100_PENDING_POD, *ns],
        [*kubectl, "get", "events", *ns, "--sort-by=.lastTimestamp"],
        [*kubectl, "get", "nodes", "-L", "nvidia.com/gpu.product"],
        [*kubectl, "get", "svc,endpoints", *ns],
        [*kubectl, "logs", state.HEAD_POD, *ns, "--tail=200"],
        [ray, "status", "--address", cluster.gcs_address],
    ]
    return raydiag, manual


def _wall(argv: Sequence[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:4])} … exited {done.returncode}:\n{done.stderr.decode()[-2000:]}")
    return elapsed


def _label(argv: Sequence[str]) -> str:
    if Path(argv[0]).name == "ray":
        return "ray status"
    words = [w for w in argv[5:] if not w.startswith("-") and w not in (state.NAMESPACE,)]
    return "kubectl " + " ".join(words[:2])


def _environment(cluster: LocalCluster, bytecode: Path) -> dict[str, str]:
    """The cluster's environment, with Python's bytecode cached in a private directory, as it is for
    installed packages: raydiag, ``ray`` and the Kubernetes client alike."""
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX"}}
    env.update(cluster.env)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(bytecode)
    env["RAY_ADDRESS"] = cluster.gcs_address
    return env


def measure(runs: int) -> dict[str, Any]:
    with compound_cluster() as (cluster, kubeconfig), tempfile.TemporaryDirectory() as bytecode:
        raydiag, manual = commands(cluster, kubeconfig)
        env = _environment(cluster, Path(bytecode))
        _wall(raydiag, env)  # the catalogue cache and bytecode written once, as on a used machine
        for argv in manual:
            _wall(argv, env)
        ours: list[float] = []
        by_hand: list[float] = []
        each: dict[str, list[float]] = {_label(a): [] for a in manual}
        for _ in range(runs):
            ours.append(_wall(raydiag, env))
            total = 0.0
            for argv in manual:
                seconds = _wall(argv, env)
                each[_label(argv)].append(seconds)
                total += seconds
            by_hand.append(total)
        script = [
            sys.executable,
            "-c",
            BREAKDOWN,
            str(kubeconfig),
            "loopback",
            state.CLUSTER,
            state.NAMESPACE,
            cluster.dashboard_url,
        ]
        # The breakdown's own imports are timed, so it runs once first to cache their bytecode.
        subprocess.run(script, cwd=ROOT, env=env, capture_output=True, check=True)
        breakdown = subprocess.run(script, cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    return {
        "runs": runs,
        "raydiag": ours,
        "manual": by_hand,
        "manual_each": each,
        "breakdown": json.loads(breakdown.stdout.strip().splitlines()[-1]),
        "load": os.getloadavg()[0],
    }


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:,.0f} ms"


def render(result: dict[str, Any], command: str) -> str:
    ours, manual = result["raydiag"], result["manual"]
    ratio = statistics.median(ours) / statistics.median(manual)
    met = statistics.median(ours) <= TARGET_S and ratio <= TARGET_RATIO
    lines = [
        f"`{command}`, measured {datetime.now(UTC):%Y-%m-%d} on a {os.cpu_count()}-core machine "
        f"(1-minute load {result['load']:.2f} at the end), Python {platform.python_version()}. "
        f"{result['runs']} interleaved runs; each command is its own process.",
        "",
        "| | target | median | min | max |",
        "|---|--:|--:|--:|--:|",
        f"| `raydiag diagnose --cluster` | {_ms(TARGET_S)} | {_ms(statistics.median(ours))} | "
        f"{_ms(min(ours))} | {_ms(max(ours))} |",
        f"| the manual sequence (7 commands, summed) | - | {_ms(statistics.median(manual))} | "
        f"{_ms(min(manual))} | {_ms(max(manual))} |",
    ]
    for label, seconds in result["manual_each"].items():
        lines.append(f"| &nbsp;&nbsp;`{label}` | - | {_ms(statistics.median(seconds))} | {_ms(min(seconds))} | "
                     f"{_ms(max(seconds))} |")  # fmt: skip
    lines += [
        "",
        f"raydiag / manual (medians): **{ratio:.2f}** (target ≤ {TARGET_RATIO}); "
        + ("both targets met." if met else "not met."),
        "",
        "Where the time of `diagnose --cluster` goes (one fresh process; the interpreter's own start is not in it):",
        "",
        "| step | time |",
        "|---|--:|",
    ]
    lines += [f"| {name} | {_ms(seconds)} |" for name, seconds in result["breakdown"]["steps"].items()]
    lines += ["", "Each collection call (start after the collection began, and its duration):", "",
              "| call | start | time |", "|---|--:|--:|"]  # fmt: skip
    lines += [
        f"| {name} | {_ms(start)} | {_ms(took)} |" for name, start, took in result["breakdown"]["calls"]
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--markdown", type=Path, help="write the results block into this file")
    args = parser.parse_args(argv)
    result = measure(args.runs)
    block = render(
        result, "python benchmarks/bench_cluster_cli.py" + (f" --runs {args.runs}" if args.runs != 10 else "")
    )
    print(block)
    if args.markdown:
        write_block(
            args.markdown, f"{MARK_START}\n{block}\n{MARK_END}", MARK_START, MARK_END, heading=HEADING
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
