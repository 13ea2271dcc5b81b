"""The "Right cause?" blocks of a diagnosis, the modal that asks what the cause was, and the audit line.

Built with ``slack_sdk.models`` and validated before they leave this module, like every message.
The buttons carry only the diagnosis's id: what it said, where it was posted and what it was given
stay in the state store, so a button can name nothing else (``bot.slack.verdict_actions`` checks
the id against the message it was pressed on). The modal's ``private_metadata`` carries the id and
the message, since a view submission arrives without the message it was opened from.
"""

from __future__ import annotations

import json
from typing import Any

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ContextBlock,
    InputBlock,
    MarkdownTextObject,
    Option,
    PlainTextInputElement,
    PlainTextObject,
    StaticSelectElement,
)
from slack_sdk.models.views import View

from bot.deliver.blocks import note, validated
from bot.diagnosis import Diagnosis
from bot.render.messages import Lang, say
from bot.render.slack import ACTION_VERDICT_RIGHT, ACTION_VERDICT_WRONG, VIEW_VERDICT, escape
from bot.verdicts import CAUSES, MAX_OTHER, Choice, asked_cause

VERDICT_BLOCK = "raydiag_verdict"
CAUSE_BLOCK, CAUSE_ACTION = "raydiag_verdict_cause", "cause"
OTHER_BLOCK, OTHER_ACTION = "raydiag_verdict_other", "text"
OTHER_VALUE = "other"


def cause_words(cause: int | None, lang: Lang) -> str:
    """A cause as the buttons and audit lines name it: its number and CAUSES.md's name."""
    if cause is None:
        return say("no_cause", lang)
    return say("verdict.said_cause", lang, cause=cause, name=say(f"quiz.cause.{cause}", lang))


def said_words(diagnosis: Diagnosis, lang: Lang) -> str:
    """What the diagnosis said, as "Right cause?" puts it: the asked cause, or that nothing was wrong."""
    if not any(f.severity != "info" for f in diagnosis.findings):
        return say("verdict.said_nothing", lang)
    return cause_words(asked_cause(diagnosis), lang)


def verdict_blocks(diagnosis_id: str, said: str, lang: Lang) -> list[Block]:
    """The question and its two buttons, for the end of a diagnosis's root message."""
    value = json.dumps({"diagnosis": diagnosis_id})
    return [
        ContextBlock(elements=[MarkdownTextObject(text=say("verdict.question", lang, said=said))]),
        ActionsBlock(
            block_id=VERDICT_BLOCK,
            elements=[
                ButtonElement(
                    text=PlainTextObject(text=say("verdict.yes", lang)[:75]),
                    action_id=ACTION_VERDICT_RIGHT,
                    value=value,
                ),
                ButtonElement(
                    text=PlainTextObject(text=say("verdict.no", lang)[:75]),
                    action_id=ACTION_VERDICT_WRONG,
                    value=value,
                ),
            ],
        ),
    ]


def verdict_modal(
    diagnosis_id: str, channel: str, message_ts: str, asked: int | None, said: str, lang: Lang
) -> dict[str, Any]:
    """The modal "No" opens: the ten causes (the one raydiag named left out) or something else in words."""
    options = [
        Option(
            value=str(cause),
            text=PlainTextObject(
                text=say("verdict.option", lang, cause=cause, name=say(f"quiz.cause.{cause}", lang))[:75]
            ),
        )
        for cause in CAUSES
        if cause != asked
    ]
    options.append(Option(value=OTHER_VALUE, text=PlainTextObject(text=say("verdict.something_else", lang))))
    view = View(
        type="modal",
        callback_id=VIEW_VERDICT,
        title=PlainTextObject(text=say("verdict.title", lang)[:24]),
        submit=PlainTextObject(text=say("verdict.submit", lang)),
        close=PlainTextObject(text=say("verdict.close", lang)),
        private_metadata=json.dumps({"diagnosis": diagnosis_id, "channel": channel, "ts": message_ts}),
        blocks=[
            ContextBlock(elements=[MarkdownTextObject(text=say("verdict.question", lang, said=said))]),
            InputBlock(
                block_id=CAUSE_BLOCK,
                label=PlainTextObject(text=say("verdict.pick_label", lang)),
                element=StaticSelectElement(
                    action_id=CAUSE_ACTION,
                    placeholder=PlainTextObject(text=say("verdict.pick_placeholder", lang)),
                    options=options,
                ),
            ),
            InputBlock(
                block_id=OTHER_BLOCK,
                label=PlainTextObject(text=say("verdict.other_label", lang)),
                hint=PlainTextObject(text=say("verdict.other_hint", lang)),
                optional=True,
                element=PlainTextInputElement(action_id=OTHER_ACTION, max_length=MAX_OTHER),
            ),
        ],
    )
    # The view checks its own limits (title, metadata, block count); each block is checked as well.
    validated(view.blocks)
    view.validate_json()
    body: dict[str, Any] = view.to_dict()
    return body


def modal_answer(view: dict[str, Any]) -> tuple[str | None, str | None]:
    """The submitted modal's (picked option value, text), as Slack sends them in ``view.state``."""
    values = (view.get("state") or {}).get("values") or {}
    picked = ((values.get(CAUSE_BLOCK) or {}).get(CAUSE_ACTION) or {}).get("selected_option") or {}
    text = ((values.get(OTHER_BLOCK) or {}).get(OTHER_ACTION) or {}).get("value")
    value = picked.get("value") if isinstance(picked, dict) else None
    return (value if isinstance(value, str) else None), (text if isinstance(text, str) else None)


def modal_place(view: dict[str, Any]) -> tuple[str, str, str] | None:
    """(diagnosis id, channel, message ts) from the modal's ``private_metadata``; None when unreadable."""
    try:
        meta = json.loads(view.get("private_metadata") or "{}")
    except (TypeError, ValueError):
        return None
    if not isinstance(meta, dict):
        return None
    found = (meta.get("diagnosis"), meta.get("channel"), meta.get("ts"))
    if not all(isinstance(part, str) and part for part in found):
        return None
    return str(found[0]), str(found[1]), str(found[2])


def audit_note(user: str, said: str, choice: Choice | None, lang: Lang) -> dict[str, Any]:
    """The thread's line saying who gave which verdict (``choice`` None: "right")."""
    if choice is None:
        text = say("verdict.audit_right", lang, user=user, said=said)
    elif choice.cause is not None:
        text = say("verdict.audit_cause", lang, user=user, said=cause_words(choice.cause, lang))
    else:
        text = say("verdict.audit_other", lang, user=user, text=escape(choice.other or ""))
    return note(text)
