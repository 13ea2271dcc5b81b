"""``raydiag corpus export`` on kept diagnoses: how verdicts settle a case, and what the batch holds.

The batch is read back by the corpus's own loader (``benchmarks.corpus_eval.load_corpus``), the
check ``tests/corpus/test_corpus_accuracy.py`` runs on every batch.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from benchmarks.corpus_eval import load_corpus
from bot.cli import main
from bot.corpus.export import export_corpus
from bot.diagnosis import Diagnosis, Finding, Subject
from bot.snapshot.data import dump_json
from bot.store import StoredDiagnosis, Verdict, open_store
from bot.verdicts import Choice, kept_input, read_choice
from tests.support.corpus import CORPUS

T0 = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)
RAY_STATUS = (CORPUS / "recorded" / "v1-detached-leftover-ray-status.txt").read_text()
HELD = Finding(
    rule="ray-resources-held",
    code="RD0501",
    cause=5,
    layer="ray",
    severity="warning",
    subject=Subject(kind="actor", name="leftover"),
)


def kept(id_letter: str, diagnosis: Diagnosis, text: str = RAY_STATUS) -> StoredDiagnosis:
    return StoredDiagnosis(
        id="d" + id_letter * 20,
        channel="C0MLPLATFORM",
        message_ts="1733000000.000200",
        thread_ts=None,
        source_ts=None,
        trigger="slash",
        cluster="gpu-prod",
        input=text,
        diagnosis=dump_json(diagnosis),
        asked_cause=5 if diagnosis.findings else None,
        posted_at=T0,
    )


def said(
    record: StoredDiagnosis, user: str, minutes: int, cause: int | None = None, other: str | None = None
) -> Verdict:
    right = cause is None and other is None
    return Verdict(record.id, user, right, cause, other, T0 + timedelta(minutes=minutes))


def test_most_verdicts_settle_the_cause_and_each_case_loads(tmp_path: Path) -> None:
    disputed = kept("a", Diagnosis(findings=[HELD]))
    healthy = kept("b", Diagnosis(figures={"ray_nodes": "3 alive"}))
    elsewhere = kept("c", Diagnosis(findings=[HELD]))
    empty = kept("e", Diagnosis(findings=[HELD]), text="  \n")
    judged = [
        # 7 twice against one "right": 7 wins although "right" came in between.
        (
            disputed,
            [said(disputed, "U1", 1, cause=7), said(disputed, "U2", 2), said(disputed, "U3", 3, cause=7)],
        ),
        (healthy, [said(healthy, "U1", 1)]),
        (elsewhere, [said(elsewhere, "U1", 1, other="a node pool upgrade drained the GPU nodes")]),
        (empty, [said(empty, "U1", 1)]),
    ]
    batch = tmp_path / "corpus" / "ours"
    batch.mkdir(parents=True)
    (batch / "older.txt").write_text(RAY_STATUS)
    older = {
        "file": "older.txt",
        "kind": "thread",
        "causes": [5],
        "layer": "ray",
        "formats": ["ray-status"],
        "source": "x#1",
    }
    (batch / "expected.json").write_text(json.dumps([older]))

    exported = export_corpus(judged, batch)

    assert (exported.written, exported.skipped) == (3, 1)
    cases = {case.path.name: case for case in load_corpus(batch.parent)}
    assert set(cases) == {
        "older.txt",
        f"slash-{disputed.id}.txt",
        f"slash-{healthy.id}.txt",
        f"slash-{elsewhere.id}.txt",
    }
    first = cases[f"slash-{disputed.id}.txt"]
    assert (first.kind, first.causes, first.layer) == ("thread", (7,), "cross")
    assert "ray-status" in first.formats
    assert first.source.startswith(f"raydiag-verdict:{disputed.id} (Slack C0MLPLATFORM")
    quiet = cases[f"slash-{healthy.id}.txt"]
    assert (quiet.kind, quiet.causes, quiet.layer) == ("quiet", (), "healthy")
    other = cases[f"slash-{elsewhere.id}.txt"]
    assert (other.kind, other.causes, other.layer) == ("thread", (), "ray")
    entries = {e["file"]: e for e in json.loads((batch / "expected.json").read_text())}
    assert entries[other.path.name]["what_happened"] == "a node pool upgrade drained the GPU nodes"
    assert entries[first.path.name]["verdicts"] == {"right": 1, "wrong": 2, "named": [7]}


def test_a_tie_goes_to_the_earliest_verdict(tmp_path: Path) -> None:
    record = kept("a", Diagnosis(findings=[HELD]))
    export_corpus([(record, [said(record, "U1", 1, cause=6), said(record, "U2", 2)])], tmp_path / "b")
    [case] = load_corpus(tmp_path)
    assert case.causes == (6,)


def test_what_is_kept_is_redacted_and_choices_are_checked() -> None:
    pasted = "<@UBOT123> here:\nAuthorization: Bearer abcdefghijklmnopqrstuvwxyz\n0/4 nodes are available"
    text = kept_input(Diagnosis(), pasted)
    assert "UBOT123" not in text and "abcdefghijklmnop" not in text and "0/4 nodes are available" in text
    assert read_choice("7", None) == Choice(7, None)
    assert read_choice("other", " a   typo ") == read_choice("other", "a typo")
    assert read_choice("other", "   ") is None
    assert (
        read_choice("11", None) is None and read_choice("0", "x") is None and read_choice(None, "x") is None
    )


def test_the_command_reads_the_bots_database_and_says_what_it_wrote(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "state.db"
    store = open_store(f"sqlite:///{db}")
    record = kept("a", Diagnosis(findings=[HELD]))
    store.save_diagnosis(record)
    store.save_diagnosis(replace(record, id="d" + "b" * 20))  # nobody answered: not a case
    store.record_verdict(said(record, "U1", 1))
    store.close()
    out = tmp_path / "batch"
    assert main(["corpus", "export", "--out", str(out), "--db", str(db)]) == 0
    assert capsys.readouterr().out == f"1 case(s) written to {out}\n"
    [case] = load_corpus(tmp_path)
    assert case.causes == (5,)
    (out / "expected.json").write_text("{}")
    assert main(["corpus", "export", "--out", str(out), "--db", str(db)]) == 2
    assert "not a corpus batch's expected.json" in capsys.readouterr().err
