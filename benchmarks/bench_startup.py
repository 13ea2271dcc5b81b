"""Start-up and CLI latency: how long `raydiag --help`, `raydiag rules` and `raydiag explain` take.

Run from the repository root::

    .venv/bin/python benchmarks/bench_startup.py                          # 15 runs of each
    .venv/bin/python benchmarks/bench_startup.py --markdown BENCHMARKS.md
    git archive <commit> | tar -x -C /tmp/raydiag-before                  # an older tree ...
    .venv/bin/python benchmarks/bench_startup.py --before /tmp/raydiag-before   # ... side by side

Each command runs as its own process (``python -m bot ...``, what the ``raydiag`` script runs), so
the figures include the interpreter's start and every import, as a person at a terminal sees
them. Every command first runs once with an empty catalogue cache (``cold``: the rules are
compiled and the cache written), then ``--runs`` times with that cache (``warm``); the runs of the
different commands (and of the ``--before`` tree) are interleaved, so a busy spell on the machine
lands on all of them alike. Python's own bytecode cache is kept warm in a private directory
(``PYTHONPYCACHEPREFIX``), as it is for an installed raydiag; ``--no-bytecode`` measures with
``PYTHONDONTWRITEBYTECODE=1`` instead, where every import compiles its source again.

The breakdown runs the same steps as ``raydiag explain`` inside fresh processes and times each
step: imports, the catalogue from the cache and compiled, parsing, classifying, rendering.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.markdown_block import write_block  # noqa: E402

MARK_START = "<!-- bench-startup:start -->"
MARK_END = "<!-- bench-startup:end -->"
HEADING = "## Start-up and CLI latency"
# A 5 KB paste: `ray status` of a placement group that cannot be placed, with the driver's output.
DEFAULT_PASTE = Path("tests/corpus/recorded/v1-pg-held-status-and-python.txt")
# The targets of issue 13 on a 2-core machine, in seconds of wall time with a warm cache.
TARGETS = {"--help": 0.15, "rules": 0.30, "explain": 0.35}

# The steps of `raydiag explain FILE --format text`, timed in one process; prints one JSON line.
BREAKDOWN = r"""
import json, sys, time
marks = [("start", time.perf_counter())]
def mark(name):
    marks.append((name, time.perf_counter()))
import bot.cli
mark("import bot.cli (argument parser)")
import bot.catalogue
mark("import the catalogue module (rule and diagnosis records)")
catalogue = bot.catalogue.default_catalogue()
mark("catalogue from the cache")
from bot.collect.paste import parse_paste
mark("import the paste parsers")
with open(sys.argv[1], "rb") as handle:
    text = handle.read().decode("utf-8", errors="replace")
