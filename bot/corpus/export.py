"""``raydiag corpus export``: users' verdicts as corpus cases, in the ``tests/corpus`` batch format.

A team that grows its own corpus runs this, copies the folder under ``tests/corpus/`` and
``make eval`` measures raydiag on what its own people said; a case worth sharing goes upstream the
same way. Each diagnosis with verdicts is one case: its kept input as the ``.txt``, and in
``expected.json`` the cause its people settled on. When they disagree, the answer most of them gave
wins, and the earliest verdict breaks a tie; every verdict is counted in ``verdicts``.

The entry is the one ``benchmarks/corpus_eval.load_corpus`` checks: ``kind`` is ``thread`` (a
person's answer about a real case), or ``quiet`` when they confirmed a diagnosis that raised no
alarm; ``formats`` are the tags of the formats the paste readers recognise in the text (``prose``
when none); ``layer`` comes from the finding with the settled cause, else from CAUSES.md's table.
An export into a folder that already holds a batch keeps that batch's other entries, so exporting
again only refreshes the cases the database holds.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.diagnosis import Diagnosis
from bot.quiz.terminal import QuizCommandError, database_url
from bot.read import scan
from bot.read.cleaning import clean
from bot.read.formats import Tag
from bot.read.found import Found
from bot.snapshot.data import load_json
from bot.store import StoredDiagnosis, StoreError, Verdict, open_store

# CAUSES.md's layer of each cause, in the corpus's words (9 is "both": the finding says which).
CAUSE_LAYER = {
    1: "k8s",
    2: "k8s",
    3: "k8s",
    4: "cross",
    5: "ray",
    6: "ray",
    7: "cross",
    8: "cross",
    9: "cross",
    10: "application",
}
_FINDING_LAYER = {"kubernetes": "k8s", "ray": "ray", "application": "application"}
EXPECTED = "expected.json"


@dataclass(frozen=True)
class Exported:
    written: int  # cases written
    skipped: int  # diagnoses with verdicts but no input to replay


def settled_cause(record: StoredDiagnosis, given: Sequence[Verdict]) -> tuple[int | None, Verdict]:
    """The true cause most verdicts name (None: no numbered cause), with the first verdict naming it."""

    def said(verdict: Verdict) -> int | None:
        return record.asked_cause if verdict.right else verdict.cause

    votes = Counter(said(v) for v in given)
    first: dict[int | None, Verdict] = {}
    for verdict in given:
        first.setdefault(said(verdict), verdict)
    best = max(votes.values())
    winner = next(said(v) for v in given if votes[said(v)] == best)  # ``given`` is oldest first
    return winner, first[winner]


def format_tags(text: str) -> list[str]:
    """The corpus tags of the formats the paste readers recognise in ``text``; ``prose`` when none."""
    found = Found()
    try:
        scan.scan(clean(text).lines, found)
    except Exception:  # a reader's failure costs the case its tags, never the export
        return [Tag.PROSE.value]
    tags = sorted({fmt.tag.value for fmt in found.formats})
    return tags or [Tag.PROSE.value]


def case_entry(record: StoredDiagnosis, given: Sequence[Verdict], file: str) -> dict[str, Any]:
    diagnosis = load_json(Diagnosis, record.diagnosis)
    cause, deciding = settled_cause(record, given)
    quiet = cause is None and deciding.right and diagnosis.verdict_layer in ("healthy", "unknown")
    if quiet:
        layer = "healthy"
    elif cause is not None:
        about = next((f for f in diagnosis.findings if f.cause == cause), None)
        layer = _FINDING_LAYER[about.layer] if about is not None and cause == 9 else CAUSE_LAYER[cause]
    else:
        top = next((f for f in diagnosis.findings if f.severity != "info"), None)
        layer = _FINDING_LAYER[top.layer] if top is not None else "cross"
    words = [v.other for v in given if v.other]
    where = f"Slack {record.channel} {record.message_ts}, {record.trigger}"
    if record.cluster:
        where += f", cluster {record.cluster}"
    said = f"raydiag said cause {record.asked_cause}" if record.asked_cause else "raydiag named no cause"
    return {
        "file": file,
        "kind": "quiet" if quiet else "thread",
        "causes": [] if cause is None else [cause],
        "also_ok": [],
        "layer": layer,
        "formats": format_tags(record.input),
        "source": f"raydiag-verdict:{record.id} ({where})",
        "title": said,
        "what_happened": " / ".join(words) if words else "",
        "raydiag_said": [f.cause for f in diagnosis.findings],
        "verdicts": {
            "right": sum(v.right for v in given),
            "wrong": sum(not v.right for v in given),
            "named": sorted({v.cause for v in given if v.cause is not None}),
        },
        "posted_at": record.posted_at.isoformat(),
    }


def export_corpus(judged: Sequence[tuple[StoredDiagnosis, Sequence[Verdict]]], out: Path) -> Exported:
    """Write each judged diagnosis as a case into the batch folder ``out`` (created if needed)."""
    out.mkdir(parents=True, exist_ok=True)
    entries: list[dict[str, Any]] = []
    skipped = 0
    for record, given in judged:
        if not record.input.strip() or not given:
            skipped += 1
            continue
        file = f"{record.trigger}-{record.id}.txt"
        (out / file).write_text(record.input if record.input.endswith("\n") else record.input + "\n", "utf-8")
        entries.append(case_entry(record, given, file))
    ours = {entry["file"] for entry in entries}
    kept = [entry for entry in _existing(out / EXPECTED) if entry.get("file") not in ours]
    (out / EXPECTED).write_text(json.dumps([*kept, *entries], indent=2, ensure_ascii=False) + "\n", "utf-8")
    return Exported(written=len(entries), skipped=skipped)


def _existing(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as error:
        raise ValueError(f"{path} is not a corpus batch's expected.json: {error}") from error
    if not isinstance(entries, list):
        raise ValueError(f"{path} is not a corpus batch's expected.json: not a list")
    return [entry for entry in entries if isinstance(entry, dict)]


class ExportError(Exception):
    """The export cannot run (unusable database or configuration, unwritable folder); one line."""


def run_export(db: str | None, config: Path | None, out: Path) -> str:
    """``raydiag corpus export``: read the state database the bot uses, write the batch; a summary line."""
    try:
        store = open_store(database_url(db, config))
    except (QuizCommandError, StoreError) as error:
        raise ExportError(str(error)) from error
    try:
        exported = export_corpus(store.judged_diagnoses(), out)
    except StoreError as error:
        raise ExportError(str(error)) from error
    except (OSError, ValueError) as error:
        raise ExportError(f"cannot write the corpus batch {out}: {error}") from error
    finally:
        store.close()
    skipped = f"; {exported.skipped} without any input to replay left out" if exported.skipped else ""
    return f"{exported.written} case(s) written to {out}{skipped}\n"
