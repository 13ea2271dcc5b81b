"""Kept diagnoses and the verdicts on them, on SQLite and on a real PostgreSQL (see conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import inspect, select

from bot.store import Store, StoredDiagnosis, Verdict, open_store
from bot.store.migrations import STEPS, migrate
from bot.store.schema import schema_version
from tests.store.manual_clock import ManualClock

T0 = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)
KEPT = StoredDiagnosis(
    id="d" + "a" * 20,
    channel="C0MLPLATFORM",
    message_ts="1733000000.000200",
    thread_ts="1733000000.000100",
    source_ts="1733000000.000100",
    trigger="mention",
    cluster=None,
    input="0/4 nodes are available: 4 Insufficient nvidia.com/gpu.",
    diagnosis='{"findings": []}',
    asked_cause=1,
    posted_at=T0,
)


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    opened = open_store(store_url, clock=ManualClock(T0))
    yield opened
    opened.close()


def verdict(user: str, *, right: bool = True, cause: int | None = None, at: datetime = T0) -> Verdict:
    return Verdict(KEPT.id, user, right, cause, None if right or cause else "a typo in the image tag", at)


def test_a_kept_diagnosis_reads_back_as_it_was_kept(store: Store) -> None:
    store.save_diagnosis(KEPT)
    assert store.diagnosis(KEPT.id) == KEPT
    assert store.diagnosis("d" + "b" * 20) is None


def test_one_verdict_per_person_the_first_one_counts(store: Store) -> None:
    store.save_diagnosis(KEPT)
    assert store.record_verdict(verdict("U0ONE"))
    assert not store.record_verdict(verdict("U0ONE", right=False, cause=5, at=T0 + timedelta(minutes=1)))
    assert store.record_verdict(verdict("U0TWO", right=False, cause=5, at=T0 + timedelta(minutes=2)))
    assert store.verdict(KEPT.id, "U0ONE") == verdict("U0ONE")
    [(record, given)] = store.judged_diagnoses()
    assert record == KEPT
    assert [(v.user, v.right, v.cause) for v in given] == [("U0ONE", True, None), ("U0TWO", False, 5)]


def test_no_verdict_on_a_diagnosis_that_is_not_kept(store: Store) -> None:
    assert not store.record_verdict(verdict("U0ONE"))
    assert store.judged_diagnoses() == []


@pytest.mark.parametrize("deleted", ["message_ts", "source_ts"])
def test_a_deleted_message_takes_its_diagnosis_and_verdicts_with_it(store: Store, deleted: str) -> None:
    other = replace(KEPT, id="d" + "c" * 20, message_ts="1733000000.000900", source_ts=None)
    store.save_diagnosis(KEPT)
    store.save_diagnosis(other)
    store.record_verdict(verdict("U0ONE"))
    store.record_verdict(replace(verdict("U0ONE"), diagnosis_id=other.id))
    assert store.forget_message("C0ELSEWHERE", getattr(KEPT, deleted)) == 0
    assert store.forget_message(KEPT.channel, getattr(KEPT, deleted)) == 1
    assert store.diagnosis(KEPT.id) is None
    assert store.verdict(KEPT.id, "U0ONE") is None
    assert [record.id for record, _ in store.judged_diagnoses()] == [other.id]


def test_a_version_one_database_gains_the_verdict_tables(store_url: str) -> None:
    first = open_store(store_url)
    with first.engine.begin() as connection:
        connection.exec_driver_sql("DROP TABLE raydiag_verdicts")
        connection.exec_driver_sql("DROP TABLE raydiag_diagnoses")
        connection.execute(schema_version.delete().where(schema_version.c.version > 1))
    first.close()
    again = open_store(store_url)
    try:
        with again.engine.connect() as connection:
            applied = [row.version for row in connection.execute(select(schema_version.c.version))]
        assert applied == [step.version for step in STEPS] == [1, 2]
        assert {"raydiag_diagnoses", "raydiag_verdicts"} <= set(inspect(again.engine).get_table_names())
        with again.engine.begin() as connection:
            assert migrate(connection, T0) == []
        again.save_diagnosis(KEPT)
        assert again.record_verdict(verdict("U0ONE"))
    finally:
        again.close()


def test_a_diagnosis_nobody_answered_is_forgotten_after_a_month(store_url: str) -> None:
    judged = replace(KEPT, id="d" + "e" * 20)
    first = open_store(store_url)
    try:
        first.save_diagnosis(KEPT)  # the first write of a store sweeps: nothing is old yet
        first.save_diagnosis(judged)
        first.record_verdict(replace(verdict("U0ONE"), diagnosis_id=judged.id))
        assert first.forget_unjudged(T0) == 0
    finally:
        first.close()
    later = open_store(store_url)  # another replica, a month on: its first write sweeps
    try:
        fresh = replace(KEPT, id="d" + "f" * 20, posted_at=T0 + timedelta(days=31))
        later.save_diagnosis(fresh)
        assert later.diagnosis(KEPT.id) is None
        assert later.diagnosis(judged.id) is not None and later.diagnosis(fresh.id) is not None
    finally:
        later.close()