snapshot = parse_paste(text)
mark("parse the paste")
from bot.classify import classify
mark("import the classifier (detectors)")
diagnosis = classify(snapshot, catalogue)
mark("classify")
from bot.similar import seen_before
diagnosis = seen_before(text, diagnosis)
mark("closest resolved reports (the shipped index, first use)")
out = bot.cli.render(diagnosis, catalogue, "text", "en")
mark("render (text)")
bot.catalogue.load_catalogue()
mark("catalogue compiled (cold: YAML, validation)")
steps = {name: end - begin for (_, begin), (name, end) in zip(marks, marks[1:])}
print(json.dumps(steps))
"""


def _env(tree: Path, cache: Path, bytecode: Path | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX"}}
    env["PYTHONPATH"] = str(tree)
    env["RAYDIAG_CACHE_DIR"] = str(cache)
    env.pop("RAYDIAG_RULES_DIR", None)
    if bytecode is None:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        env["PYTHONPYCACHEPREFIX"] = str(bytecode)
    return env


def _wall(argv: Sequence[str], tree: Path, env: Mapping[str, str]) -> float:
    start = time.perf_counter()
    result = subprocess.run(argv, cwd=tree, env=dict(env), capture_output=True, check=False, timeout=120)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} in {tree} failed: {result.stderr.decode(errors='replace')}")
    return elapsed


def _commands(paste: Path) -> dict[str, list[str]]:
    python = sys.executable
    return {
        "python -c pass": [python, "-c", "pass"],
        "--help": [python, "-m", "bot", "--help"],
        "rules": [python, "-m", "bot", "rules"],
        "explain": [python, "-m", "bot", "explain", str(paste)],
    }


def measure(runs: int, paste: Path, before: Path | None, bytecode: bool) -> dict[str, object]:
    work = Path(tempfile.mkdtemp(prefix="raydiag-bench-startup-"))
    try:
        trees = {"after": ROOT} | ({"before": before} if before is not None else {})
        pyc = work / "pyc" if bytecode else None
        commands = _commands(paste.resolve())
        envs = {label: _env(tree, work / f"cache-{label}", pyc) for label, tree in trees.items()}
        for label, tree in trees.items():  # bytecode warm-up, not timed; then an empty cache
            for argv in commands.values():
                _wall(argv, tree, envs[label])
            shutil.rmtree(work / f"cache-{label}", ignore_errors=True)
        cold: dict[str, dict[str, float]] = {label: {} for label in trees}
        for label, tree in trees.items():  # each command with an empty cache of its own
            for name, argv in commands.items():
                if name != "python -c pass":
                    shutil.rmtree(work / f"cache-{label}", ignore_errors=True)
                    cold[label][name] = _wall(argv, tree, envs[label])
        warm: dict[str, dict[str, list[float]]] = {label: {name: [] for name in commands} for label in trees}
        load = [os.getloadavg()[0]]
        for _ in range(runs):
            for label, tree in trees.items():
                for name, argv in commands.items():
                    warm[label][name].append(_wall(argv, tree, envs[label]))
        load.append(os.getloadavg()[0])
        steps: dict[str, list[float]] = {}
        for _ in range(max(3, runs // 3)):
            result = subprocess.run(
                [sys.executable, "-c", BREAKDOWN, str(paste.resolve())],
                cwd=ROOT,
                env=envs["after"],
                capture_output=True,
                text=True,
                check=True,
                timeout=120,
            )
            for name, seconds in json.loads(result.stdout.strip().splitlines()[-1]).items():
                steps.setdefault(name, []).append(seconds)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {
        "runs": runs,
        "paste": str(paste.relative_to(ROOT)) if paste.is_relative_to(ROOT) else str(paste),
        "paste_bytes": paste.stat().st_size,
        "bytecode": "cached" if bytecode else "none (PYTHONDONTWRITEBYTECODE=1)",
        "load": load,
        "cold": cold,
        "warm": {
            label: {n: (statistics.median(v), max(v)) for n, v in c.items()} for label, c in warm.items()
        },
        "steps": {name: statistics.median(values) for name, values in steps.items()},
    }


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:,.0f} ms"


def render(result: Mapping[str, object], command: str) -> str:
    warm = result["warm"]
    cold = result["cold"]
    steps = result["steps"]
    load = result["load"]
    assert (
        isinstance(warm, dict)
        and isinstance(cold, dict)
        and isinstance(steps, dict)
        and isinstance(load, list)
    )
    labels = [label for label in ("before", "after") if label in warm]
    lines = [
        MARK_START,
        f"`{command}`, measured {datetime.now(UTC):%Y-%m-%d} on a {os.cpu_count()}-core machine shared "
        f"with other work (1-minute load {load[0]:.2f} before the warm runs, {load[1]:.2f} after), "
        f"Python {platform.python_version()}, bytecode {result['bytecode']}. Wall time of each command "
        f"as its own process; warm = the catalogue cache written, median and max of {result['runs']} "
        f"interleaved runs; cold = one run with the cache emptied just before it. `explain` reads "
        f"`{result['paste']}` ({result['paste_bytes']:,} bytes).",
        "",
    ]
    header = "| command | target |"
    rule = "|---|--:|"
    for label in labels:
        header += f" {label}: warm median | warm max | cold |"
        rule += "--:|--:|--:|"
    lines += [header, rule]
    for name in ("python -c pass", "--help", "rules", "explain"):
        target = TARGETS.get(name)
        row = f"| `{name if name.startswith('python') else 'raydiag ' + name}` | {_ms(target) if target else '-'} |"
        for label in labels:
            median, top = warm[label][name]
            first = cold[label].get(name)
            row += f" {_ms(median)} | {_ms(top)} | {_ms(first) if first is not None else '-'} |"
        lines.append(row)
    lines += [
        "",
        "Where the time of `raydiag explain` goes (median of fresh processes, this tree, warm cache; "
        "the interpreter's own start is the `python -c pass` row above):",
        "",
        "| step | time |",
        "|---|--:|",
    ]
    for name, seconds in steps.items():
        lines.append(f"| {name} | {_ms(seconds)} |")
    lines.append(MARK_END)
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="warm runs of each command (default 15)")
    parser.add_argument("--paste", type=Path, default=DEFAULT_PASTE, help="the file `explain` reads")
    parser.add_argument("--before", type=Path, help="another checkout of raydiag, measured alongside")
    parser.add_argument("--no-bytecode", action="store_true", help="run with PYTHONDONTWRITEBYTECODE=1")
    parser.add_argument("--markdown", type=Path, help="write the results block into this file")
    parser.add_argument("--json", action="store_true", help="print the raw figures as JSON as well")
    args = parser.parse_args(argv)
    paste = args.paste if args.paste.is_absolute() else ROOT / args.paste
    result = measure(args.runs, paste, args.before.resolve() if args.before else None, not args.no_bytecode)
    command = "python benchmarks/bench_startup.py"
    if args.runs != 15:
        command += f" --runs {args.runs}"
    if args.before:
        command += " --before <older checkout>"
    if args.no_bytecode:
        command += " --no-bytecode"
    block = render(result, command)
    print(block)
    if args.json:
        print(json.dumps(result, indent=2))
    if args.markdown:
        write_block(args.markdown, block, MARK_START, MARK_END, heading=HEADING)
    return 0


if __name__ == "__main__":
    sys.exit(main())
