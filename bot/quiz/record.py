"""Recording quiz answers in the durable store, for the Slack buttons and the terminal alike.

The store is written against ``bot.store.Store``'s quiz methods, named here as a protocol so the
quiz depends on what it uses, not on how the state database is built. A choice is graded against
the bank *before* anything is written: an answer naming an unknown question or choice changes
nothing. The first answer to a question is the one that counts, however often it is pressed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from bot.quiz.bank import QuestionBank
from bot.quiz.engine import Grade, Progress, grade, progress


class TeamScore(Protocol):
    @property
    def user(self) -> str: ...
    @property
    def answered(self) -> int: ...
    @property
    def correct(self) -> int: ...
    @property
    def last_at(self) -> datetime: ...


class QuizAnswers(Protocol):
    """The part of ``bot.store.Store`` the quiz uses."""

    def record_answer(
        self, user: str, question_id: str, choice: str, correct: bool, at: datetime
    ) -> bool: ...
    def answers(self, user: str) -> dict[str, bool]: ...
    def team_results(self) -> Sequence[TeamScore]: ...
    def reset_answers(self, user: str) -> None: ...


@dataclass(frozen=True)
class Feedback:
    """What to tell the user after a choice: the grade, whether it counted, and where they stand."""

    grade: Grade
    counted: bool  # False: the user had answered this question before; that first answer stands
    recorded_correct: bool  # what the score holds for this question
    progress: Progress


def record_choice(
    store: QuizAnswers, bank: QuestionBank, user: str, question_id: str, choice_id: str, at: datetime
) -> Feedback:
    """Grade and keep a choice; ``UnknownAnswer`` (nothing written) when the bank does not know it."""
    graded = grade(bank, question_id, choice_id)
    counted = store.record_answer(user, graded.question.id, graded.choice.id, graded.correct, at)
    answers = store.answers(user)
    return Feedback(graded, counted, answers.get(graded.question.id, graded.correct), progress(bank, answers))
