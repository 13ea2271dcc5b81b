"""``make demo`` (``python -m bot.demo``): diagnose a real, deliberately broken Ray cluster.

    python -m bot.demo               # live: local Ray cluster + recorded KubeRay state
    python -m bot.demo --keep-logs   # the same, and keep the Ray logs under /tmp
    python -m bot.demo --paste       # explain the bundled paste (bot/examples/incident-paste.txt)

The live demo starts three raylets on loopback addresses (a CPU head, an A100 node and a T4 node;
the GPUs are logical), runs a broken workload on them, reads the Ray layer over the dashboard's
HTTP API exactly as ``raydiag diagnose`` does, pairs it with the recorded Kubernetes layer of the
KubeRay cluster those raylets stand for, and prints the diagnosis as the incident thread would
read it. The report goes to ``out/demo-diagnosis.json`` and the Slack Block Kit messages to
``out/demo-slack-thread.json``. Every process it started is stopped before it exits, also on
Ctrl-C, SIGTERM or an error.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from bot.catalogue import Catalogue, default_catalogue
from bot.classify import classify
from bot.collect.deadline import Deadline
from bot.collect.paste import parse_paste
from bot.collect.ray_dashboard import DashboardReader, read_ray_layer
from bot.deliver.blocks.thread import render_thread
from bot.demo import kuberay_state, workload
from bot.demo.local_ray import DEMO_NODES, ClusterError, Interrupted, LocalCluster, http_json
from bot.diagnosis import Diagnosis
from bot.read.ray_json import ray_state
from bot.read.snapshot_file import snapshot_from_bundle
from bot.render.json_report import render_json
from bot.render.text_report import render_text
from bot.snapshot.model import Snapshot
from bot.snapshot.ray import RayState

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "incident-paste.txt"
OUT = Path("out")
READY_TIMEOUT_S = 120.0
DEMANDS_TIMEOUT_S = 30.0
POLL_S = 0.5


class Clock:
    """Seconds since the demo started, for progress lines and the closing figure."""

    def __init__(self) -> None:
        self.start = time.monotonic()

    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def say(self, message: str) -> None:
        print(f"[{self.elapsed():5.1f}s] {message}", file=sys.stderr, flush=True)


def _shown(path: Path) -> Path:
    here = Path.cwd()
    return path.relative_to(here) if path.is_relative_to(here) else path


# --- the paste demo (the original make demo) -----------------------------------------------------


def paste_demo(out: Path) -> int:
    catalogue = default_catalogue()
    diagnosis = classify(parse_paste(EXAMPLE.read_text(encoding="utf-8")))
    print(f"raydiag explain {_shown(EXAMPLE)}\n")
    print(render_text(diagnosis, catalogue, "en"))
    out.mkdir(parents=True, exist_ok=True)
    report = out / "demo-diagnosis.json"
    report.write_text(render_json(diagnosis, catalogue, "en") + "\n", encoding="utf-8")
    chinese = out / "demo-diagnosis.zh.txt"
    chinese.write_text(render_text(diagnosis, catalogue, "zh"), encoding="utf-8")
    print(f"JSON report: {report}; Chinese text: {chinese}", file=sys.stderr)
    return 0


# --- the live demo -------------------------------------------------------------------------------


def _wait_for_driver(cluster: LocalCluster, log_name: str, clock: Clock) -> None:
    """Until the workload prints READY; its own failure ends the demo with its log's tail."""
    driver = cluster.procs[-1]
    log = cluster.temp_dir / log_name
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        text = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
        if any(line.strip() == workload.READY for line in text.splitlines()):
            clock.say("workload running: gpu-holder holds the A100; 2 tasks and gpu-waiter wait")
            return
        if driver.poll() is not None:
            tail = "\n".join(text.splitlines()[-15:])
            raise ClusterError(f"the workload exited with {driver.returncode}:\n{tail}")
        time.sleep(POLL_S / 2)
    raise ClusterError(f"the workload was not ready within {READY_TIMEOUT_S:g}s; see {log}")


def demands_seen(state: RayState) -> bool:
    """Ray's autoscaler report lists the three stuck shapes (it publishes every few seconds)."""
    shapes = [d.largest_single_request for d in state.demands]
    return (
        any(s.get("GPU", 0.0) >= 4 for s in shapes)
        and any("accelerator_type:H100" in s for s in shapes)
        and any("accelerator_type:A100" in s for s in shapes)
    )


def _wait_for_demands(cluster: LocalCluster, clock: Clock) -> None:
    deadline = time.monotonic() + DEMANDS_TIMEOUT_S
    while time.monotonic() < deadline:
        status, body = http_json(cluster.dashboard_url, "/api/cluster_status", timeout=5)
        if status == 200 and demands_seen(ray_state({"cluster_status": body})):
            clock.say("Ray's autoscaler report shows the pending demands")
            return
        time.sleep(POLL_S)
    clock.say(f"the pending demands did not show within {DEMANDS_TIMEOUT_S:g}s; diagnosing anyway")


