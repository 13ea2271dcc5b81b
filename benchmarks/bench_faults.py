"""Fault tolerance and hostile input: the figures of RELIABILITY.md.

Run from the repository root::

    .venv/bin/python benchmarks/bench_faults.py                            # print the tables
    .venv/bin/python benchmarks/bench_faults.py --markdown RELIABILITY.md  # and write them there
    .venv/bin/python benchmarks/bench_faults.py --pending 5000             # a shorter paginated list

It runs every case the hardening tests run (``tests/hardening/fault_matrix.py``: the Kubernetes
API and Ray dashboard fault matrices) and every 40,000-character paste of
``tests/hardening/big_pastes.py``, each in a fresh Python process of its own, so that the peak
resident set reported is that case's. The paginated-list cases read ``--pending`` unrelated
Pending Pods (default 20,000; the tests use 2,500). For the Kubernetes cases the loopback API
server runs in one more process, spawned by the case's, so neither its work nor its store counts
for the diagnosing process; the small recorded Ray dashboard runs in the case's process.

Per case: the collection's wall time against its deadline (the tests assert it stays under
deadline + 2 s), the requests the API server received, the sources the diagnosis reports as not
read, whether the cause the readable parts show is still named, and whether every promise of the
case held (``fault_matrix.broken_promises``). Per paste: the time to parse and classify it, the
``tracemalloc`` peak of that (measured in a second pass, since tracing slows it down) against the
64 MiB bound the tests assert, and what was recognised.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import multiprocessing
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.markdown_block import write_block  # noqa: E402

MARK_START = "<!-- bench-faults:start -->"
MARK_END = "<!-- bench-faults:end -->"
TITLE = "# Reliability"
MiB = 1024**2
DEFAULT_PENDING = 20_000
CASE_TIMEOUT_S = 600


def _max_rss() -> int:
    """Peak resident set of this process so far, in bytes (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def say(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------------
# One case, in its own process


def _kube_case(case_id: str, pending: int) -> Any:
    from tests.hardening.fault_matrix import KUBE_CASES

    case = next(c for c in KUBE_CASES if c.id == case_id)
    return dataclasses.replace(case, unrelated_pending=pending) if case.unrelated_pending else case


def serve_kube_case(case_id: str, pending: int, kubeconfig: str, conn: Connection) -> None:
    """The loopback API server of one case, in a process of its own, until told to stop."""
    from tests.hardening.fault_matrix import store_for
    from tests.support.kube_api import serve

    case = _kube_case(case_id, pending)
    store = store_for(case)
    with serve(store, faults=case.faults) as api:
        api.kubeconfig(kubeconfig)
        conn.send("ready")
        conn.recv()
    conn.send(api.requests.total)


def run_kube(case_id: str, pending: int) -> dict[str, Any]:
    from tests.hardening.fault_matrix import (
        Outcome,
        broken_promises,
        collect_and_classify,
        dashboard_url,
        refused_kubeconfig,
    )

    case = _kube_case(case_id, pending)
    requests = 0
    with tempfile.TemporaryDirectory() as folder, dashboard_url(case.dashboard) as url:
        server = None
        if case.api == "refused":
            kubeconfig = refused_kubeconfig(Path(folder))
        else:
            kubeconfig = Path(folder) / "kubeconfig"
            ours, theirs = multiprocessing.get_context("spawn").Pipe()
            server = multiprocessing.get_context("spawn").Process(
                target=serve_kube_case, args=(case.id, case.unrelated_pending, str(kubeconfig), theirs)
            )
            server.start()
            ours.recv()
        rss_before = _max_rss()
        snapshot, diagnosis, elapsed = collect_and_classify(case, kubeconfig, url)
        if server is not None:
            ours.send("stop")
            requests = ours.recv()
            server.join(30)
    outcome = Outcome(snapshot, diagnosis, elapsed, requests)
    named = [case.still_named] if case.still_named else []
    return {
        "id": case.id,
        "deadline_s": case.deadline_s,
        "elapsed_s": elapsed,
        "requests": requests,
        # The dashboard is a closed port in most cases; its error is the same in all of them.
        "not_read": sorted(s for s in outcome.unread_sources() if s.startswith("kubernetes")),
        "named": {rule: rule in outcome.rules for rule in named},
        "pods": len(snapshot.kubernetes.pods) if snapshot.kubernetes else 0,
        "problems": broken_promises(case, outcome),
        "rss_before": rss_before,
        "rss_peak": _max_rss(),
    }


def run_ray(case_id: str) -> dict[str, Any]:
    from tests.hardening.fault_matrix import DASHBOARD_CASES, broken_promises, run_dashboard_case

    case = next(c for c in DASHBOARD_CASES if c.id == case_id)
    outcome = run_dashboard_case(case)
    return {
        "id": case.id,
        "deadline_s": case.deadline_s,
        "elapsed_s": outcome.elapsed_s,
        "requests": outcome.requests,
        "not_read": sorted(outcome.unread_sources()),
        "named": {rule: rule in outcome.rules for rule in case.still_named},
        "problems": broken_promises(case, outcome),
        "rss_peak": _max_rss(),
    }


def run_paste(name: str) -> dict[str, Any]:
    from bot.classify import classify
    from bot.collect.paste import parse_paste
    from tests.hardening.big_pastes import BIG_PASTES, PEAK_BOUND_BYTES, measure

    text = BIG_PASTES[name]()
    classify(parse_paste("warm-up: the first call pays for imports and compiled regexes"))
    started = time.monotonic()
    snapshot = parse_paste(text)
    diagnosis = classify(snapshot)
    elapsed = time.monotonic() - started
    measured = measure(text)
    return {
        "id": name,
        "chars": len(text),
        "lines": text.count("\n") + 1,
        "elapsed_s": elapsed,
        "peak_bytes": measured.peak_bytes,
        "bound_bytes": PEAK_BOUND_BYTES,
        "recognised": snapshot.notes[:3],
        "findings": len(diagnosis.findings),
        "rss_peak": _max_rss(),
    }


def child_main(kind: str, case_id: str, pending: int) -> int:
    if kind == "kube":
        result = run_kube(case_id, pending)
    elif kind == "ray":
        result = run_ray(case_id)
    else:
        result = run_paste(case_id)
    print(json.dumps(result))
    return 0


# --------------------------------------------------------------------------------------------------
# The parent: every case, then the tables


def run_child(kind: str, case_id: str, pending: int) -> dict[str, Any]:
    command = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--child",
        kind,
        case_id,
        "--pending",
        str(pending),
    ]
    try:
        proc = subprocess.run(
            command, capture_output=True, text=True, timeout=CASE_TIMEOUT_S, cwd=ROOT, check=False
        )
    except subprocess.TimeoutExpired:
        return {"id": case_id, "failed": f"no result within {CASE_TIMEOUT_S}s"}
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return {"id": case_id, "failed": f"exit {proc.returncode}: {tail}"}
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def _mib(amount: float) -> str:
    return f"{amount / MiB:.1f}"


def _sources(sources: Sequence[str], shown: int = 4) -> str:
    if not sources:
        return "—"
    names = [s.removeprefix("kubernetes ").removeprefix("ray api ") for s in sources]
    more = f" (+{len(names) - shown} more)" if len(names) > shown else ""
    return ", ".join(f"`{n}`" for n in names[:shown]) + more


def _named(named: dict[str, bool]) -> str:
    if not named:
        return "— (nothing readable shows one)"
    return ", ".join(f"{'yes' if ok else '**no**'}: `{rule}`" for rule, ok in named.items())


def _kept(row: dict[str, Any]) -> str:
    if "failed" in row:
        return f"**failed**: {row['failed']}"
    return "yes" if not row["problems"] else "**no**: " + "; ".join(row["problems"])[:200]


def fault_table(rows: Sequence[dict[str, Any]], layer: str) -> list[str]:
    lines = [
        "| case | deadline s | elapsed s | requests | reported as not read | cause still named | peak RSS MiB | promises kept |",
        "|------|-----------:|----------:|---------:|----------------------|-------------------|-------------:|---------------|",
    ]
    for row in rows:
        if "failed" in row:
            lines.append(f"| `{row['id']}` | | | | | | | {_kept(row)} |")
            continue
        requests = str(row["requests"]) if layer == "ray" or row["requests"] else "0 (refused)"
        lines.append(
            f"| `{row['id']}` | {row['deadline_s']:g} | {row['elapsed_s']:.2f} | {requests} | "
            f"{_sources(row['not_read'])} | {_named(row['named'])} | {_mib(row['rss_peak'])} | {_kept(row)} |"
        )
    return lines


def paste_table(rows: Sequence[dict[str, Any]]) -> list[str]:
    lines = [
        "| 40,000-character paste | lines | parse + classify s | tracemalloc peak MiB (bound) | peak RSS MiB | recognised | findings |",
        "|------------------------|------:|-------------------:|------------------------------:|-------------:|------------|---------:|",
    ]
    for row in rows:
        if "failed" in row:
            lines.append(f"| {row['id']} | | | | | **failed**: {row['failed']} | |")
            continue
        recognised = "; ".join(row["recognised"]).replace("|", "\\|")
        name = row["id"].replace("|", "\\|")
        lines.append(
            f"| {name} | {row['lines']:,} | {row['elapsed_s']:.3f} | "
            f"{_mib(row['peak_bytes'])} ({_mib(row['bound_bytes'])}) | {_mib(row['rss_peak'])} | "
            f"{recognised} | {row['findings']} |"
        )
    return lines


def markdown(results: dict[str, Any], info: dict[str, str], command: str, pending: int) -> str:
    kube, ray, pastes = results["kube"], results["ray"], results["paste"]
    kept = sum(1 for row in [*kube, *ray] if "failed" not in row and not row["problems"])
    worst = max((row["peak_bytes"] for row in pastes if "peak_bytes" in row), default=0)
    lines = [
        MARK_START,
        "## Measured",
        "",
        f"Measured {info['date']} with `{command}`.",
        "",
        f"Machine: {info['cpu']}, {info['cores']} cores, {info['memory']} RAM; {info['os']}; Python "
        f"{info['python']}; kubernetes client {info['kubernetes']}, pydantic {info['pydantic']}. Load "
        f"average when it started: {info['load']} (the machine is shared with other work, so wall times "
        "carry noise; the deadlines are the contract, not these times).",
        "",
        f"{kept} of {len(kube) + len(ray)} fault cases kept every promise. The largest `tracemalloc` peak "
        f"of a 40,000-character paste was {_mib(worst)} MiB (bound asserted by the tests: 64 MiB).",
        "",
        "### Kubernetes API faults",
        "",
        "Collection and classification of `scenarios.third_gpu_worker_no_free_gpu()` (cause 1: a third "
        "A100 worker Pending, both A100 nodes full) through the official client against the loopback API "
        f"server with one fault each. The paginated cases list {pending:,} unrelated Pending Pods of a "
        "batch Job besides the cluster's own (the tests use 2,500). *Elapsed* is the collection, which the "
        "deadline bounds; *requests* is what the API server received; *peak RSS* is the diagnosing "
        "process's (the server runs in another). The Ray dashboard is a closed port in every case but "
        "`api-server-refuses-connections` (which reads the recorded one), so each also reports it "
        "unreachable; that is left out of *reported as not read*.",
        "",
        *fault_table(kube, "kubernetes"),
        "",
        "### Ray dashboard faults",
        "",
        "The Ray half of the collection (`DashboardReader`, `collect_ray`, `ray_json.ray_state`) and "
        "`classify` against a loopback dashboard replaying the recorded `broken` Ray 2.60 cluster, or "
        "the hand-written Ray 2.9 / 2.2 answers, or a newer shape (unknown fields, renamed optional "
        "fields); per-call timeout 1 s.",
        "",
        *fault_table(ray, "ray"),
        "",
        "### 40,000-character pastes",
        "",
        "`parse_paste` + `classify` on pastes of Slack's maximum message length "
        "(`tests/hardening/big_pastes.py`). The time is a warm run without tracing; the peak is "
        "`tracemalloc`'s for a second run (memory Python allocated, on top of the paste itself).",
        "",
        *paste_table(pastes),
        MARK_END,
    ]
    return "\n".join(lines)


def write_markdown(path: Path, block: str) -> None:
    """Put ``block`` between the markers of ``path`` (at its end when it has none)."""
    write_block(path, block, MARK_START, MARK_END, new_file=TITLE + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--markdown", type=Path, help="write the tables into this file between its markers")
    parser.add_argument("--pending", type=int, default=DEFAULT_PENDING, help="Pods in the paginated list")
    parser.add_argument("--child", nargs=2, metavar=("KIND", "CASE"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child_main(args.child[0], args.child[1], args.pending)

    from benchmarks.bench_collect import machine
    from tests.hardening.big_pastes import BIG_PASTES
    from tests.hardening.fault_matrix import DASHBOARD_CASES, KUBE_CASES

    info = machine()
    results: dict[str, list[dict[str, Any]]] = {"kube": [], "ray": [], "paste": []}
    plan = [
        *(("kube", c.id) for c in KUBE_CASES),
        *(("ray", c.id) for c in DASHBOARD_CASES),
        *(("paste", name) for name in BIG_PASTES),
    ]
    for index, (kind, case_id) in enumerate(plan, 1):
        say(f"{index}/{len(plan)} {kind} {case_id}")
        results[kind].append(run_child(kind, case_id, args.pending))
    command = "python benchmarks/bench_faults.py" + (
        f" --pending {args.pending}" if args.pending != DEFAULT_PENDING else ""
    )
    if args.markdown:
        command += f" --markdown {args.markdown}"
    block = markdown(results, info, command, args.pending)
    print(block)
    if args.markdown:
        write_markdown(args.markdown, block)
        say(f"wrote {args.markdown}")
    failed = [
        row["id"] for rows in results.values() for row in rows if "failed" in row or row.get("problems")
    ]
    if failed:
        say(f"cases that did not keep their promises: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
