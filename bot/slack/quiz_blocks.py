"""Slack messages for the quiz: a question with a button per choice, the feedback, the team's results.

Built with ``slack_sdk.models`` blocks and validated before they leave this module, like every other
message raydiag sends. The choices are listed in full in the text and the buttons carry only their
letters: a choice can be a sentence, and a button cut off after a few words would hide the half
that makes it wrong. A button's value names the question and the choice, which the listener checks
against the bank before anything is recorded.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ConfirmObject,
    ContextBlock,
    DividerBlock,
    HeaderBlock,
    MarkdownTextObject,
    PlainTextObject,
    SectionBlock,
)

from bot.quiz.bank import Question, QuestionBank
from bot.quiz.engine import Progress
from bot.quiz.record import Feedback, TeamScore
from bot.quiz.wording import about, score_line
from bot.render.messages import Lang, say
from bot.render.slack import escape

# Button action ids, read by ``bot.slack.quiz_actions``. Answer buttons share a prefix and end in
# the choice's position: action ids must differ within one actions block.
ACTION_ANSWER_PREFIX = "raydiag_quiz_answer_"
ACTION_ANSWER = re.compile(r"^raydiag_quiz_answer_[0-3]$")
ACTION_NEXT = "raydiag_quiz_next"
ACTION_RESTART = "raydiag_quiz_restart"

MAX_BLOCKS = 50
SECTION_LIMIT = 3000
STATS_LINES = 25
SLACK_USER_ID = re.compile(r"^[UW][A-Z0-9]{2,20}$")


def answer_value(question: Question, choice_id: str) -> str:
    return json.dumps({"question": question.id, "choice": choice_id}, separators=(",", ":"))


def read_answer_value(value: object) -> tuple[str, str] | None:
    """(question id, choice id) from a button's value; None for anything not shaped like ours."""
    if not isinstance(value, str) or len(value) > 500:
        return None
    try:
        decoded = json.loads(value)
    except ValueError:
        return None
    if not isinstance(decoded, dict):
        return None
    question, choice = decoded.get("question"), decoded.get("choice")
    if not isinstance(question, str) or not isinstance(choice, str):
        return None
    return question, choice


def question_message(bank: QuestionBank, question: Question, so_far: Progress, lang: Lang) -> dict[str, Any]:
    blocks: list[Block] = [
        _context(_position(bank, question, lang), score_line(so_far, lang)),
        _section(f"*{escape(question.prompt.in_(lang))}*"),
        _section(_choices(question, lang)),
        ActionsBlock(
            block_id=f"quiz:{question.id}",
            elements=[
                ButtonElement(
                    text=PlainTextObject(text=question.letter(choice)),
                    action_id=f"{ACTION_ANSWER_PREFIX}{index}",
                    value=answer_value(question, choice.id),
                )
                for index, choice in enumerate(question.choices)
            ],
        ),
    ]
    fallback = f"{say('quiz.title', lang)}: {question.prompt.in_(lang)}"
    return _message(fallback, blocks)


def feedback_message(bank: QuestionBank, feedback: Feedback, lang: Lang) -> dict[str, Any]:
    graded = feedback.grade
    question = graded.question
    verdict = (
        f":white_check_mark: *{say('quiz.correct', lang)}*"
        if graded.correct
        else f":x: *{say('quiz.incorrect', lang, letter=question.letter(graded.answer))}*"
    )
    lines = [verdict]
    if not feedback.counted:
        lines.append(say("quiz.again_right" if feedback.recorded_correct else "quiz.again_wrong", lang))
    lines.append(escape(question.explanation.in_(lang)))
    blocks: list[Block] = [
        _context(_position(bank, question, lang)),
        _section(f"*{escape(question.prompt.in_(lang))}*"),
        _section(_choices(question, lang, picked=graded.choice.id)),
        DividerBlock(),
        _section("\n\n".join(lines)),
        _context(f"*{about(question, lang)}*", score_line(feedback.progress, lang)),
        ActionsBlock(
            block_id="quiz:next",
            elements=[
                ButtonElement(
                    text=PlainTextObject(text=say("quiz.next", lang)),
                    action_id=ACTION_NEXT,
                    value="next",
                    style="primary",
                )
            ],
        ),
    ]
    head = (
        say("quiz.correct", lang)
        if graded.correct
        else say("quiz.incorrect", lang, letter=question.letter(graded.answer))
    )
    return _message(f"{head} {about(question, lang)}. {question.explanation.in_(lang)}", blocks)


