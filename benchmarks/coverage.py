"""How much of each tool's own vocabulary raydiag reads right: coverage of the message inventory.

The corpus (``benchmarks/corpus_eval.py``) measures raydiag on what people happened to paste; this
measures it on what the tools can say. ``tests/inventory/<tool>.yaml`` lists, from each tool's
source and for the versions raydiag supports, the messages about scheduling, resources, GPUs,
connectivity, scaling and start-up, each with the cause a diagnosis must give first (or none).
``tools/inventory/instantiate.py`` prints every message in the tool's own layouts (an events row, a
``describe`` block, a klog or zap line, ...); this script runs ``explain`` (parse_paste → classify)
on each text and scores it:

- a message with a cause is read right when the first finding carries that cause;
- a message with ``cause: null`` is read right when no warning or critical finding carries a
  numbered cause (the text alone must not raise one);
- a message counts as read right only when it is read right in every layout it is printed in.

    .venv/bin/python benchmarks/coverage.py                        # the table and the misses
    .venv/bin/python benchmarks/coverage.py --json
    .venv/bin/python benchmarks/coverage.py --markdown BENCHMARKS.md
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script: the repo root holds the packages
    sys.path.insert(0, str(ROOT))

from benchmarks.markdown_block import measured_block, write_block  # noqa: E402
from tools.inventory.instantiate import INVENTORY, Case, Entry, Inventory, cases, load  # noqa: E402

MARK_START = "<!-- coverage:start -->"
MARK_END = "<!-- coverage:end -->"
HEADING = "## Coverage of the tools' own messages"

# Why a case misses, in the words the table uses.
NOTHING = "nothing read"  # no finding at all
WRONG = "wrong cause first"  # a finding, but its cause is not the expected one
ALARM = "alarm on a null message"  # a numbered warning/critical finding on a message that is no cause


@dataclass(frozen=True)
class Outcome:
    case: Case
    causes: tuple[int | None, ...]  # the findings' causes, in the diagnosis's order
    rules: tuple[str, ...]
    alarming: tuple[int, ...]  # the causes of warning/critical findings that carry a number

    @property
    def right(self) -> bool:
        expected = self.case.entry.cause
        if expected is None:
            return not self.alarming
        return bool(self.causes) and self.causes[0] == expected

    @property
    def why(self) -> str:
        if self.right:
            return ""
        if self.case.entry.cause is None:
            return ALARM
        return NOTHING if not self.causes else WRONG


def run_case(case: Case) -> Outcome:
    from bot.catalogue import default_catalogue
    from bot.classify import classify
    from bot.collect.paste import parse_paste

    diagnosis = classify(parse_paste(case.text), default_catalogue())
    return Outcome(
        case=case,
        causes=tuple(f.cause for f in diagnosis.findings),
        rules=tuple(f.rule for f in diagnosis.findings),
        alarming=tuple(f.cause for f in diagnosis.findings if f.severity != "info" and f.cause is not None),
    )


@dataclass(frozen=True)
class MessageResult:
    """One inventory entry over all its layouts."""

    entry: Entry
    outcomes: tuple[Outcome, ...]

    @property
    def right(self) -> bool:
        return all(o.right for o in self.outcomes)


def evaluate(inventories: Sequence[Inventory]) -> list[MessageResult]:
    by_entry: dict[str, list[Outcome]] = {}
    entries: dict[str, Entry] = {}
    for case in cases(inventories):
        by_entry.setdefault(case.entry.key, []).append(run_case(case))
        entries[case.entry.key] = case.entry
    return [MessageResult(entries[key], tuple(outcomes)) for key, outcomes in by_entry.items()]


def shares(results: Sequence[MessageResult]) -> dict[str, dict[str, Any]]:
    """Per tool (in inventory order) and overall: messages, read right, share, cases, cases right."""
    rows: dict[str, dict[str, Any]] = {}
    for name in [*dict.fromkeys(r.entry.tool for r in results), "all"]:
        mine = [r for r in results if name in ("all", r.entry.tool)]
        outcomes = [o for r in mine for o in r.outcomes]
        right = sum(r.right for r in mine)
        rows[name] = {
            "messages": len(mine),
            "right": right,
            "share": round(right / len(mine), 3) if mine else 0.0,
            "cases": len(outcomes),
            "cases_right": sum(o.right for o in outcomes),
        }
    return rows


def misses(results: Sequence[MessageResult]) -> list[dict[str, Any]]:
    out = []
    for result in results:
        if result.right:
            continue
        wrong = [o for o in result.outcomes if not o.right]
        first = wrong[0]
        out.append(
            {
                "tool": result.entry.tool,
                "id": result.entry.id,
                "layouts": [o.case.layout for o in wrong],
                "of": len(result.outcomes),
                "expected": result.entry.cause,
                "got": [c if c is not None else "-" for c in first.causes[:3]],
                "rules": list(first.rules[:2]),
                "why": first.why,
            }
        )
    return out


def report(rows: dict[str, dict[str, Any]], wrong: list[dict[str, Any]]) -> str:
    lines = [
        "| tool | messages | read right | share | cases (message × layout) | cases right |",
        "|---|--:|--:|--:|--:|--:|",
    ]
    for name, row in rows.items():
        label = f"**{name}**" if name == "all" else name
        lines.append(
            f"| {label} | {row['messages']} | {row['right']} | {row['share']:.3f} | "
            f"{row['cases']} | {row['cases_right']} |"
        )
    lines += ["", "Misses (tool/id [layouts that miss]: expected → got, why):", ""]
    for miss in wrong:
        expected = "null" if miss["expected"] is None else miss["expected"]
        got = miss["got"] or "nothing"
        layouts = ", ".join(miss["layouts"])
        if len(miss["layouts"]) == miss["of"]:
            layouts = "all layouts"
        via = f" via {', '.join(miss['rules'])}" if miss["rules"] else ""
        lines.append(
            f"- `{miss['tool']}/{miss['id']}` [{layouts}]: expected {expected}, got {got}{via} — {miss['why']}"
        )
    return "\n".join(lines) + "\n"


def write_floors(path: Path, rows: dict[str, dict[str, Any]]) -> None:
    """The ratchet of tests/inventory/test_inventory.py: each measured tool's share, rounded down so
    the floor never exceeds the measure; tools not measured this run (``--tool``) keep their floor."""
    floors: dict[str, float] = {}
    if path.exists():
        floors = {
            str(k): float(v) for k, v in (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).items()
        }
    floors.update(
        {
            name: math.floor(1000 * row["right"] / row["messages"]) / 1000
            for name, row in rows.items()
            if name != "all"
        }
    )
    lines = [
        "# The share of each tool's inventoried messages raydiag reads right (benchmarks/coverage.py).",
        "# A ratchet: tests/inventory/test_inventory.py fails when a tool drops below its floor. Raise a",
        "# floor when a change raises the share (`benchmarks/coverage.py --write-floors`); the target is 0.95.",
        *(f"{name}: {floors[name]}" for name in sorted(floors)),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--inventory", type=Path, default=INVENTORY, help="folder of <tool>.yaml files")
    parser.add_argument("--tool", action="append", help="only these tools (repeatable)")
    parser.add_argument("--json", action="store_true", help="print the figures and misses as JSON")
    parser.add_argument("--markdown", type=Path, help="write the results block into this file")
    parser.add_argument(
        "--write-floors", action="store_true", help="set tests/inventory/floors.yaml to the measured shares"
    )
    args = parser.parse_args(argv)
    inventories, problems = load(args.inventory)
    for problem in problems:  # a broken file is left out of the figures, and said so
        print(f"coverage: {problem}", file=sys.stderr)
    if args.tool:
        inventories = [i for i in inventories if i.tool in args.tool]
    results = evaluate(inventories)
    rows, wrong = shares(results), misses(results)
    if args.json:
        print(json.dumps({"tools": rows, "misses": wrong}, indent=1))
    else:
        print(report(rows, wrong))
    if args.write_floors:
        write_floors(args.inventory / "floors.yaml", rows)
    if args.markdown:
        command = f"`.venv/bin/python benchmarks/coverage.py --markdown {args.markdown}` (`make coverage`)"
        block = measured_block(MARK_START, MARK_END, command, report(rows, wrong))
        write_block(args.markdown, block, MARK_START, MARK_END, heading=HEADING)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