def collect(cluster: LocalCluster, clock: Clock) -> Snapshot:
    """Ray live over the dashboard, Kubernetes from the recorded bundle: one snapshot."""
    recorded = snapshot_from_bundle(kuberay_state.load_state())
    clock.say(f"reading Ray: dashboard {cluster.dashboard_url}")
    reader = DashboardReader(cluster.dashboard_url, Deadline(20.0), call_timeout=8.0)
    ray = read_ray_layer(reader)
    clock.say(f"read {reader.requests} dashboard endpoints ({reader.bytes_read // 1024} KiB)")
    return Snapshot(
        cluster=kuberay_state.CLUSTER,
        namespace=kuberay_state.NAMESPACE,
        collected_at=datetime.now(UTC),
        origin="live",
        kubernetes=recorded.kubernetes,
        ray=ray,
        errors=[*recorded.errors, *reader.errors],
        notes=[
            f"Ray layer read live from the local cluster's dashboard ({cluster.dashboard_url}); "
            f"Kubernetes layer from the recorded state of RayCluster {kuberay_state.CLUSTER} "
            f"({_shown(kuberay_state.STATE_FILE)})."
        ],
    )


def write_outputs(diagnosis: Diagnosis, catalogue: Catalogue, out: Path) -> list[str]:
    """Write the JSON report and the Slack thread; returns the lines to print about them."""
    out.mkdir(parents=True, exist_ok=True)
    report = out / "demo-diagnosis.json"
    report.write_text(render_json(diagnosis, catalogue, "en") + "\n", encoding="utf-8")
    chinese = out / "demo-diagnosis.zh.txt"
    chinese.write_text(render_text(diagnosis, catalogue, "zh"), encoding="utf-8")
    lines = [f"JSON report: {report}; Chinese text: {chinese}"]
    # Root message first, then one reply per finding: what the bot posts in the incident thread.
    messages = render_thread(diagnosis, catalogue, "en")
    thread = out / "demo-slack-thread.json"
    thread.write_text(json.dumps(messages, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    lines.append(f"Slack thread ({len(messages)} Block Kit messages): {thread}")
    return lines


def _run(cluster: LocalCluster, catalogue: Catalogue, out: Path, clock: Clock) -> list[str]:
    clock.say(f"Ray temp dir (removed at the end unless --keep-logs): {cluster.temp_dir}")
    cluster.start()
    log_name = "workload.log"
    clock.say("starting the broken workload (a Ray driver of its own)")
    driver = [sys.executable, "-m", "bot.demo.workload", "--address", cluster.gcs_address]
    cluster.spawn([*driver, "--node-ip", cluster.head_ip], log_name)
    _wait_for_driver(cluster, log_name, clock)
    _wait_for_demands(cluster, clock)
    snapshot = collect(cluster, clock)
    diagnosis = classify(snapshot, catalogue)
    print(
        f"$ raydiag diagnose --cluster {kuberay_state.CLUSTER} --namespace {kuberay_state.NAMESPACE} "
        f"--dashboard-url {cluster.dashboard_url}   # Kubernetes half: {_shown(kuberay_state.STATE_FILE)}\n"
    )
    print(render_text(diagnosis, catalogue, "en"), flush=True)
    outputs = write_outputs(diagnosis, catalogue, out)
    clock.say(f"stopping the {len(cluster.procs)} processes the demo started")
    return outputs


def live_demo(out: Path, keep_logs: bool, clock: Clock) -> int:
    catalogue = default_catalogue()
    head, *workers = DEMO_NODES
    print(
        f"raydiag demo: a real Ray cluster of {len(DEMO_NODES)} raylets ({head.ip} head, "
        + ", ".join(f"{n.ip} {next(iter(n.resources), 'CPU').split(':')[-1]}" for n in workers)
        + ", logical GPUs), a broken workload on it, and the recorded KubeRay state of "
        f"RayCluster {kuberay_state.CLUSTER} in {kuberay_state.NAMESPACE}.\n",
        flush=True,
    )
    cluster = LocalCluster(DEMO_NODES, say=clock.say)
    cluster.keep_logs = keep_logs
    outputs: list[str] = []
    left: list[int] = []
    try:
        with cluster:
            try:
                outputs = _run(cluster, catalogue, out, clock)
            except Exception:
                cluster.keep_logs = True  # for the post-mortem; the processes still stop
                raise
    except ClusterError as error:
        print(f"raydiag demo: {error}", file=sys.stderr)
        return 1
    finally:
        left = cluster.stragglers()
        if left:  # stop() SIGKILLs all it finds, so this would be a bug worth shouting about
            print(f"raydiag demo: processes still running after stop: {left}", file=sys.stderr)
    for line in outputs:
        print(line)
    stopped = "every process the demo started has stopped" if not left else f"{len(left)} process(es) left"
    print(f"Done in {clock.elapsed():.1f}s; {stopped}.")
    return 0 if not left else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bot.demo", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--paste", action="store_true", help="explain the bundled paste instead")
    parser.add_argument("--keep-logs", action="store_true", help="keep the Ray cluster's logs under /tmp")
    parser.add_argument("--out", type=Path, default=OUT, help="where to write the reports (default: out)")
    args = parser.parse_args(argv)
    if args.paste:
        return paste_demo(args.out)
    clock = Clock()
    try:
        return live_demo(args.out, args.keep_logs, clock)
    except (KeyboardInterrupt, Interrupted):
        print(f"\nraydiag demo: interrupted after {clock.elapsed():.1f}s; everything it started is stopped.")
        return 130


if __name__ == "__main__":
    sys.exit(main())