def finished_message(so_far: Progress, lang: Lang) -> dict[str, Any]:
    text = say("quiz.finished", lang, total=so_far.total, correct=so_far.correct)
    blocks: list[Block] = [
        _section(f":mortar_board: *{say('quiz.title', lang)}*\n{text}"),
        ActionsBlock(
            block_id="quiz:restart",
            elements=[
                ButtonElement(
                    text=PlainTextObject(text=say("quiz.restart", lang)),
                    action_id=ACTION_RESTART,
                    value="restart",
                    confirm=ConfirmObject(
                        title=say("quiz.restart_title", lang),
                        text=PlainTextObject(text=say("quiz.restart_warning", lang)),
                        confirm=say("quiz.restart", lang),
                        deny=say("quiz.cancel", lang),
                        style="danger",
                    ),
                )
            ],
        ),
    ]
    return _message(text, blocks)


def stats_message(results: Sequence[TeamScore], total: int, lang: Lang) -> dict[str, Any]:
    title = say("quiz.stats_title", lang)
    if not results:
        empty = say("quiz.stats_empty", lang)
        return _message(f"{title}: {empty}", [HeaderBlock(text=title), _section(empty)])
    lines = [
        say(
            "quiz.stats_line",
            lang,
            rank=rank,
            user=_who(result.user),
            correct=result.correct,
            answered=result.answered,
        )
        for rank, result in enumerate(results[:STATS_LINES], start=1)
    ]
    if len(results) > STATS_LINES:
        lines.append(say("quiz.stats_more", lang, count=len(results) - STATS_LINES))
    summary = say("quiz.stats_summary", lang, people=len(results), total=total)
    blocks: list[Block] = [HeaderBlock(text=title), _section("\n".join(lines)), _context(summary)]
    return _message(f"{title}. {summary}", blocks)


def note_message(text: str) -> dict[str, Any]:
    return _message(text, [_context(escape(text))])


def _position(bank: QuestionBank, question: Question, lang: Lang) -> str:
    text = f":mortar_board: *{say('quiz.title', lang)}* · " + say(
        "quiz.position", lang, number=bank.number(question), total=len(bank)
    )
    if question.source == "guide-self-test":
        text += f" · _{say('quiz.from_guide', lang)}_"
    return text


def _choices(question: Question, lang: Lang, picked: str | None = None) -> str:
    lines = []
    for choice in question.choices:
        line = f"*{question.letter(choice)}.* {escape(choice.text.in_(lang))}"
        if picked is not None:
            mark = (
                ":white_check_mark:"
                if choice.correct
                else (":x:" if choice.id == picked else ":white_small_square:")
            )
            line = f"{mark} {line}"
            if choice.id == picked:
                line += f"  _({say('quiz.your_answer', lang)})_"
        lines.append(line)
    return "\n".join(lines)


def _who(user: str) -> str:
    """A Slack user id as a mention (shown as the person's name); a terminal user name as written."""
    return f"<@{user}>" if SLACK_USER_ID.match(user) else escape(user[:60])


def _section(text: str) -> SectionBlock:
    return SectionBlock(text=MarkdownTextObject(text=text[:SECTION_LIMIT]))


def _context(*texts: str) -> ContextBlock:
    return ContextBlock(elements=[MarkdownTextObject(text=text[:SECTION_LIMIT]) for text in texts])


def _message(fallback: str, blocks: Sequence[Block]) -> dict[str, Any]:
    if len(blocks) > MAX_BLOCKS:
        raise ValueError(f"a quiz message has {len(blocks)} blocks; Slack allows {MAX_BLOCKS}")
    for block in blocks:
        block.validate_json()
    return {"text": fallback[:SECTION_LIMIT], "blocks": [block.to_dict() for block in blocks]}
