"""The quiz's rules on plain data: what comes next, grading, progress."""

from __future__ import annotations

import pytest

from bot.quiz.bank import load_bank
from bot.quiz.engine import UnknownAnswer, grade, next_question, progress

BANK = load_bank()
FIRST, SECOND, THIRD = BANK.questions[:3]


def test_a_newcomer_starts_with_the_first_question_in_order() -> None:
    assert next_question(BANK, {}) == FIRST
    assert BANK.number(FIRST) == 1
    assert [q.order for q in BANK] == sorted(q.order for q in BANK)


def test_answered_questions_are_skipped_right_or_wrong() -> None:
    assert next_question(BANK, {FIRST.id: True}) == SECOND
    assert next_question(BANK, {FIRST.id: False, SECOND.id: True}) == THIRD
    # Answering out of order (a button on an old message) leaves the earlier question next.
    assert next_question(BANK, {SECOND.id: True}) == FIRST


def test_nothing_is_next_once_every_question_is_answered() -> None:
    everything = {q.id: True for q in BANK}
    assert next_question(BANK, everything) is None
    assert progress(BANK, everything).finished


def test_the_right_choice_is_graded_right_and_every_other_wrong() -> None:
    for question in BANK:
        for choice in question.choices:
            graded = grade(BANK, question.id, choice.id)
            assert graded.correct is choice.correct
            assert graded.answer == question.answer
            assert graded.choice == choice


def test_fragmentation_question_grades_fragmentation_as_right() -> None:
    graded = grade(BANK, "fragmented-gpus", "c")
    assert graded.correct and "no single node" in graded.choice.text.en
    wrong = grade(BANK, "fragmented-gpus", "a")
    assert not wrong.correct and wrong.answer.id == "c"


@pytest.mark.parametrize(
    ("question_id", "choice_id", "message"),
    [
        ("no-such-question", "a", "no question 'no-such-question'"),
        ("fragmented-gpus", "z", "question 'fragmented-gpus' has no choice 'z'"),
        ("fragmented-gpus", "", "question 'fragmented-gpus' has no choice ''"),
        ("", "a", "no question ''"),
    ],
)
def test_unknown_questions_and_choices_are_refused(question_id: str, choice_id: str, message: str) -> None:
    with pytest.raises(UnknownAnswer, match=message):
        grade(BANK, question_id, choice_id)


def test_progress_counts_right_answers_and_what_is_left() -> None:
    so_far = progress(BANK, {FIRST.id: True, SECOND.id: False, THIRD.id: True})
    assert (so_far.answered, so_far.correct, so_far.total) == (3, 2, len(BANK))
    assert so_far.remaining == len(BANK) - 3
    assert not so_far.finished


def test_answers_to_retired_questions_do_not_count() -> None:
    so_far = progress(BANK, {FIRST.id: True, "a-question-since-removed": True})
    assert (so_far.answered, so_far.correct) == (1, 1)
