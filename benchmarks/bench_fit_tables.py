"""The fit replay's two resource tables side by side: plain lists, numpy, and the node-count switch.

Run from the repository root::

    .venv/bin/python benchmarks/bench_fit_tables.py                  # every size
    .venv/bin/python benchmarks/bench_fit_tables.py --sizes 500 --small-runs 5

``bot/classify/fit.py`` replays NodeResourcesFit on plain lists (``_ListTable``). It had a second,
numpy table for clusters of 512 nodes or more; this script measured the two and the switch, and
the numpy table was removed. It lives on here (``ArrayTable``, the same code), so the comparison
can be run again: each measuring process puts the table of its mode in ``fit._ListTable``'s
place, lists only, numpy only, or the switch the module had (numpy from 512 nodes).

* **Small** (the common case): a fresh ``raydiag diagnose --snapshot`` process on a five-node
  snapshot with a Pending GPU worker and its FailedScheduling event (``tests/support/scenarios``),
  and ``raydiag explain`` of a recorded ``kubectl describe`` paste. The whole process is timed
  from outside, numpy's import included where the table imports it; the modes alternate run by
  run, so load on the machine falls on all three alike.
* **Large**: one process per size builds a synthetic snapshot (``benchmarks/synthetic.py``, the
  shape of BENCHMARKS.md "Classifier at scale") and runs ``classify`` with each mode in turn,
  also in alternation. The time spent building ``FitExplainer`` and in its ``explain`` is summed
  on its own. numpy's first import is timed in that process too (before any numpy-mode run), and
  is what a fresh ``raydiag diagnose`` process pays on top when its table is numpy's.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

MODES = ("lists", "numpy", "switch")
SWITCH_FROM = 512  # the node count from which the removed switch took numpy's table
from bot.classify import fit  # noqa: E402

PASTE = ROOT / "tests/corpus/recorded-kubectl/insufficient-gpu-describe-pending-worker.txt"


class ArrayTable:
    """The removed numpy table: free amounts as one array (a row per resource), every eligible node
    compared at once. Same answers as ``fit._ListTable`` (a test held the two alike)."""

    def __init__(self, columns: dict[str, list[float]]) -> None:
        import numpy as np

        self._rows = {name: row for row, name in enumerate(columns)}
        self._free = np.array(list(columns.values()), dtype=np.float64)

    def replay(self, checks: Sequence[Any], eligible: Sequence[int]) -> Any:
        import numpy as np

        from bot.classify.fit import CLOSEST_KEPT, _Replay

        positions = np.array(eligible, dtype=np.intp)
        frees: list[Any] = []
        rows: list[Any] = []
        for check in checks:
            row = self._rows.get(check.resource)
            free = None if row is None else self._free[row, positions]
            frees.append(free)
            rows.append(
                np.ones(len(eligible), dtype=bool) if free is None else check.needed > free + check.tolerance
            )
        lacks = np.vstack(rows)
        fits = ~np.any(lacks, axis=0)
        short = np.flatnonzero(~fits)
        gap = np.zeros(len(short))
        for check, flags, free in zip(checks, lacks, frees, strict=True):
            gap += np.where(
                flags[short], (check.needed - (0.0 if free is None else free[short])) / check.needed, 0.0
            )
        order = np.lexsort((short, gap, lacks[:, short].sum(axis=0)))[:CLOSEST_KEPT]
        return _Replay(
            counts=lacks.sum(axis=1).tolist(),
            fitting=np.flatnonzero(fits).tolist(),
            closest=sorted(short[order].tolist()),
        )


_LISTS = fit._ListTable


def _switch(columns: dict[str, list[float]]) -> Any:
    large = len(columns["pods"]) >= SWITCH_FROM
    return ArrayTable(columns) if large else _LISTS(columns)


def use(mode: str) -> None:
    """Make ``FitExplainer`` build the table of ``mode`` (lists, numpy or switch)."""
    tables: dict[str, Any] = {"lists": _LISTS, "numpy": ArrayTable, "switch": _switch}
    setattr(fit, "_ListTable", tables[mode])  # noqa: B010 - the name FitExplainer looks up


# A raydiag process with the threshold set before anything runs; it reports whether numpy came in.
_CLI = """
import sys
from benchmarks.bench_fit_tables import use
use({mode!r})
import atexit
atexit.register(lambda: sys.stderr.write("numpy=%s\\n" % ("numpy" in sys.modules)))
from bot.cli import main
sys.exit(main({argv!r}))
"""


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _cli_run(mode: str, argv: list[str]) -> tuple[float, bool]:
    """The CPU time (user + system) of one whole raydiag process, and whether it imported numpy."""
    code = _CLI.format(mode=mode, argv=argv)
    before = _children_cpu()
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    cpu = _children_cpu() - before
    if "numpy=" not in done.stderr:
        # The CLI may leave through os._exit, past atexit: then numpy's presence is unknown.
        return cpu, mode == "numpy"
    return cpu, "numpy=True" in done.stderr


def small(runs: int) -> dict[str, Any]:
    from tests.support import scenarios

    with tempfile.TemporaryDirectory() as folder:
        snapshot = Path(folder) / "snapshot.json"
        snapshot.write_text(json.dumps(scenarios.third_gpu_worker_no_free_gpu().to_json()))
        cases = {
            "diagnose --snapshot (5 nodes, 1 Pending Pod)": ["diagnose", "--snapshot", str(snapshot)],
            "explain (kubectl describe paste)": ["explain", str(PASTE)],
        }
        results: dict[str, Any] = {}
        for label, argv in cases.items():
            walls: dict[str, list[float]] = {mode: [] for mode in MODES}
            numpy_seen: dict[str, bool] = {}
            _cli_run("lists", argv)  # warm the file cache
            for _ in range(runs):
                for mode in MODES:
                    wall, seen = _cli_run(mode, argv)
                    walls[mode].append(wall)
                    numpy_seen[mode] = seen
            results[label] = {
                mode: {"median": statistics.median(w), "min": min(w), "numpy": numpy_seen[mode]}
                for mode, w in walls.items()
            }
    return results


def _child(nodes: int, runs: int) -> dict[str, Any]:
    """Inside a fresh process: build one snapshot, then classify it with each mode in turn."""
    import gc

    from benchmarks.synthetic import Size, build_snapshot
    from bot.catalogue import default_catalogue
    from bot.classify import classify

    size = Size(str(nodes), nodes, nodes * 30, nodes // 5, nodes * 2)
    catalogue = default_catalogue()
    started = time.perf_counter()
    snapshot, _ = build_snapshot(size)
    build = time.perf_counter() - started

    spent = [0.0]
    replays = [0]
    tables = [0.0]
    init, explain = fit.FitExplainer.__init__, fit.FitExplainer.explain

    def timed_table(replay: Any) -> Any:
        def timed(self: Any, *args: Any) -> Any:
            t = time.perf_counter()
            result = replay(self, *args)
            tables[0] += time.perf_counter() - t
            return result

        return timed

    for table in (fit._ListTable, ArrayTable):
        table.replay = timed_table(table.replay)  # type: ignore[method-assign]

    def timed_init(self: Any, *args: Any, **kwargs: Any) -> None:
        t = time.perf_counter()
        init(self, *args, **kwargs)
        spent[0] += time.perf_counter() - t

    def timed_explain(self: Any, *args: Any, **kwargs: Any) -> Any:
        t = time.perf_counter()
        result = explain(self, *args, **kwargs)
        spent[0] += time.perf_counter() - t
        replays[0] += 1
        return result

    fit.FitExplainer.__init__ = timed_init  # type: ignore[method-assign]
    fit.FitExplainer.explain = timed_explain  # type: ignore[method-assign]

    def once(mode: str) -> tuple[float, float, float, int]:
        use(mode)
        spent[0], tables[0], replays[0] = 0.0, 0.0, 0
        gc.collect()
        t = time.process_time()
        classify(snapshot, catalogue)
        return time.process_time() - t, spent[0], tables[0], replays[0]

    once("lists")  # warm-up on lists: numpy is still not imported
    assert "numpy" not in sys.modules
    t = time.process_time()
    import numpy  # noqa: F401 - the first import, as a fresh numpy-table process pays it

    numpy_import = time.process_time() - t
    figures: dict[str, dict[str, list[float]]] = {m: {"classify": [], "fit": [], "table": []} for m in MODES}
    count = 0
    for _ in range(runs):
        for mode in MODES:
            cpu, fit_time, table_time, count = once(mode)
            figures[mode]["classify"].append(cpu)
            figures[mode]["fit"].append(fit_time)
            figures[mode]["table"].append(table_time)
    return {
        "nodes": nodes,
        "pods": size.pods,
        "pending": size.pending,
        "build_s": build,
        "numpy_import_s": numpy_import,
        "replays": count,
        "switch_table": "numpy" if nodes >= SWITCH_FROM else "lists",
        "modes": {
            mode: {key: statistics.median(values) for key, values in f.items()} for mode, f in figures.items()
        },
    }


def large(sizes: list[int], runs: int) -> list[dict[str, Any]]:
    results = []
    for nodes in sizes:
        done = subprocess.run(
            [sys.executable, __file__, "--child", str(nodes), "--large-runs", str(runs)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=900,
            check=True,
        )
        results.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return results


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:,.0f} ms" if seconds >= 0.01 else f"{seconds * 1000:.1f} ms"


def report(small_results: dict[str, Any], large_results: list[dict[str, Any]]) -> str:
    lines = [
        f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
        f"Python {platform.python_version()}; load average {os.getloadavg()[0]:.1f} at the end.",
        "",
        "Small: a whole `raydiag` process, its CPU time (user + system, median; least in brackets).",
        "",
        "| command | lists only | numpy only | switch (as shipped) | numpy imported (lists/numpy/switch) |",
        "|---|--:|--:|--:|---|",
    ]
    for label, modes in small_results.items():
        cells = [f"{_ms(modes[m]['median'])} ({_ms(modes[m]['min'])})" for m in MODES]
        seen = "/".join("yes" if modes[m]["numpy"] else "no" for m in MODES)
        lines.append(f"| {label} | {' | '.join(cells)} | {seen} |")
    lines += [
        "",
        "Large: one process per size. `classify` CPU time (median), the fit explainer's wall time "
        "(building `FitExplainer` plus every `explain`), the tables' own `replay` calls, and "
        "numpy's first import in that process (CPU), which a fresh `raydiag` process adds when its "
        "table is numpy's. Last columns: what numpy's table costs more than the lists' (a negative "
        "figure: saves), in a fresh process (import included) and in the bot (numpy already in).",
        "",
        "| nodes | Pods | Pending | replays | classify CPU: lists / numpy / switch "
        "| fit explainer: lists / numpy | table replays: lists / numpy | numpy import "
        "| numpy - lists, fresh process | numpy - lists, in the bot | switch picks |",
        "|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|",
    ]
    for r in large_results:
        modes = r["modes"]
        lists, arrays = modes["lists"], modes["numpy"]
        warm = arrays["table"] - lists["table"]
        fresh = warm + r["numpy_import_s"]
        base = lists["classify"]
        lines.append(
            f"| {r['nodes']:,} | {r['pods']:,} | {r['pending']:,} | {r['replays']} "
            f"| {_ms(lists['classify'])} / {_ms(arrays['classify'])} / {_ms(modes['switch']['classify'])} "
            f"| {_ms(lists['fit'])} / {_ms(arrays['fit'])} "
            f"| {_ms(lists['table'])} / {_ms(arrays['table'])} | {_ms(r['numpy_import_s'])} "
            f"| {fresh * 1000:+,.0f} ms ({fresh / base:+.0%} of classify) "
            f"| {warm * 1000:+,.1f} ms ({warm / base:+.1%}) | {r['switch_table']} |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="*", default=[500, 1_000, 5_000], help="node counts")
    parser.add_argument("--small-runs", type=int, default=15)
    parser.add_argument("--large-runs", type=int, default=5)
    parser.add_argument("--json", type=Path, help="also write the raw figures here")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_child(args.child, args.large_runs)))
        return 0
    small_results = small(args.small_runs)
    large_results = large(args.sizes, args.large_runs)
    if args.json:
        args.json.write_text(json.dumps({"small": small_results, "large": large_results}, indent=2))
    print(report(small_results, large_results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
