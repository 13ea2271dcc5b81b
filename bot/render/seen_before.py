""" "Seen before" as words: one line per resolved report that reads like the pasted text.

The reports are attached to the diagnosis by the service (``bot.similar``); every renderer (text,
Markdown, JSON, Slack) shows the same few facts of each: its cause, how it was resolved (our words,
in English: the corpus keeps them so), and where its thread is.
"""

from __future__ import annotations

from bot.diagnosis import SimilarReport
from bot.render.messages import Lang, say


def verdict_of(report: SimilarReport, lang: Lang) -> str:
    """``cause 5``, ``healthy`` or ``outside the ten causes``."""
    if report.causes:
        return say("cause", lang, cause=", ".join(str(c) for c in report.causes))
    return say("similar.healthy" if report.healthy else "no_cause", lang)


def report_line(report: SimilarReport, lang: Lang) -> str:
    """``cause 5 · <how it was resolved> · <address> (similarity 12.3)``."""
    score = say("similar.score", lang, score=f"{report.score:g}")
    return f"{verdict_of(report, lang)} · {report.resolution} · {report.address} ({score})"
