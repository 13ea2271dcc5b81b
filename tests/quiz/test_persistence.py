"""Quiz scores in the real state database (SQLite in tmp_path): first answers count, restarts keep them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bot.quiz.bank import load_bank
from bot.quiz.engine import UnknownAnswer, next_question, progress
from bot.quiz.record import record_choice
from bot.store import Store, open_store

BANK = load_bank()
T0 = datetime(2024, 12, 2, 9, 0, tzinfo=UTC)


def right(index: int) -> tuple[str, str]:
    question = BANK.questions[index]
    return question.id, question.answer.id


def wrong(index: int) -> tuple[str, str]:
    question = BANK.questions[index]
    return question.id, next(c.id for c in question.choices if not c.correct)


def test_a_choice_is_graded_and_kept(store: Store) -> None:
    feedback = record_choice(store, BANK, "U0ALICE001", *right(0), T0)
    assert feedback.grade.correct and feedback.counted and feedback.recorded_correct
    assert feedback.progress.answered == 1 and feedback.progress.correct == 1
    assert store.answers("U0ALICE001") == {BANK.questions[0].id: True}


def test_the_first_answer_counts_and_a_second_press_changes_nothing(store: Store) -> None:
    record_choice(store, BANK, "U0ALICE001", *wrong(0), T0)
    again = record_choice(store, BANK, "U0ALICE001", *right(0), T0 + timedelta(seconds=5))
    assert again.grade.correct  # the new choice is right...
    assert not again.counted and not again.recorded_correct  # ...but the first (wrong) one stands
    assert again.progress.correct == 0
    assert store.answers("U0ALICE001") == {BANK.questions[0].id: False}


def test_an_unknown_answer_writes_nothing(store: Store) -> None:
    with pytest.raises(UnknownAnswer):
        record_choice(store, BANK, "U0ALICE001", "not-a-question", "a", T0)
    with pytest.raises(UnknownAnswer):
        record_choice(store, BANK, "U0ALICE001", BANK.questions[0].id, "z", T0)
    assert store.answers("U0ALICE001") == {}
    assert store.team_results() == []


def test_scores_survive_a_restart(database: str) -> None:
    first = open_store(database)
    record_choice(first, BANK, "U0ALICE001", *right(0), T0)
    record_choice(first, BANK, "U0ALICE001", *wrong(1), T0 + timedelta(minutes=1))
    record_choice(first, BANK, "U0BOB00001", *right(0), T0 + timedelta(minutes=2))
    first.close()

    reopened = open_store(database)
    try:
        answers = reopened.answers("U0ALICE001")
        assert progress(BANK, answers).answered == 2 and progress(BANK, answers).correct == 1
        assert next_question(BANK, answers) == BANK.questions[2]
        results = {r.user: (r.answered, r.correct) for r in reopened.team_results()}
        assert results == {"U0ALICE001": (2, 1), "U0BOB00001": (1, 1)}
    finally:
        reopened.close()


def test_team_results_rank_the_best_score_first(store: Store) -> None:
    for index in range(3):
        record_choice(store, BANK, "U0CAROL001", *right(index), T0)
    record_choice(store, BANK, "U0DAVE0001", *right(0), T0)
    record_choice(store, BANK, "U0DAVE0001", *wrong(1), T0)
    assert [r.user for r in store.team_results()] == ["U0CAROL001", "U0DAVE0001"]


def test_starting_over_clears_only_that_users_answers(store: Store) -> None:
    record_choice(store, BANK, "U0ALICE001", *right(0), T0)
    record_choice(store, BANK, "U0BOB00001", *right(0), T0)
    store.reset_answers("U0ALICE001")
    assert store.answers("U0ALICE001") == {}
    assert next_question(BANK, store.answers("U0ALICE001")) == BANK.questions[0]
    assert store.answers("U0BOB00001") == {BANK.questions[0].id: True}
