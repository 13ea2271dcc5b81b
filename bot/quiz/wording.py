"""Sentences the Slack and terminal renderings of the quiz share, so both say the same thing."""

from __future__ import annotations

from bot.quiz.bank import Question
from bot.quiz.engine import Progress
from bot.render.messages import Lang, say


def about(question: Question, lang: Lang) -> str:
    """What a question is about, shown with its feedback: the cause number and name, or the topic."""
    if question.cause is not None:
        name = say(f"quiz.cause.{question.cause}", lang)
        return say("quiz.about_cause", lang, cause=question.cause, name=name)
    return say(f"quiz.about_{question.topic}", lang)


def score_line(so_far: Progress, lang: Lang) -> str:
    return say(
        "quiz.score", lang, correct=so_far.correct, answered=so_far.answered, remaining=so_far.remaining
    )
