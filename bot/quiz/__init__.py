"""The onboarding quiz: questions as data, a pure engine, and the terminal front end.

``bank`` loads and validates the questions (``questions/*.yaml``); ``engine`` decides what comes
next and grades a choice; ``record`` keeps score in the state database; ``terminal`` is
``raydiag quiz``. The quiz in Slack is part of the Slack transport (``bot.slack.quiz_actions`` and
``bot.slack.quiz_blocks``), so this package never loads Bolt.
"""

from bot.quiz.bank import Choice, Question, QuestionBank, QuizDataError, default_bank, load_bank
from bot.quiz.engine import Grade, Progress, UnknownAnswer, grade, next_question, progress
from bot.quiz.record import Feedback, QuizAnswers, record_choice

__all__ = [
    "Choice",
    "Feedback",
    "Grade",
    "Progress",
    "Question",
    "QuestionBank",
    "QuizAnswers",
    "QuizDataError",
    "UnknownAnswer",
    "default_bank",
    "grade",
    "load_bank",
    "next_question",
    "progress",
    "record_choice",
]
