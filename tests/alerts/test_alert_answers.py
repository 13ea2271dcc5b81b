"""What raydiag said about each alert, kept in the state store (shared by replicas) or in memory."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.slack.state import AlertAnswer, AlertAnswers, MemoryAlertAnswers, StoredAlertAnswers, alert_state_id
from bot.store import open_store


@pytest.fixture(params=["memory", "sqlite"])
def answers(request: pytest.FixtureRequest, tmp_path: Path) -> AlertAnswers:
    if request.param == "memory":
        return MemoryAlertAnswers()
    store = open_store(f"sqlite:///{tmp_path / 'state.db'}")
    request.addfinalizer(store.close)
    return StoredAlertAnswers(store)


def test_an_answer_is_remembered_per_channel_and_alert(answers: AlertAnswers) -> None:
    assert answers.last("C1", "KubePodNotReady ml") is None
    said = AlertAnswer(frozenset({"1|k8s-insufficient-resources|Pod/ml/w"}), "1796160000.000100")
    answers.remember("C1", "KubePodNotReady ml", said)
    assert answers.last("C1", "KubePodNotReady ml") == said
    assert answers.last("C2", "KubePodNotReady ml") is None  # another channel
    # Resolved: nothing stands any more, the findings are kept.
    answers.remember("C1", "KubePodNotReady ml", AlertAnswer(said.findings, None))
    assert answers.last("C1", "KubePodNotReady ml") == AlertAnswer(said.findings, None)


def test_a_second_replica_reads_what_the_first_said(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'state.db'}"
    first, second = open_store(url), open_store(url)
    try:
        said = AlertAnswer(frozenset({"key"}), "1796160000.000100")
        StoredAlertAnswers(first).remember("C1", "a" * 500, said)  # a long key is hashed
        assert StoredAlertAnswers(second).last("C1", "a" * 500) == said
    finally:
        first.close()
        second.close()


def test_the_state_id_fits_the_post_state_table() -> None:
    assert len(alert_state_id("C1", "x" * 10_000)) == 32
    assert alert_state_id("C1", "x") != alert_state_id("C2", "x")
