"""From the closest reports to the diagnosis: the "Seen before" list, and the fallback finding.

The fallback is for a paste no reader recognised (verdict ``unknown``): raydiag then has nothing of
its own to say, but when most of the closest resolved reports (two of three) agree on a cause, that
cause is worth naming as a lead. It is only ever ``info`` and says where it comes from: likeness
to those reports, not anything read in this text. Measured by leave-one-thread-out over the corpus
(``benchmarks/similar_eval.py``, BENCHMARKS.md): it is right far less often than the rules, so it
never speaks when a rule did.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from bot.diagnosis import SIMILAR_RULE, Diagnosis, Evidence, Finding, SimilarReport, Subject
from bot.terms import Layer

LOG = logging.getLogger(__name__)

SHOWN = 3  # how many reports "Seen before" shows, and the fallback votes over
AGREEING = 2  # how many of them must share a cause for the fallback to name it
# The layer a finding of each cause is filed under (CAUSES.md; 8 and 9 span both layers, and the
# catalogue files most of their rules under these).
CAUSE_LAYER: dict[int, Layer] = {
    1: "kubernetes",
    2: "kubernetes",
    3: "kubernetes",
    4: "ray",
    5: "ray",
    6: "ray",
    7: "ray",
    8: "ray",
    9: "kubernetes",
    10: "application",
}


def similar_reports(text: str, k: int = SHOWN) -> list[SimilarReport]:
    """The ``k`` shipped reports closest to ``text``, best first."""
    from bot.similar.index import default_index  # noqa: PLC0415 - lazy: numpy and bm25s load here

    return [
        SimilarReport(
            id=match.report.id,
            causes=list(match.report.causes),
            resolution=match.report.resolution,
            address=match.report.address,
            score=round(match.score, 2),
            healthy=match.report.healthy,
            shared_words=match.shared,
        )
        for match in default_index().nearest(text, k)
    ]


def agreed_cause(similar: Sequence[SimilarReport]) -> int | None:
    """The cause at least ``AGREEING`` of the first ``SHOWN`` reports name (the nearer one's on a
    tie); None when they do not agree, or agree only on being healthy or outside the ten causes."""
    votes = Counter(cause for report in similar[:SHOWN] for cause in dict.fromkeys(report.causes))
    agreed = [cause for cause, count in votes.items() if count >= AGREEING]
    return agreed[0] if agreed else None


def likeness_finding(cause: int, similar: Sequence[SimilarReport]) -> Finding:
    """The ``info`` finding that names ``cause`` from the reports that agree on it."""
    agreeing = [r for r in similar[:SHOWN] if cause in r.causes]
    return Finding(
        rule=SIMILAR_RULE,
        code=f"RD{cause:02d}00",
        cause=cause,
        layer=CAUSE_LAYER[cause],
        severity="info",
        subject=Subject(kind="Paste"),
        evidence=[
            Evidence(
                source=f"resolved report {r.id}",
                text=f"{r.address}: cause {cause}, similarity {r.score:g}",
                phrase="similar.evidence",
                source_phrase="similar.evidence_source",
                values={"id": r.id, "address": r.address, "cause": str(cause), "score": f"{r.score:g}"},
            )
            for r in agreeing
        ],
        params={"cause": str(cause), "agreeing": str(len(agreeing)), "shown": str(len(similar[:SHOWN]))},
    )


def seen_before(text: str, diagnosis: Diagnosis) -> Diagnosis:
    """``diagnosis`` with the reports closest to ``text`` and, when nothing in the text was
    recognised, the cause they agree on as an ``info`` finding. Never fails the diagnosis: without
    a usable index it is returned as it was."""
    try:
        similar = similar_reports(text)
    except Exception:  # a broken index costs "Seen before", never the answer
        LOG.exception("the index of resolved reports could not be used")
        return diagnosis
    findings = diagnosis.findings
    cause = agreed_cause(similar)
    if cause is not None and diagnosis.verdict_layer == "unknown":
        findings = [*findings, likeness_finding(cause, similar)]
    return replace(diagnosis, similar=similar, findings=findings)
