"""How often "Seen before" names the true cause, measured without letting a case see its own thread.

    .venv/bin/python benchmarks/similar_eval.py                       # the table
    .venv/bin/python benchmarks/similar_eval.py --markdown BENCHMARKS.md
    .venv/bin/python benchmarks/similar_eval.py --json

Leave-one-thread-out over the corpus (``tests/corpus``): for every case of a public thread with a
settled cause, the index is built (``bot.similar.index.Index.build``: bm25s's weights, scored by
the code the bot runs) from every report of the *other* threads, so a case is never scored against itself nor against another paste
of its own thread (same address, however the corpus spells it). Its own paste is the query. The
figures, over those cases:

- nearest report: the closest report's first cause is a true one (``causes`` or ``also_ok``);
- agreed cause given: at least two of the three closest reports share a cause (what the fallback
  finding needs), and how often that cause is true when given;
- fallback hit@1: the agreed cause is true, over all cases (not given counts as a miss);
- the rules (``make eval``'s hit@1) on the same cases, and the rules with the fallback where the
  rules recognise nothing, which is how the bot answers a paste;
- majority baseline: always the commonest cause of the other threads.

Healthy (``quiet``) cases are scored too: how many would get the ``info`` finding (never a warning)
where the rules recognise nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for where in (ROOT, ROOT / "tools"):
    if str(where) not in sys.path:
        sys.path.insert(0, str(where))

from build_similar_index import CorpusReport, corpus_reports  # noqa: E402

from benchmarks.corpus_eval import load_corpus, run_case  # noqa: E402
from benchmarks.markdown_block import write_block  # noqa: E402
from bot.diagnosis import SimilarReport  # noqa: E402
from bot.similar.fallback import SHOWN, agreed_cause  # noqa: E402
from bot.similar.index import Index, report_of  # noqa: E402

MARK_START = "<!-- similar-eval:start -->"
MARK_END = "<!-- similar-eval:end -->"
HEADING = "## Seen before: likeness to resolved reports"


@dataclass(frozen=True)
class Scored:
    id: str
    truth: frozenset[int]
    healthy: bool
    nearest: tuple[int, ...]  # the closest report's causes
    agreed: int | None
    top_score: float
    rules_first: int | None  # the first finding's cause by the rules
    rules_recognised: bool
    majority: int


def _similar(index: Index, text: str) -> list[SimilarReport]:
    return [
        SimilarReport(id=m.report.id, causes=list(m.report.causes), healthy=m.report.healthy, score=m.score)
        for m in index.nearest(text, SHOWN)
    ]


def score_all(cases: Sequence[CorpusReport]) -> list[Scored]:
    reports = [report_of(c.entry) for c in cases]
    terms = {r.id: c.terms for r, c in zip(reports, cases, strict=True)}
    rules = {o.case.id: o for o in map(run_case, load_corpus())}
    scored: list[Scored] = []
    for case, report in zip(cases, reports, strict=True):
        if not report.healthy and not report.causes:
            continue  # "no numbered cause": nothing for a cause vote to hit
        others = [r for r in reports if r.thread != report.thread]
        similar = _similar(Index.build(others, [terms[r.id] for r in others]), case.text)
        majority = Counter(c for r in others for c in r.causes).most_common(1)[0][0]
        outcome = rules[report.id]
        scored.append(
            Scored(
                id=report.id,
                truth=frozenset(report.causes) | frozenset(case.also_ok),
                healthy=report.healthy,
                nearest=tuple(similar[0].causes) if similar else (),
                agreed=agreed_cause(similar),
                top_score=similar[0].score if similar else 0.0,
                rules_first=outcome.found[0] if outcome.found else None,
                rules_recognised=outcome.recognised,
                majority=majority,
            )
        )
    return scored


def figures(scored: Sequence[Scored]) -> dict[str, Any]:
    loud = [s for s in scored if not s.healthy]
    n = len(loud)
    given = [s for s in loud if s.agreed is not None]
    right = [s for s in given if s.agreed in s.truth]
    unrecognised = [s for s in loud if not s.rules_recognised]
    rules_hit = sum(s.rules_first in s.truth for s in loud)
    combined = sum((s.rules_first in s.truth) if s.rules_recognised else (s.agreed in s.truth) for s in loud)
    quiet = [s for s in scored if s.healthy]
    quiet_unknown = [s for s in quiet if not s.rules_recognised]
    return {
        "cases": n,
        "threads_held_out": "each case's own thread",
        "nearest_report_hit": round(sum(bool(s.nearest) and s.nearest[0] in s.truth for s in loud) / n, 3),
        "agreed_given": len(given),
        "agreed_given_share": round(len(given) / n, 3),
        "agreed_right_when_given": round(len(right) / max(len(given), 1), 3),
        "fallback_hit_at_1": round(len(right) / n, 3),
        "majority_baseline_hit_at_1": round(sum(s.majority in s.truth for s in loud) / n, 3),
        "rules_hit_at_1": round(rules_hit / n, 3),
        "rules_unrecognised": len(unrecognised),
        "fallback_on_unrecognised": f"{sum(s.agreed in s.truth for s in unrecognised)} right, "
        f"{sum(s.agreed is not None and s.agreed not in s.truth for s in unrecognised)} wrong, "
        f"{sum(s.agreed is None for s in unrecognised)} silent",
        "rules_then_fallback_hit_at_1": round(combined / n, 3),
        "quiet_cases": len(quiet),
        "quiet_unrecognised_given_info": sum(s.agreed is not None for s in quiet_unknown),
        "per_cause": {
            str(cause): {
                "cases": len(of),
                "fallback_hit_at_1": round(sum(s.agreed in s.truth for s in of) / max(len(of), 1), 3),
            }
            for cause in range(1, 11)
            for of in [[s for s in loud if cause in s.truth]]
        },
    }


def render(result: dict[str, Any], command: str) -> str:
    rows = [
        ("nearest report's cause is true", result["nearest_report_hit"]),
        (
            "agreed cause given (2 of the 3 nearest)",
            f"{result['agreed_given']} of {result['cases']} ({result['agreed_given_share']:.0%})",
        ),
        ("agreed cause true, when given", result["agreed_right_when_given"]),
        ("**fallback hit@1** (agreed cause true; none given is a miss)", result["fallback_hit_at_1"]),
        ("majority baseline hit@1 (always the commonest cause)", result["majority_baseline_hit_at_1"]),
        ("rules hit@1, same cases (`make eval`)", result["rules_hit_at_1"]),
        ("rules recognise nothing", result["rules_unrecognised"]),
        ("… the fallback on those", result["fallback_on_unrecognised"]),
        ("rules, then the fallback where they recognise nothing", result["rules_then_fallback_hit_at_1"]),
        (
            "healthy cases the rules recognise nothing in that get the info finding",
            f"{result['quiet_unrecognised_given_info']} of {result['quiet_cases']} healthy cases",
        ),
    ]
    lines = [
        MARK_START,
        f"`{command}`, {datetime.now(UTC):%Y-%m-%d}: leave-one-thread-out over the "
        f"{result['cases']} thread cases with a settled cause (a case never meets its own thread); "
        "BM25 (bm25s, k1 1.5, b 0.75) over the words of the pastes.",
        "",
        "| figure | value |",
        "|---|--:|",
        *[f"| {name} | {value} |" for name, value in rows],
        "",
        "Fallback hit@1 per cause: "
        + ", ".join(
            f"{cause}: {f['fallback_hit_at_1']:.2f} ({f['cases']})"
            for cause, f in result["per_cause"].items()
        )
        + ".",
        MARK_END,
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--markdown", type=Path, help="write the results block into this file")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    result = figures(score_all(corpus_reports()))
    block = render(result, "python benchmarks/similar_eval.py")
    print(json.dumps(result, indent=2) if args.json else block)
    if args.markdown:
        write_block(args.markdown, block, MARK_START, MARK_END, heading=HEADING)
    return 0


if __name__ == "__main__":
    sys.exit(main())
