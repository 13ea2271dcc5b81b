"""Which button presses act: only those on messages this bot posted (or showed, ephemerally)."""

from __future__ import annotations

from slack_bolt import BoltContext

from bot.slack.buttons import pressed_on_our_message
from tests.support.slack_api import BOT_ID, BOT_USER_ID, block_actions_payload

OURS = BoltContext({"bot_id": BOT_ID, "bot_user_id": BOT_USER_ID})


def test_a_press_on_the_bots_message_acts() -> None:
    assert pressed_on_our_message(block_actions_payload("raydiag_rerun"), OURS)


def test_a_press_on_a_persons_message_does_not() -> None:
    payload = block_actions_payload("raydiag_rerun", message_author="U0SOMEONE1")
    assert not pressed_on_our_message(payload, OURS)


def test_an_ephemeral_message_without_its_message_body_is_ours() -> None:
    payload = block_actions_payload("raydiag_quiz_answer_0")
    del payload["message"]
    assert not pressed_on_our_message(payload, OURS)  # not ephemeral: nothing says whose it is
    payload["container"]["is_ephemeral"] = True
    assert pressed_on_our_message(payload, OURS)


def test_without_knowing_its_own_ids_the_bot_acts_on_nothing() -> None:
    assert not pressed_on_our_message(block_actions_payload("raydiag_rerun"), BoltContext({}))
