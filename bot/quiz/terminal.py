"""The quiz in a terminal: ``raydiag quiz`` asks, reads a number, explains, and keeps score.

Answers are read line by line from standard input, so the quiz works the same at a prompt and with
answers piped in; ``q``, end of input or Ctrl-C stop it with the progress already saved (each
answer is written when it is given). Scores go to the bot's state database: ``--db`` (a SQLite
file or a database URL), else ``state.url`` of ``--config``, else the bot's default file, so that a
colleague who shares the bot's database sees their terminal score in ``/raydiag quiz stats``.
"""

from __future__ import annotations

import getpass
import textwrap
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

from bot.config import Config, ConfigError, load_config
from bot.quiz.bank import Choice, Question, QuestionBank, QuizDataError, default_bank
from bot.quiz.engine import Progress, next_question, progress
from bot.quiz.record import Feedback, QuizAnswers, TeamScore, record_choice
from bot.quiz.wording import about, score_line
from bot.render.messages import Lang, say
from bot.store import StoreError, open_store

MAX_USER = 64
WRAP = 100
QUIT_WORDS = frozenset({"q", "quit", "exit"})


class QuizCommandError(Exception):
    """The quiz cannot run (bad option, unusable database, broken question files); one line."""


def database_url(db: str | None, config: Path | None) -> str:
    """``--db`` (a URL, or a file path for SQLite), else the state database of ``--config``, else the
    bot's own default, so that the terminal and the bot keep score in the same place."""
    if db and "://" in db:
        return db
    if db:
        return f"sqlite:///{Path(db).expanduser().resolve()}"
    settings = Config()
    if config is not None:
        try:
            settings = load_config(config)
        except ConfigError as error:
            raise QuizCommandError(str(error)) from error
    return settings.state.database_url()


def default_user() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no login name in a bare container
        return "terminal"


def check_user(name: str) -> str:
    name = name.strip()
    if not name or len(name) > MAX_USER or not name.isprintable():
        raise QuizCommandError(f"--user must be 1 to {MAX_USER} printable characters")
    return name


# -- text -----------------------------------------------------------------------------------------


def _paragraph(text: str, lang: Lang, indent: str = "") -> str:
    # Chinese has no spaces to break at; the terminal wraps it well enough on its own.
    if lang == "zh":
        return indent + text
    return textwrap.fill(
        text,
        WRAP,
        initial_indent=indent,
        subsequent_indent=indent + "   " if indent else "",
        break_long_words=False,
        break_on_hyphens=False,
    )


def render_question(bank: QuestionBank, question: Question, so_far: Progress, lang: Lang) -> str:
    heading = f"{say('quiz.title', lang)} · " + say(
        "quiz.position", lang, number=bank.number(question), total=len(bank)
    )
    if question.source == "guide-self-test":
        heading += f" · {say('quiz.from_guide', lang)}"
    lines = [heading, score_line(so_far, lang), "", _paragraph(question.prompt.in_(lang), lang), ""]
    lines += [
        _paragraph(f"{index}. {choice.text.in_(lang)}", lang, indent="  ")
        for index, choice in enumerate(question.choices, start=1)
    ]
    return "\n".join(lines) + "\n"


def render_feedback(feedback: Feedback, lang: Lang) -> str:
    graded = feedback.grade
    question = graded.question
    number = question.choices.index(graded.answer) + 1
    lines = [say("quiz.correct", lang) if graded.correct else say("quiz.incorrect", lang, letter=number)]
    if not feedback.counted:
        lines.append(say("quiz.again_right" if feedback.recorded_correct else "quiz.again_wrong", lang))
    lines += [
        about(question, lang),
        _paragraph(question.explanation.in_(lang), lang),
        score_line(feedback.progress, lang),
    ]
    return "\n".join(lines) + "\n"


def render_stats(results: Sequence[TeamScore], total: int, lang: Lang) -> str:
    title = say("quiz.stats_title", lang)
    if not results:
        return f"{title}\n{say('quiz.stats_empty', lang)}\n"
    lines = [title]
    lines += [
        say(
            "quiz.stats_line",
            lang,
            rank=rank,
            user=result.user,
            correct=result.correct,
            answered=result.answered,
        )
        for rank, result in enumerate(results, start=1)
    ]
    lines.append(say("quiz.stats_summary", lang, people=len(results), total=total))
    return "\n".join(lines) + "\n"


# -- the loop -------------------------------------------------------------------------------------


def ask(question: Question, lang: Lang, stdin: TextIO, stdout: TextIO) -> Choice | None:
    """The choice typed as its number; None when the user quits or input ends."""
    numbers = {str(index): choice for index, choice in enumerate(question.choices, start=1)}
    while True:
        stdout.write(say("quiz.ask", lang, count=len(numbers)))
        stdout.flush()
        try:
            line = stdin.readline()
        except KeyboardInterrupt:
            line = ""
        if not line:  # end of input
            stdout.write("\n")
            return None
        if not _is_terminal(stdin):  # piped answers: show them, so the transcript reads like a session
            stdout.write(line if line.endswith("\n") else line + "\n")
        typed = line.strip().lower().rstrip(".")
        if typed in QUIT_WORDS:
            return None
        if typed in numbers:
            return numbers[typed]
        stdout.write(say("quiz.bad_input", lang, count=len(numbers)) + "\n")


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # closed or stream-like objects without a terminal
        return False


def play(
    store: QuizAnswers,
    bank: QuestionBank,
    user: str,
    lang: Lang,
    stdin: TextIO,
    stdout: TextIO,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> None:
    """Ask the user's unanswered questions in order until they are done or stop."""
    while True:
        answers = store.answers(user)
        so_far = progress(bank, answers)
        question = next_question(bank, answers)
        if question is None:
            stdout.write(say("quiz.finished", lang, total=so_far.total, correct=so_far.correct) + "\n")
            stdout.write(say("quiz.start_over_hint", lang) + "\n")
            return
        stdout.write("\n" + render_question(bank, question, so_far, lang))
        choice = ask(question, lang, stdin, stdout)
        if choice is None:
            stdout.write(say("quiz.saved", lang) + "\n")
            return
        feedback = record_choice(store, bank, user, question.id, choice.id, clock())
        stdout.write("\n" + render_feedback(feedback, lang))


def run_quiz_command(
    *,
    db: str | None,
    config: Path | None,
    user: str | None,
    lang: Lang,
    stats: bool,
    reset: bool,
    stdin: TextIO,
    stdout: TextIO,
) -> None:
    """``raydiag quiz``: play, or with ``stats`` show the team's results, or with ``reset`` start over."""
    who = check_user(user if user is not None else default_user())
    try:
        bank = default_bank()
    except QuizDataError as error:
        raise QuizCommandError(f"invalid quiz questions: {error}") from error
    try:
        store = open_store(database_url(db, config))
    except StoreError as error:
        raise QuizCommandError(str(error)) from error
    try:
        if stats:
            stdout.write(render_stats(store.team_results(), len(bank), lang))
        elif reset:
            store.reset_answers(who)
            stdout.write(say("quiz.reset_done", lang) + "\n")
        else:
            play(store, bank, who, lang, stdin, stdout)
    except StoreError as error:
        raise QuizCommandError(str(error)) from error
    finally:
        store.close()
