"""How often raydiag names the true cause of real pasted outputs: the project's own accuracy eval.

The corpus (``tests/corpus/<batch>/``) holds text people pasted into public issue threads while
their Ray or Kubernetes work was stuck, each with the cause the thread settled on, plus healthy and
irrelevant pastes that must raise no alarm, plus output recorded from real Ray clusters. This
script runs ``explain`` (parse_paste → classify) over every case and prints, overall, per cause
and per format:

- hit@1: the first finding's cause is a true one (``causes``, or ``also_ok``);
- recall: every cause in ``causes`` is among the findings;
- nothing recognised: nothing in the text was read, no format, state or statement (the verdict is
  "unknown" and there is no finding; a note on the person's own words alone leaves the verdict
  unknown but is a reading), as a share of the cases that are not quiet;
- false alarms: a warning or critical finding on a case that must stay quiet;
- time per case.

    .venv/bin/python benchmarks/corpus_eval.py                       # the table and the misses
    .venv/bin/python benchmarks/corpus_eval.py --json                # figures as one JSON object
    .venv/bin/python benchmarks/corpus_eval.py --markdown BENCHMARKS.md

A case whose ``causes`` is empty is one where the catalogue's answer is "no numbered cause" (a
Kueue admission wait, say): it is a hit when the first finding carries no cause number.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script: the repo root holds the packages
    sys.path.insert(0, str(ROOT))

from benchmarks.markdown_block import measured_block, write_block  # noqa: E402
from bot.read.formats import Tag  # noqa: E402

CORPUS = ROOT / "tests" / "corpus"
MARK_START = "<!-- corpus-eval:start -->"
MARK_END = "<!-- corpus-eval:end -->"

# What the corpus says a case is: a real thread, a paste that must stay quiet, or text recorded from
# a real tool run here.
KINDS = ("thread", "quiet", "recorded")
LAYERS = ("k8s", "ray", "cross", "app", "application", "healthy")
# The corpus tags its cases with the readers' own vocabulary (bot/read/formats.py).
FORMATS = tuple(Tag)


@dataclass(frozen=True)
class Case:
    id: str
    path: Path
    batch: str
    kind: str
    causes: tuple[int, ...]
    also_ok: tuple[int, ...]
    layer: str
    formats: tuple[str, ...]
    source: str

    @property
    def quiet(self) -> bool:
        return self.kind == "quiet"


class CorpusError(ValueError):
    """A corpus metadata file is malformed; the message names the file and the entry."""


def _case(batch_dir: Path, entry: dict[str, Any]) -> Case:
    where = f"{batch_dir.name}/expected.json entry {entry.get('file')!r}"
    try:
        name = str(entry["file"])
        causes = tuple(int(c) for c in entry["causes"])
        also_ok = tuple(int(c) for c in entry.get("also_ok", []))
        formats = tuple(str(f) for f in entry["formats"])
        kind = str(entry.get("kind", "thread"))
        layer = str(entry["layer"])
        source = str(entry["source"])
    except (KeyError, TypeError, ValueError) as error:
        raise CorpusError(f"{where}: {error!r}") from error
    path = batch_dir / name
    problems = [
        *(["no such file"] if not path.is_file() else []),
        *([f"kind {kind!r}"] if kind not in KINDS else []),
        *([f"layer {layer!r}"] if layer not in LAYERS else []),
        *([f"cause {c}"] for c in (*causes, *also_ok) if not 1 <= c <= 10),
        *([f"format {f!r}"] for f in formats if f not in FORMATS),
        *(["no format"] if not formats else []),
        *(["a quiet case with causes"] if kind == "quiet" and causes else []),
        *(["no source"] if not source else []),
    ]
    if problems:
        raise CorpusError(f"{where}: {', '.join(problems)}")
    return Case(
        id=f"{batch_dir.name}/{path.stem}",
        path=path,
        batch=batch_dir.name,
        kind=kind,
        causes=causes,
        also_ok=also_ok,
        layer=layer,
        formats=formats,
        source=source,
    )


def load_corpus(root: Path = CORPUS) -> list[Case]:
    """Every case under ``root``: one folder per batch, each with its ``expected.json``."""
    cases: list[Case] = []
    for expected in sorted(root.glob("*/expected.json")):
        try:
            entries = json.loads(expected.read_text(encoding="utf-8"))
        except json.JSONDecodeError as error:
            raise CorpusError(f"{expected.parent.name}/expected.json: {error}") from error
        cases.extend(_case(expected.parent, entry) for entry in entries)
    return cases


@dataclass(frozen=True)
class Outcome:
    case: Case
    found: tuple[int | None, ...]  # the findings' causes, in the diagnosis's order
    alarming: int  # warning or critical findings
    recognised: bool
    seconds: float
    rules: tuple[str, ...]

    @property
    def hit(self) -> bool:
        if self.case.quiet:
            return self.alarming == 0
        if not self.found:
            return False
        first = self.found[0]
        if not self.case.causes:
            return first is None
        return first in self.case.causes or first in self.case.also_ok

    @property
    def recalled(self) -> bool:
        if self.case.quiet:
            return self.alarming == 0
        if not self.case.causes:
            return self.hit
        return set(self.case.causes) <= set(self.found)

    @property
    def false_alarm(self) -> bool:
        return self.case.quiet and self.alarming > 0


def run_case(case: Case) -> Outcome:
    from bot.catalogue import default_catalogue
    from bot.classify import classify
    from bot.collect.paste import parse_paste

    text = case.path.read_text(encoding="utf-8", errors="replace")
    catalogue = default_catalogue()  # loaded once per process: not part of a case's time
    started = time.perf_counter()
    diagnosis = classify(parse_paste(text), catalogue)
    seconds = time.perf_counter() - started
    return Outcome(
        case=case,
        found=tuple(f.cause for f in diagnosis.findings),
        alarming=sum(1 for f in diagnosis.findings if f.severity != "info"),
        recognised=diagnosis.verdict_layer != "unknown" or bool(diagnosis.findings),
        seconds=seconds,
        rules=tuple(f.rule for f in diagnosis.findings),
    )


@dataclass
class Tally:
    cases: int = 0
    hits: int = 0
    recalled: int = 0
    unrecognised: int = 0
    quiet: int = 0
    false_alarms: int = 0
    seconds: list[float] = field(default_factory=list)

    def add(self, outcome: Outcome) -> None:
        self.cases += 1
        self.hits += outcome.hit
        self.recalled += outcome.recalled
        # An unrelated paste that nothing recognises is right to say so: the rate is of the others.
        self.unrecognised += not outcome.recognised and not outcome.case.quiet
        self.quiet += outcome.case.quiet
        self.false_alarms += outcome.false_alarm
        self.seconds.append(outcome.seconds)

    def figures(self) -> dict[str, float | int]:
        n = max(self.cases, 1)
        ordered = sorted(self.seconds) or [0.0]
        return {
            "cases": self.cases,
            "hit_at_1": round(self.hits / n, 3),
            "recall": round(self.recalled / n, 3),
            "nothing_recognised": round(self.unrecognised / max(self.cases - self.quiet, 1), 3),
            "quiet_cases": self.quiet,
            "false_alarms": self.false_alarms,
            "median_ms": round(ordered[len(ordered) // 2] * 1000, 1),
            "max_ms": round(ordered[-1] * 1000, 1),
        }


def tally(outcomes: Iterable[Outcome]) -> dict[str, Any]:
    overall, by_cause, by_format, by_kind = (
        Tally(),
        defaultdict(Tally),
        defaultdict(Tally),
        defaultdict(Tally),
    )
    for outcome in outcomes:
        overall.add(outcome)
        by_kind[outcome.case.kind].add(outcome)
        for cause in outcome.case.causes or (("none",) if not outcome.case.quiet else ("quiet",)):
            by_cause[str(cause)].add(outcome)
        for fmt in outcome.case.formats:
            by_format[fmt].add(outcome)

    def key(name: str) -> tuple[int, str]:
        return (int(name), "") if name.isdigit() else (99, name)

    return {
        "overall": overall.figures(),
        "by_kind": {k: by_kind[k].figures() for k in sorted(by_kind)},
        "by_cause": {k: by_cause[k].figures() for k in sorted(by_cause, key=key)},
        "by_format": {k: by_format[k].figures() for k in sorted(by_format)},
    }


def misses(outcomes: Iterable[Outcome]) -> list[dict[str, Any]]:
    return [
        {
            "id": o.case.id,
            "expected": list(o.case.causes) or ("quiet" if o.case.quiet else "no cause"),
            "also_ok": list(o.case.also_ok),
            "found": [c if c is not None else "-" for c in o.found[:4]],
            "rules": list(o.rules[:3]),
            "recognised": o.recognised,
        }
        for o in outcomes
        if not o.hit or not o.recalled
    ]


def evaluate(cases: Sequence[Case]) -> tuple[list[Outcome], dict[str, Any]]:
    outcomes = [run_case(case) for case in cases]
    return outcomes, tally(outcomes)


# --- report ---------------------------------------------------------------------------------------

_COLUMNS = ("cases", "hit_at_1", "recall", "nothing_recognised", "false_alarms", "median_ms", "max_ms")
_HEADERS = ("cases", "hit@1", "recall", "nothing recognised", "false alarms", "median ms", "max ms")


def _table(title: str, rows: dict[str, dict[str, Any]]) -> str:
    lines = [f"| {title} | " + " | ".join(_HEADERS) + " |", "|---" * (len(_HEADERS) + 1) + "|"]
    for name, figures in rows.items():
        lines.append(f"| {name} | " + " | ".join(str(figures[c]) for c in _COLUMNS) + " |")
    return "\n".join(lines)


def report(result: dict[str, Any], wrong: list[dict[str, Any]]) -> str:
    parts = [
        _table("overall", {"all cases": result["overall"], **result["by_kind"]}),
        _table("cause", result["by_cause"]),
        _table("format", result["by_format"]),
        "Misses (a true cause not first, or not every true cause found):",
        "",
        *(
            f"- `{m['id']}`: expected {m['expected']}"
            + (f" (or {m['also_ok']})" if m["also_ok"] else "")
            + f", found {m['found'] or 'nothing'}"
            + (f" via {', '.join(m['rules'])}" if m["rules"] else "")
            + ("" if m["recognised"] else " — nothing recognised")
            for m in wrong
        ),
    ]
    return "\n\n".join(parts[:3]) + "\n\n" + "\n".join(parts[3:]) + "\n"


def write_markdown(path: Path, block: str) -> None:
    write_block(path, block, MARK_START, MARK_END)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="corpus folder (default tests/corpus)")
    parser.add_argument("--json", action="store_true", help="print the figures and misses as JSON")
    parser.add_argument("--markdown", type=Path, help="write the results block into this file")
    args = parser.parse_args(argv)
    try:
        cases = load_corpus(args.corpus)
    except CorpusError as error:
        print(f"corpus_eval: {error}", file=sys.stderr)
        return 2
    outcomes, result = evaluate(cases)
    wrong = misses(outcomes)
    if args.json:
        print(json.dumps({**result, "misses": wrong}, indent=1))
    else:
        print(report(result, wrong))
    if args.markdown:
        command = f"`.venv/bin/python benchmarks/corpus_eval.py --markdown {args.markdown}` (`make eval`)"
        block = measured_block(MARK_START, MARK_END, command, report(result, wrong))
        write_markdown(args.markdown, block)
    return 0


if __name__ == "__main__":
    sys.exit(main())
