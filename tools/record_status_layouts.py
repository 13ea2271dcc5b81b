"""Record ``ray status`` layouts whose figures are easy to misread, as cases of ``tests/read/ray-status/``.

    .venv/bin/python tools/record_status_layouts.py          # both autoscalers, and the empty layouts
    .venv/bin/python tools/record_status_layouts.py --autoscaler v2 --bundles 3

Why: two parts of ``ray status`` look like something they are not. ``From request_resources:`` (and
its older titles) lists the bundles ``ray.autoscaler.sdk.request_resources()`` asked the autoscaler
to keep room for: a standing constraint, no work waiting, however large. And a cluster with no node
prints ``(no active nodes)`` and an empty ``Total Usage:``: a count of 0, not a status that says
nothing. Both are recorded here from Ray itself:

* a real local cluster per autoscaler version (a CPU head on 127.0.0.2, one-GPU workers on 127.0.0.3
  and 127.0.0.4; GPUs are logical, Ray trusts ``--num-gpus``) where a driver calls
  ``request_resources(bundles=[{"GPU": 1}] * N)`` with more bundles than GPUs and then only waits;
  the real ``ray status`` and ``ray status -v`` are recorded, and the driver's output, where
  autoscaler v2 echoes ``No available node types can fulfill cluster constraint: ...`` (into
  ``tests/read/loose-lines/``). Everything is stopped by PID through
  :class:`bot.demo.local_ray.LocalCluster` (never ``ray stop``).
* the empty layouts: no cluster can be started without its head node, so Ray's own formatters
  (v1 ``format_info_string``, v2 ``ClusterStatusFormatter.format``) render an autoscaler report
  with no node, as ``ray status -v`` would print it.

Each case's summary is then written with ``tools/read_cases.py``; review both before committing.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # run as a script from anywhere: bot/ is importable without install
    sys.path.insert(0, str(REPO))

from bot.demo.local_ray import RAY, LocalCluster, NodeSpec, http_json, log  # noqa: E402

OUT = REPO / "tests" / "read" / "ray-status"
LOOSE = REPO / "tests" / "read" / "loose-lines"
STATUS_PATH = "/api/cluster_status?format=1"
SHOW_S = 90.0
# How long the driver's output is watched for the autoscaler's message about the constraint (v2
# sends one every few seconds; v1 sends none about constraints).
ECHO_S = 20.0

CLUSTER = [
    NodeSpec("127.0.0.2", num_cpus=2, labels={"node-group": "head"}),
    NodeSpec("127.0.0.3", num_cpus=2, num_gpus=1, labels={"node-group": "gpu"}),
    NodeSpec("127.0.0.4", num_cpus=2, num_gpus=1, labels={"node-group": "gpu"}),
]

# A driver that sets the constraint and waits, printing what Ray echoes to drivers; it is stopped
# with the cluster (request_resources() would outlive it anyway).
REQUEST = (
    "import sys, time, ray\n"
    "from ray.autoscaler.sdk import request_resources\n"
    "ray.init(address=sys.argv[1])\n"
    "request_resources(bundles=[{'GPU': 1}] * int(sys.argv[2]))\n"
    "time.sleep(300)\n"
)
ECHO = "No available node types can fulfill cluster constraint"


def _status_text(cluster: LocalCluster) -> str:
    _, body = http_json(cluster.dashboard_url, STATUS_PATH, timeout=10)
    data = body.get("data") if isinstance(body, dict) else None
    text = data.get("clusterStatus") if isinstance(data, dict) else None
    return text if isinstance(text, str) else ""


def _ray_status(cluster: LocalCluster, verbose: bool) -> str:
    args = [str(RAY) if RAY.exists() else "ray", "status", f"--address={cluster.gcs_address}"]
    if verbose:
        args.append("-v")
    done = subprocess.run(args, env=cluster.env, capture_output=True, text=True, timeout=120, check=False)
    return done.stdout


def record_requests(autoscaler: str, bundles: int) -> list[Path]:
    env = {"RAY_enable_autoscaler_v2": "1"} if autoscaler == "v2" else {}
    written: list[Path] = []
    with LocalCluster(CLUSTER, extra_env=env, temp_prefix="rdlay-") as cluster:
        cluster.start()
        log_name = "request-driver.log"
        # Owned by the cluster (own session, stopped by PID with it); unbuffered, as a terminal shows it.
        driver = cluster.spawn(
            [sys.executable, "-u", "-c", REQUEST, cluster.gcs_address, str(bundles)], log_name
        )
        needle = f": {bundles} from request_resources()"
        deadline = time.monotonic() + SHOW_S
        while needle not in _status_text(cluster):
            if time.monotonic() > deadline or driver.poll() is not None:
                raise SystemExit(f"autoscaler {autoscaler}: the constraint did not show within {SHOW_S:g}s")
            time.sleep(1.0)
        for verbose in (False, True):
            text = _ray_status(cluster, verbose)
            if needle not in text:
                raise SystemExit(f"autoscaler {autoscaler}: `ray status` did not show the constraint")
            suffix = "-v" if verbose else ""
            path = OUT / f"{autoscaler}-request-resources-gpu1x{bundles}-ray-status{suffix}.txt"
            path.write_text(text, encoding="utf-8")
            written.append(path)
            log(f"wrote {path.relative_to(REPO)}")
        deadline = time.monotonic() + ECHO_S
        output = ""
        while time.monotonic() < deadline and output.count(ECHO) < 2:
            time.sleep(1.0)
            output = (cluster.temp_dir / log_name).read_text(encoding="utf-8", errors="replace")
        if ECHO in output:
            path = LOOSE / f"{autoscaler}-request-resources-gpu1x{bundles}-driver-output.txt"
            path.write_text(output, encoding="utf-8")
            written.append(path)
            log(f"wrote {path.relative_to(REPO)}")
    return written


def render_empty() -> list[Path]:
    """What each autoscaler's formatter prints for a report with no node (verbose, as ``-v``)."""
    # Imported here: recording a cluster needs only the `ray` command, not Ray in this interpreter.
    from ray.autoscaler._private.autoscaler import AutoscalerSummary  # noqa: PLC0415
    from ray.autoscaler._private.util import LoadMetricsSummary, format_info_string  # noqa: PLC0415
    from ray.autoscaler.v2.schema import ClusterStatus  # noqa: PLC0415
    from ray.autoscaler.v2.utils import ClusterStatusFormatter  # noqa: PLC0415

    v1 = format_info_string(
        LoadMetricsSummary(usage={}, resource_demand=[], pg_demand=[], request_demand=[], node_types=[]),
        # The v1 monitor's own summary of a cluster without a cluster config is "legacy".
        AutoscalerSummary(
            active_nodes={},
            idle_nodes=None,
            pending_nodes=[],
            pending_launches={},
            failed_nodes=[],
            legacy=True,
        ),
        verbose=True,
    )
    v2 = ClusterStatusFormatter.format(ClusterStatus(), verbose=True)
    written = []
    for name, text in (("v1", v1), ("v2", v2)):
        path = OUT / f"{name}-no-nodes-ray-status-v.txt"
        path.write_text(text + "\n", encoding="utf-8")
        written.append(path)
        log(f"wrote {path.relative_to(REPO)}")
    return written


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--autoscaler", choices=("v1", "v2"), action="append")
    parser.add_argument("--bundles", type=int, default=4, help="one-GPU bundles to request (default 4)")
    parser.add_argument("--no-empty", action="store_true", help="skip the empty layouts")
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for autoscaler in args.autoscaler or ["v1", "v2"]:
        written += record_requests(autoscaler, max(1, min(args.bundles, 64)))
    if not args.no_empty:
        written += render_empty()
    names = " ".join(str(path.relative_to(REPO)) for path in written)
    log(f"write the summaries: .venv/bin/python tools/read_cases.py {names}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
