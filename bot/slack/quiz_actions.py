"""The quiz in Slack: ``/raydiag quiz``, ``/raydiag quiz stats`` and the buttons on quiz messages.

Everything the quiz says is ephemeral, for the person who asked: a question, its feedback and the
next question replace one another in the same message (through the interaction's response URL),
so a channel never fills up with somebody's practice. The listeners stay thin: grading is in
``bot.quiz.engine``, keeping score in ``bot.quiz.record``, the messages in ``bot.slack.quiz_blocks``.

Progress lives in the bot's state database (``bot.store``). Without one, the quiz is "not
available" rather than played without memory: a score that silently vanishes on the next restart
would teach people to distrust the team's results.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from slack_bolt import App, Respond
from slack_sdk import WebClient

from bot.quiz.bank import QuestionBank, default_bank
from bot.quiz.engine import UnknownAnswer, next_question, progress
from bot.quiz.record import QuizAnswers, record_choice
from bot.render.messages import Lang, say
from bot.slack.bot import Bot, ack_only
from bot.slack.commands import Command
from bot.slack.quiz_blocks import (
    ACTION_ANSWER,
    ACTION_NEXT,
    ACTION_RESTART,
    feedback_message,
    finished_message,
    note_message,
    question_message,
    read_answer_value,
    stats_message,
)
from bot.store import StoreError

LOG = logging.getLogger(__name__)
Clock = Callable[[], datetime]


def utc_now() -> datetime:
    return datetime.now(UTC)


def next_message(store: QuizAnswers, bank: QuestionBank, user: str, lang: Lang) -> dict[str, Any]:
    """The user's next unanswered question, or their final score when none is left."""
    answers = store.answers(user)
    so_far = progress(bank, answers)
    question = next_question(bank, answers)
    if question is None:
        return finished_message(so_far, lang)
    return question_message(bank, question, so_far, lang)


def register_quiz(bot: Bot, bank: QuestionBank | None = None) -> None:
    """Answer ``/raydiag quiz`` and ``/raydiag quiz stats`` (the command listener acks; these run lazily)."""
    questions = bank or default_bank()

    def quiz(
        bot: Bot, _command: Command, payload: dict[str, Any], _client: WebClient, respond: Respond
    ) -> None:
        user = str(payload.get("user_id") or "")
        lang = bot.lang(payload.get("channel_id"), user)
        store = bot.store
        if store is None or not user:
            respond(response_type="ephemeral", text=say("slack.unavailable", lang, what="quiz"))
            return
        try:
            message = next_message(store, questions, user, lang)
        except StoreError:
            LOG.exception("/raydiag quiz: the state database failed")
            message = note_message(say("quiz.failed", lang))
        respond(response_type="ephemeral", **message)

    def stats(
        bot: Bot, _command: Command, payload: dict[str, Any], _client: WebClient, respond: Respond
    ) -> None:
        lang = bot.lang(payload.get("channel_id"), payload.get("user_id"))
        store = bot.store
        if store is None:
            respond(response_type="ephemeral", text=say("slack.unavailable", lang, what="quiz stats"))
            return
        try:
            message = stats_message(store.team_results(), len(questions), lang)
        except StoreError:
            LOG.exception("/raydiag quiz stats: the state database failed")
            message = note_message(say("quiz.failed", lang))
        respond(response_type="ephemeral", **message)

    bot.handlers["quiz"] = quiz
    bot.handlers["quiz-stats"] = stats


def register(app: App, bot: Bot, bank: QuestionBank | None = None, clock: Clock = utc_now) -> None:
    """Listen to the quiz's buttons: a choice, "Next question" and "Start over"."""
    questions = bank or default_bank()

    def answered(store: QuizAnswers, user: str, lang: Lang, body: dict[str, Any], respond: Respond) -> None:
        picked = read_answer_value(_action(body).get("value"))
        try:
            if picked is None:
                raise UnknownAnswer("the button's value is not a quiz answer")
            feedback = record_choice(store, questions, user, picked[0], picked[1], clock())
        except UnknownAnswer as refusal:
            LOG.warning("refused a quiz answer from %s: %s", user, refusal)
            respond(replace_original=False, **note_message(say("quiz.refused", lang)))
            return
        respond(replace_original=True, **feedback_message(questions, feedback, lang))

    def next_pressed(
        store: QuizAnswers, user: str, lang: Lang, _body: dict[str, Any], respond: Respond
    ) -> None:
        respond(replace_original=True, **next_message(store, questions, user, lang))

    def restart_pressed(
        store: QuizAnswers, user: str, lang: Lang, _body: dict[str, Any], respond: Respond
    ) -> None:
        store.reset_answers(user)
        respond(replace_original=True, **next_message(store, questions, user, lang))

    app.action(ACTION_ANSWER)(ack=ack_only, lazy=[_player_listener(bot, answered)])
    app.action(ACTION_NEXT)(ack=ack_only, lazy=[_player_listener(bot, next_pressed)])
    app.action(ACTION_RESTART)(ack=ack_only, lazy=[_player_listener(bot, restart_pressed)])


# What a button does for the person who pressed it: (store, user, language, Slack's payload, respond).
Play = Callable[[QuizAnswers, str, Lang, dict[str, Any], Respond], None]


def _player_listener(bot: Bot, play: Play) -> Callable[[dict[str, Any], Respond], None]:
    """Who pressed, in which language: then ``play``; or a plain note when the quiz cannot run."""

    def listener(body: dict[str, Any], respond: Respond) -> None:
        user = str((body.get("user") or {}).get("id") or "")
        channel = (body.get("channel") or {}).get("id") or (body.get("container") or {}).get("channel_id")
        lang = bot.lang(channel, user)
        if bot.store is None or not user:
            respond(replace_original=False, **note_message(say("slack.unavailable", lang, what="quiz")))
            return
        try:
            play(bot.store, user, lang, body, respond)
        except StoreError:
            LOG.exception("quiz button %s: the state database failed", _action(body).get("action_id"))
            respond(replace_original=False, **note_message(say("quiz.failed", lang)))

    return listener


def _action(body: dict[str, Any]) -> dict[str, Any]:
    actions = body.get("actions")
    first = actions[0] if isinstance(actions, list) and actions else None
    return first if isinstance(first, dict) else {}
