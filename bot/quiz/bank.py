"""The quiz questions: one YAML file per question in ``bot/quiz/questions/``, validated when loaded.

Questions are data for the same reason rules are: the people who know the causes best can add or
correct a question without touching code, and a question that would embarrass the quiz (two right
answers, a missing translation, a choice nobody can press) stops loading with the file and the
field, instead of reaching a new colleague in Slack.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

import yaml
from pydantic import Field, ValidationError, field_validator, model_validator

from bot.render.messages import Lang
from bot.snapshot.base import StrictRecord
from bot.snapshot.data import load

QUESTIONS_DIR = Path(__file__).resolve().parent / "questions"
QUESTION_ID = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
CHOICE_ID = re.compile(r"^[a-z0-9]{1,12}$")
MIN_CHOICES = 3
MAX_CHOICES = 4

# Where a question comes from: the guide's own self-test at its end, or written for raydiag.
Source = Literal["guide-self-test", "raydiag"]
# What a question teaches: one of the ten causes, the triage order, or the verification order.
Topic = Literal["cause", "triage", "verification"]


class QuizDataError(ValueError):
    """A question file is invalid; the message names the file and the field."""


class Bilingual(StrictRecord):
    """The same sentence in English and in Chinese; both are required."""

    __pydantic_config__: ClassVar[Mapping[str, Any]] = {"extra": "forbid", "str_strip_whitespace": True}

    en: Annotated[str, Field(min_length=1)]
    zh: Annotated[str, Field(min_length=1)]

    def in_(self, lang: Lang) -> str:
        return self.en if lang == "en" else self.zh


class Choice(StrictRecord):
    id: str
    correct: bool = False
    text: Bilingual

    @field_validator("id")
    @classmethod
    def _id_shape(cls, value: str) -> str:
        if not CHOICE_ID.match(value):
            raise ValueError("must be 1 to 12 lower-case letters or digits")
        return value

    @field_validator("text")
    @classmethod
    def _short_enough(cls, value: Bilingual) -> Bilingual:
        for lang, text in (("en", value.en), ("zh", value.zh)):
            if len(text) > 400:
                raise ValueError(f"{lang} is longer than 400 characters; a choice should be one line")
        return value


class Question(StrictRecord):
    id: str
    order: Annotated[int, Field(ge=0, le=100_000)]
    topic: Topic
    cause: Annotated[int | None, Field(ge=1, le=10)]
    source: Source
    prompt: Bilingual
    choices: tuple[Choice, ...]
    explanation: Bilingual

    @field_validator("id")
    @classmethod
    def _id_shape(cls, value: str) -> str:
        if not QUESTION_ID.match(value) or len(value) > 60:
            raise ValueError("must be lower-case words joined by '-', at most 60 characters")
        return value

    @field_validator("choices")
    @classmethod
    def _one_right_answer(cls, choices: tuple[Choice, ...]) -> tuple[Choice, ...]:
        if not MIN_CHOICES <= len(choices) <= MAX_CHOICES:
            raise ValueError(f"needs {MIN_CHOICES} to {MAX_CHOICES} choices, found {len(choices)}")
        correct = [choice.id for choice in choices if choice.correct]
        if len(correct) != 1:
            raise ValueError(
                f"exactly one choice must have correct: true, found {len(correct)}"
                + (f" ({', '.join(correct)})" if correct else "")
            )
        ids = [choice.id for choice in choices]
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        if repeated:
            raise ValueError(f"choice ids must be unique; repeated: {', '.join(repeated)}")
        return choices

    @model_validator(mode="after")
    def _cause_matches_topic(self) -> Question:
        if self.topic == "cause" and self.cause is None:
            raise ValueError("cause: a question on a cause needs the cause number (1-10)")
        if self.topic != "cause" and self.cause is not None:
            raise ValueError(f"cause: a {self.topic} question has cause: null")
        return self

    @property
    def answer(self) -> Choice:
        return next(choice for choice in self.choices if choice.correct)

    def choice(self, choice_id: str) -> Choice | None:
        return next((choice for choice in self.choices if choice.id == choice_id), None)

    def letter(self, choice: Choice) -> str:
        """How the choice is shown: A, B, C, D in the file's order."""
        return "ABCD"[self.choices.index(choice)]


class QuestionBank:
    """The loaded questions in the order a newcomer meets them, looked up by id."""

    def __init__(self, questions: Sequence[Question]) -> None:
        self.questions: tuple[Question, ...] = tuple(sorted(questions, key=lambda q: q.order))
        self._by_id = {question.id: question for question in self.questions}

    def __iter__(self) -> Iterator[Question]:
        return iter(self.questions)

    def __len__(self) -> int:
        return len(self.questions)

    def get(self, question_id: str) -> Question | None:
        return self._by_id.get(question_id)

    def number(self, question: Question) -> int:
        """1-based position, for "question 3 of 15"."""
        return self.questions.index(question) + 1


def _describe(error: ValidationError) -> str:
    parts = []
    for item in error.errors():
        message = item["msg"].removeprefix("Value error, ")
        if item["type"] == "unexpected_keyword_argument":  # a dataclass's word for an unknown key
            message = "Extra inputs are not permitted"
        # A check across fields names its field in the message itself.
        where = ".".join(str(part) for part in item["loc"])
        parts.append(f"{where}: {message}" if where else message)
    return "; ".join(parts)


def parse_question(path: Path, raw: object) -> Question:
    if not isinstance(raw, dict):
        raise QuizDataError(f"{path.name}: expected a mapping at the top level")
    try:
        question = load(Question, raw)
    except ValidationError as error:
        raise QuizDataError(f"{path.name}: {_describe(error)}") from error
    if question.id != path.stem:
        raise QuizDataError(f"{path.name}: id: '{question.id}' must equal the file name '{path.stem}'")
    return question


def load_bank(directory: Path | None = None) -> QuestionBank:
    directory = directory or QUESTIONS_DIR
    questions: list[Question] = []
    orders: dict[int, str] = {}
    for path in sorted(directory.glob("*.yaml")):
        try:
            raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
            first_line = str(error).splitlines()[0] if str(error) else type(error).__name__
            raise QuizDataError(f"{path.name}: cannot read YAML: {first_line}") from error
        question = parse_question(path, raw)
        if question.order in orders:
            raise QuizDataError(
                f"{path.name}: order: {question.order} is already used by {orders[question.order]}"
            )
        orders[question.order] = path.name
        questions.append(question)
    if not questions:
        raise QuizDataError(f"no question files (*.yaml) in {directory}")
    return QuestionBank(questions)


@cache
def default_bank() -> QuestionBank:
    return load_bank()
