"""The quiz's rules, as pure functions over the question bank and a user's answers.

Which question comes next, whether a choice is right, how far someone has got: none of it reads a
clock or a database, so the Slack buttons and the terminal agree by construction and every rule is
tested with plain objects. Whatever arrives from outside (a button's value, a typed number) is
checked here against the bank before anything is recorded.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from bot.quiz.bank import Choice, Question, QuestionBank


class UnknownAnswer(ValueError):
    """The answer names a question or a choice that the bank does not have."""


@dataclass(frozen=True)
class Grade:
    """One choice, judged: what was picked, whether it is right, and what the right one is."""

    question: Question
    choice: Choice
    correct: bool

    @property
    def answer(self) -> Choice:
        return self.question.answer


@dataclass(frozen=True)
class Progress:
    """How far a user has got through the questions the bank holds today."""

    answered: int
    correct: int
    total: int

    @property
    def remaining(self) -> int:
        return self.total - self.answered

    @property
    def finished(self) -> bool:
        return self.answered >= self.total


def next_question(bank: QuestionBank, answers: Mapping[str, bool]) -> Question | None:
    """The first question, in the bank's order, that the user has not answered; None when all are."""
    return next((question for question in bank if question.id not in answers), None)


def grade(bank: QuestionBank, question_id: str, choice_id: str) -> Grade:
    """Judge ``choice_id`` for ``question_id``; ``UnknownAnswer`` when either is not in the bank."""
    question = bank.get(question_id)
    if question is None:
        raise UnknownAnswer(f"no question {question_id[:60]!r}")
    choice = question.choice(choice_id)
    if choice is None:
        raise UnknownAnswer(f"question {question.id!r} has no choice {choice_id[:20]!r}")
    return Grade(question, choice, choice.correct)


def progress(bank: QuestionBank, answers: Mapping[str, bool]) -> Progress:
    """Answers to questions that were since removed from the bank do not count."""
    known = [correct for question_id, correct in answers.items() if bank.get(question_id) is not None]
    return Progress(answered=len(known), correct=sum(known), total=len(bank))
