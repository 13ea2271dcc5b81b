"""Classifier at scale: time and memory of ``classify`` on synthetic clusters of growing size.

Run from the repository root::

    .venv/bin/python benchmarks/bench_classify.py                      # all three sizes
    .venv/bin/python benchmarks/bench_classify.py --markdown BENCHMARKS.md
    .venv/bin/python benchmarks/bench_classify.py --profile full       # where the time goes

Each size runs in a fresh Python process, so its resident-memory figures are its own. In that
process the snapshot is built (timed separately, not part of the classify time), the rule
catalogue is loaded, then ``classify`` runs ``--runs`` times (each run builds its own ``Context``,
so nothing is cached between runs) and the median wall time is reported. A last run under
``tracemalloc`` gives the peak of what ``classify`` itself allocates; ``ru_maxrss`` gives the
process peak including the snapshot.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import os
import platform
import pstats
import resource
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import pydantic  # noqa: E402

from benchmarks.markdown_block import write_block  # noqa: E402
from benchmarks.synthetic import SIZES, Size, build_snapshot  # noqa: E402
from bot.catalogue import default_catalogue  # noqa: E402
from bot.classify import classify  # noqa: E402
from bot.snapshot.kubernetes import index_pods  # noqa: E402

TARGET_SECONDS = 2.0
TARGET_BYTES = 1024**3
MARK_START = "<!-- bench-classify:start -->"
MARK_END = "<!-- bench-classify:end -->"
MiB = 1024**2


def _proc_status(field: str) -> int:
    """A ``kB`` line of /proc/self/status, in bytes (0 where there is no /proc)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _load() -> float:
    """The one-minute load average: other work on the machine slows the wall-clock figures."""
    try:
        return float(Path("/proc/loadavg").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return float("nan")


def _max_rss() -> int:
    """Peak resident set of this process so far, in bytes (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _commit() -> str:
    """The commit measured (read-only git), marked when the classifier or its models are edited."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            [
                "git",
                "status",
                "--porcelain",
                "--",
                "bot/classify",
                "bot/snapshot",
                "bot/catalogue.py",
                "rules",
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{head} plus uncommitted changes to the classifier" if dirty else head


def machine() -> dict[str, str]:
    cpu = platform.processor() or "unknown"
    memory = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory = f"{int(line.split()[1]) / 1024**2:.1f} GiB"
                break
    except OSError:
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 0
    return {
        "commit": _commit(),
        "cpu": cpu,
        "cores": str(cores),
        "memory": memory,
        "python": platform.python_version(),
        "pydantic": pydantic.VERSION,
        "os": f"{platform.system()} {platform.release()}",
    }


# --- one size, in its own process ---------------------------------------------------------------------


def measure(size: Size, runs: int, seed: int) -> dict[str, Any]:
    gc.collect()
    rss_start = _proc_status("VmRSS")
    catalogue = default_catalogue()
    started = time.perf_counter()
    snapshot, stats = build_snapshot(size, seed)
    build_s = time.perf_counter() - started
    gc.collect()
    rss_snapshot = _proc_status("VmRSS")
    peak_before = _max_rss()

    # The per-Pod views are built with the snapshot (bot.snapshot.pod_index), so they are part of
    # build_s, not of the classify time; timed here on their own so both figures can be shown.
    index_times = []
    for _ in range(3):
        gc.collect()
        started = time.perf_counter()
        index_pods(snapshot.kubernetes.pods if snapshot.kubernetes else [])
        index_times.append(time.perf_counter() - started)

    times = []
    cpu_times = []
    loads = [_load()]
    diagnosis = None
    for _ in range(runs):
        diagnosis = None
        gc.collect()
        started, cpu_started = time.perf_counter(), time.process_time()
        diagnosis = classify(snapshot, catalogue)
        times.append(time.perf_counter() - started)
        cpu_times.append(time.process_time() - cpu_started)
        loads.append(_load())
    assert diagnosis is not None
    peak_after = _max_rss()

    diagnosis = None
    gc.collect()
    tracemalloc.start()
    started = time.perf_counter()
    diagnosis = classify(snapshot, catalogue)
    traced_s = time.perf_counter() - started
    retained, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()

    rules = Counter(f.rule for f in diagnosis.findings)
    return {
        "size": size.name,
        "nodes": len(snapshot.kubernetes.nodes) if snapshot.kubernetes else 0,
        "pods": len(snapshot.kubernetes.pods) if snapshot.kubernetes else 0,
        "pending": stats.counts.get("pods_unscheduled", 0),
        "demands": len(snapshot.ray.demands) if snapshot.ray else 0,
        "counts": stats.counts,
        "pending_templates": stats.pending_templates,
        "demand_shapes": stats.demand_shapes,
        "ray_clusters": stats.ray_clusters,
        "build_s": build_s,
        "index_s": statistics.median(index_times),
        "times_s": times,
        "median_s": statistics.median(times),
        "cpu_times_s": cpu_times,
        "cpu_median_s": statistics.median(cpu_times),
        "load": max(loads),
        "traced_run_s": traced_s,
        "tracemalloc_peak": peak,
        "tracemalloc_retained": retained,
        "rss_start": rss_start,
        "rss_snapshot": rss_snapshot,
        "max_rss_before_classify": peak_before,
        "max_rss": peak_after,
        "findings": len(diagnosis.findings),
        "rules_fired": len(rules),
        "by_rule": dict(rules.most_common()),
        "errors": [e.message for e in diagnosis.errors],
        "figures": diagnosis.figures,
    }


def run_size(name: str, runs: int, seed: int) -> dict[str, Any]:
    """Measure one size in a fresh interpreter and return its figures."""
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", name, "--runs", str(runs)]
    command += ["--seed", str(seed)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        raise SystemExit(f"the {name} run failed with exit status {done.returncode}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


# --- report -------------------------------------------------------------------------------------------


def _mib(amount: float) -> str:
    return f"{amount / MiB:,.0f} MiB"


def table(results: list[dict[str, Any]]) -> str:
    base = results[0]
    lines = [
        "| size | nodes | pods | pending | demands | build | classify wall (median) | wall runs "
        "| classify CPU (median) | CPU vs first size | tracemalloc peak | peak RSS (process) "
        "| RSS of the snapshot | load avg |",
        "|---|--:|--:|--:|--:|--:|--:|---|--:|--:|--:|--:|--:|--:|",
    ]
    for r in results:
        runs = ", ".join(f"{t:.2f}" for t in r["times_s"])
        ratio = r["cpu_median_s"] / base["cpu_median_s"]
        lines.append(
            f"| {r['size']} | {r['nodes']:,} | {r['pods']:,} | {r['pending']:,} | {r['demands']:,} "
            f"| {r['build_s']:.1f} s | **{r['median_s']:.2f} s** | {runs} | {r['cpu_median_s']:.2f} s "
            f"| {ratio:.2f}x | {_mib(r['tracemalloc_peak'])} | {_mib(r['max_rss'])} "
            f"| {_mib(r['rss_snapshot'] - r['rss_start'])} | {r['load']:.1f} |"
        )
    return "\n".join(lines)


def linearity(results: list[dict[str, Any]]) -> str:
    base = results[0]
    scale_base = base["nodes"]
    parts = []
    for r in results[1:]:
        scale = r["nodes"] / scale_base
        parts.append(
            f"- {r['size']} / {base['size']} ({scale:g}x the input): wall time "
            f"{r['median_s'] / base['median_s']:.2f}x (fastest runs: "
            f"{min(r['times_s']) / min(base['times_s']):.2f}x), CPU time "
            f"{r['cpu_median_s'] / base['cpu_median_s']:.2f}x, tracemalloc peak "
            f"{r['tracemalloc_peak'] / base['tracemalloc_peak']:.2f}x, snapshot RSS "
            f"{(r['rss_snapshot'] - r['rss_start']) / (base['rss_snapshot'] - base['rss_start']):.2f}x "
            f"(linear would be {scale:g}x)"
        )
    return "\n".join(parts)


def verdict(results: list[dict[str, Any]]) -> str:
    full = results[-1]
    time_ok = full["median_s"] < TARGET_SECONDS
    memory_ok = full["tracemalloc_peak"] < TARGET_BYTES
    rss_ok = full["max_rss"] < TARGET_BYTES
    return (
        f"Target at {full['size']} size: classify under {TARGET_SECONDS:g} s — "
        f"{'met' if time_ok else 'NOT met'} ({full['median_s']:.2f} s); classify memory under 1 GiB — "
        f"{'met' if memory_ok else 'NOT met'} ({_mib(full['tracemalloc_peak'])} traced); whole process "
        f"under 1 GiB — {'met' if rss_ok else 'NOT met'} ({_mib(full['max_rss'])} peak RSS, of which "
        f"{_mib(full['rss_snapshot'] - full['rss_start'])} is the snapshot itself). The per-Pod views "
        f"(bot/snapshot/pod_index.py) are built once with the snapshot and take {full['index_s']:.2f} s "
        f"there; counted in, classify would be {full['median_s'] + full['index_s']:.2f} s."
    )


def details(results: list[dict[str, Any]]) -> str:
    full = results[-1]
    counts = full["counts"]
    shown = ", ".join(f"{k} {v:,}" for k, v in sorted(counts.items()))
    rules = ", ".join(f"{rule} {n}" for rule, n in full["by_rule"].items())
    errors = "; ".join(full["errors"]) or "none"
    return (
        f"Snapshot at {full['size']} size: {shown}; {full['pending_templates']} pending-Pod templates, "
        f"{full['demand_shapes']} distinct demand shapes, {full['ray_clusters']} RayClusters.\n\n"
        f"Diagnosis at {full['size']} size: {full['findings']:,} findings from {full['rules_fired']} rules "
        f"({rules}); detector errors: {errors}."
    )


def markdown(results: list[dict[str, Any]], info: dict[str, str], command: str) -> str:
    today = datetime.now(UTC).strftime("%Y-%m-%d")
    return "\n".join(
        [
            MARK_START,
            f"Measured {today} at commit {info['commit']} with `{command}`.",
            "",
            f"Machine: {info['cpu']}, {info['cores']} cores, {info['memory']} RAM; {info['os']}; "
            f"Python {info['python']}, pydantic {info['pydantic']}.",
            "",
            table(results),
            "",
            linearity(results),
            "",
            verdict(results),
            "",
            details(results),
            MARK_END,
        ]
    )


def write_markdown(path: Path, block: str) -> None:
    write_block(path, block, MARK_START, MARK_END)


# --- profile --------------------------------------------------------------------------------------


def _where(func: tuple[str, int, str]) -> str:
    filename, line, name = func
    try:
        filename = str(Path(filename).resolve().relative_to(ROOT))
    except ValueError:
        filename = Path(filename).name if filename.startswith("/") else filename
    return f"{filename}:{line}({name})" if line else name


def profile(size: Size, seed: int, top: int, out: Path | None) -> None:
    catalogue = default_catalogue()
    started = time.perf_counter()
    snapshot, _ = build_snapshot(size, seed)
    print(f"built the {size.name} snapshot in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    gc.collect()
    print(f"commit {_commit()}", file=sys.stderr)
    profiler = cProfile.Profile()
    started = time.perf_counter()
    profiler.enable()
    classify(snapshot, catalogue)
    profiler.disable()
    print(f"classify under cProfile: {time.perf_counter() - started:.2f} s\n")
    if out is not None:
        profiler.dump_stats(out)
    stats = pstats.Stats(profiler)
    entries = stats.stats  # type: ignore[attr-defined]
    rows = [
        (func, calls, total, cumulative)
        for func, (_, calls, total, cumulative, _) in entries.items()
        if "/bot/" in func[0]
    ]
    for title, key in (("cumulative", 3), ("own time", 2)):
        print(f"Top {top} functions of bot/ by {title}:")
        print(f"{'calls':>10} {'own s':>8} {'cum s':>8}  where")
        for func, calls, total, cumulative in sorted(rows, key=lambda r: -r[key])[:top]:
            print(f"{calls:>10} {total:>8.3f} {cumulative:>8.3f}  {_where(func)}")
        print()
    print(f"Top {top} of everything by own time (builtins included):")
    stats.sort_stats("tottime").print_stats(top)


# --- entry point --------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="quarter,half,full", help="comma-separated: quarter, half, full")
    parser.add_argument("--runs", type=int, default=3, help="timed classify runs per size (median reported)")
    parser.add_argument("--seed", type=int, default=20250602)
    parser.add_argument("--markdown", type=Path, help="write the results block into this file")
    parser.add_argument("--json", type=Path, help="also write the raw figures here")
    parser.add_argument("--profile", choices=sorted(SIZES), help="profile one classify run at this size")
    parser.add_argument("--profile-out", type=Path, help="save the cProfile data (for snakeviz, pstats)")
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--worker", choices=sorted(SIZES), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.worker:
        print(json.dumps(measure(SIZES[args.worker], args.runs, args.seed)))
        return 0
    if args.profile:
        profile(SIZES[args.profile], args.seed, args.top, args.profile_out)
        return 0

    names = [n.strip() for n in args.sizes.split(",") if n.strip()]
    unknown = [n for n in names if n not in SIZES]
    if unknown:
        parser.error(f"unknown size(s): {', '.join(unknown)}")
    info = machine()  # before the runs: the commit measured, not one that landed meanwhile
    results = []
    for name in names:
        print(f"measuring {name} ...", file=sys.stderr, flush=True)
        results.append(run_size(name, args.runs, args.seed))
    print(
        f"\n{info['cpu']}, {info['cores']} cores, {info['memory']}; Python {info['python']}, "
        f"pydantic {info['pydantic']}; commit {info['commit']}\n"
    )
    print(table(results))
    print()
    print(linearity(results))
    print()
    print(verdict(results))
    print()
    print(details(results))
    if args.json:
        args.json.write_text(json.dumps({"machine": info, "results": results}, indent=1))
    if args.markdown:
        command = ".venv/bin/python benchmarks/bench_classify.py"
        if names != ["quarter", "half", "full"]:
            command += f" --sizes {','.join(names)}"
        if args.runs != 3:
            command += f" --runs {args.runs}"
        command += f" --markdown {args.markdown}"
        write_markdown(args.markdown, markdown(results, info, command))
        print(f"\nwrote the results into {args.markdown}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
