"""The quiz as Slack sees it: signed slash commands and button presses in, response URLs out.

The bot is wired as ``raydiag serve`` wires it (``register_quiz`` and the quiz surface among the
real Bolt app's), keeps score in a real SQLite state database, and answers through the loopback
Slack stand-in. Buttons are pressed with the values the bot itself put on them, except where a
test crafts a payload on purpose.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote_plus

import pytest
from slack_sdk.models.blocks import Block

from bot.config import Config
from bot.diagnosis import Diagnosis
from bot.quiz.bank import load_bank
from bot.quiz.record import record_choice
from bot.slack import quiz_actions
from bot.slack.app import CORE, build_app
from bot.slack.bot import Bot
from bot.slack.quiz_actions import register_quiz
from bot.slack.quiz_blocks import ACTION_NEXT, ACTION_RESTART, answer_value
from bot.snapshot.data import load
from bot.store import Store, open_store
from tests.support.bolt_server import bolt_over_http
from tests.support.slack_api import (
    SlackWebAPI,
    block_actions_payload,
    block_problems,
    post_signed,
    serve_slack,
    slash_command_body,
)

SECRET = "quiz-signing-secret"
CHANNEL = "C0MLPLATFORM"
ZH_CHANNEL = "C0ZHTEAM01"
ALICE = "U0ALICE001"
BOB = "U0BOB00001"
BANK = load_bank()


@pytest.fixture
def slack() -> Iterator[SlackWebAPI]:
    with serve_slack() as api:
        yield api


@contextlib.contextmanager
def running_bot(slack: SlackWebAPI, store: Store | None) -> Iterator[str]:
    config = load(
        Config,
        {
            "clusters": [{"name": "gpu-prod", "namespace": "ml"}],
            "slack": {"languages": {"channels": {ZH_CHANNEL: "zh"}}},
        },
    )
    bot = Bot(config=config, diagnose=lambda cluster, namespace: Diagnosis(cluster=cluster.name), store=store)
    register_quiz(bot)
    app = build_app(
        bot,
        token="xoxb-test",
        signing_secret=SECRET,
        api_url=slack.url,
        surfaces=(*CORE, quiz_actions.register),
    )
    with bolt_over_http(bot, app) as url:
        yield url


class Conversation:
    """One person's side of the quiz: commands and presses, and the answers that come back."""

    def __init__(self, url: str, slack: SlackWebAPI, user: str = ALICE, channel: str = CHANNEL) -> None:
        self.url, self.slack, self.user, self.channel = url, slack, user, channel

    def _answer(self) -> dict[str, Any]:
        seen = len(self.slack.calls_to("response_url"))
        return self.slack.wait_for("response_url", count=seen + 1, timeout=20)[-1].params

    def command(self, text: str) -> dict[str, Any]:
        seen = len(self.slack.calls_to("response_url"))
        body = slash_command_body(
            text=text,
            user_id=self.user,
            channel_id=self.channel,
            response_url=self.slack.response_url(text.replace(" ", "-")),
        )
        answer = post_signed(self.url, body, SECRET)
        assert answer.status == 200 and answer.body == ""  # acked at once; the quiz answers lazily
        return self.slack.wait_for("response_url", count=seen + 1, timeout=20)[-1].params

    def press(self, action_id: str, value: str) -> dict[str, Any]:
        seen = len(self.slack.calls_to("response_url"))
        payload = block_actions_payload(
            action_id, value, self.user, self.channel, response_url=self.slack.response_url("press")
        )
        # A press on an ephemeral message: Slack marks the container and sends no copy of the message.
        payload["container"]["is_ephemeral"] = True
        del payload["message"]
        answer = post_signed(self.url, "payload=" + quote_plus(json.dumps(payload)), SECRET)
        assert answer.status == 200
        return self.slack.wait_for("response_url", count=seen + 1, timeout=20)[-1].params

    def choose(self, message: dict[str, Any], letter: str) -> dict[str, Any]:
        button = next(b for b in buttons(message) if b["text"]["text"] == letter)
        return self.press(button["action_id"], button["value"])

    def next(self, message: dict[str, Any]) -> dict[str, Any]:
        button = next(b for b in buttons(message) if b["action_id"] == ACTION_NEXT)
        return self.press(button["action_id"], button["value"])


def buttons(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for b in message.get("blocks") or [] if b["type"] == "actions" for e in b["elements"]]


def shown(message: dict[str, Any]) -> str:
    return json.dumps(message, ensure_ascii=False)


def assert_valid(message: dict[str, Any]) -> None:
    assert message["text"]
    blocks = message["blocks"]
    assert 0 < len(blocks) <= 50
    assert block_problems(blocks) == []
    for raw in blocks:
        block = Block.parse(raw)
        assert block is not None
        block.validate_json()


def letter_of_answer(index: int) -> str:
    question = BANK.questions[index]
    return question.letter(question.answer)


def letter_of_a_wrong_choice(index: int) -> str:
    question = BANK.questions[index]
    return question.letter(next(c for c in question.choices if not c.correct))


def test_quiz_command_shows_the_first_question_with_a_button_per_choice(
    slack: SlackWebAPI, store: Store
) -> None:
    with running_bot(slack, store) as url:
        question = Conversation(url, slack).command("quiz")
    first = BANK.questions[0]
    assert_valid(question)
    assert question["response_type"] == "ephemeral"
    assert "Question 1 of 15" in shown(question)
    assert first.prompt.en.split("`")[0] in shown(question)
    assert [b["text"]["text"] for b in buttons(question)] == ["A", "B", "C", "D"][: len(first.choices)]
    assert [json.loads(b["value"]) for b in buttons(question)] == [
        {"question": first.id, "choice": c.id} for c in first.choices
    ]
    assert slack.calls_to("chat.postMessage") == []  # nothing in the channel


def test_answering_gives_feedback_with_the_explanation_and_cause_then_the_next_question(
    slack: SlackWebAPI, store: Store
) -> None:
    with running_bot(slack, store) as url:
        alice = Conversation(url, slack)
        question = alice.command("quiz")
        feedback = alice.choose(question, letter_of_answer(0))
        assert_valid(feedback)
        assert feedback["replace_original"] is True
        assert feedback["text"].startswith("Correct. Triage order.")
        assert "Score: 1 correct of 1 answered, 14 to go" in shown(feedback)
        assert [b["action_id"] for b in buttons(feedback)] == [ACTION_NEXT]

        second = alice.next(feedback)
        assert "Question 2 of 15" in shown(second)
        third = alice.next(alice.choose(second, letter_of_answer(1)))
        assert "Question 3 of 15" in shown(third)

        wrong = alice.choose(third, letter_of_a_wrong_choice(2))
    assert_valid(wrong)
    said = shown(wrong)
    assert f"Not quite: the answer is {letter_of_answer(2)}." in said
    assert "Cause 1: Kubernetes resources insufficient or fragmented" in said
    assert "A Pod has to fit on one node." in said
    assert "(your answer)" in said and ":x:" in said
    assert store.answers(ALICE) == {
        BANK.questions[0].id: True,
        BANK.questions[1].id: True,
        BANK.questions[2].id: False,
    }


def test_crafted_payloads_are_refused_and_change_nothing(slack: SlackWebAPI, store: Store) -> None:
    first = BANK.questions[0]
    crafted = [
        ("raydiag_quiz_answer_0", json.dumps({"question": "made-up-question", "choice": "a"})),
        ("raydiag_quiz_answer_1", json.dumps({"question": first.id, "choice": "z"})),
        ("raydiag_quiz_answer_2", json.dumps({"question": first.id})),
        ("raydiag_quiz_answer_0", json.dumps([first.id, first.answer.id])),
        ("raydiag_quiz_answer_3", "not json at all"),
        ("raydiag_quiz_answer_0", json.dumps({"question": first.id, "choice": first.answer.id}) + "x" * 600),
        ("raydiag_quiz_answer_0", ""),
    ]
    with running_bot(slack, store) as url:
        alice = Conversation(url, slack)
        for action_id, value in crafted:
            refused = alice.press(action_id, value)
            assert_valid(refused)
            assert refused["replace_original"] is False
            assert "does not belong to a quiz question I know; nothing was recorded" in refused["text"]
        # An action id outside the quiz's buttons reaches no quiz listener at all.
        payload = block_actions_payload(
            "raydiag_quiz_answer_9", answer_value(first, first.answer.id), ALICE, CHANNEL
        )
        assert post_signed(url, "payload=" + quote_plus(json.dumps(payload)), SECRET).status == 404
    assert store.answers(ALICE) == {}
    assert store.team_results() == []


def test_pressing_an_answered_question_again_keeps_the_first_answer(slack: SlackWebAPI, store: Store) -> None:
    with running_bot(slack, store) as url:
        alice = Conversation(url, slack)
        question = alice.command("quiz")
        alice.choose(question, letter_of_a_wrong_choice(0))
        again = alice.choose(question, letter_of_answer(0))  # the old message's buttons, pressed again
    assert "first answer (wrong) is the one that counts" in shown(again)
    assert "Score: 0 correct of 1 answered" in shown(again)
    assert store.answers(ALICE) == {BANK.questions[0].id: False}


def test_stats_rank_the_team(slack: SlackWebAPI, store: Store) -> None:
    at = store.clock()
    first = BANK.questions[0]
    for question in BANK.questions[:3]:
        record_choice(store, BANK, BOB, question.id, question.answer.id, at)
    record_choice(store, BANK, ALICE, first.id, first.answer.id, at)
    # Someone who played in a terminal: a plain name, not a Slack user id.
    wrong = next(c for c in first.choices if not c.correct)
    record_choice(store, BANK, "terminal-carol", first.id, wrong.id, at)
    with running_bot(slack, store) as url:
        stats = Conversation(url, slack).command("quiz stats")
        chinese = Conversation(url, slack, channel=ZH_CHANNEL).command("quiz stats")
    assert_valid(stats)
    assert stats["response_type"] == "ephemeral"
    lines = next(b["text"]["text"] for b in stats["blocks"] if b["type"] == "section").splitlines()
    assert lines == [
        f"1. <@{BOB}>: 3 correct of 3 answered",
        f"2. <@{ALICE}>: 1 correct of 1 answered",
        "3. terminal-carol: 0 correct of 1 answered",
    ]
    assert "3 people have taken the quiz; it has 15 questions." in shown(stats)
    assert_valid(chinese)
    assert "入门测验：团队成绩" in shown(chinese)
    assert f"1. <@{BOB}>：已答 3 题，答对 3 题" in shown(chinese)


def test_stats_before_anyone_played(slack: SlackWebAPI, store: Store) -> None:
    with running_bot(slack, store) as url:
        stats = Conversation(url, slack).command("quiz stats")
    assert_valid(stats)
    assert "Nobody has taken the quiz yet" in shown(stats)


def test_questions_and_feedback_in_chinese(slack: SlackWebAPI, store: Store) -> None:
    with running_bot(slack, store) as url:
        bob = Conversation(url, slack, user=BOB, channel=ZH_CHANNEL)
        question = bob.command("quiz")
        feedback = bob.choose(question, letter_of_a_wrong_choice(0))
    assert_valid(question)
    assert "入门测验" in shown(question) and "第 1 题，共 15 题" in shown(question)
    assert BANK.questions[0].prompt.zh.split("`")[0] in shown(question)
    assert_valid(feedback)
    assert f"不对，正确答案是 {letter_of_answer(0)}。" in shown(feedback)
    assert "排查顺序" in shown(feedback)
    assert [b["text"]["text"] for b in buttons(feedback)] == ["下一题"]


def test_finishing_then_starting_over(slack: SlackWebAPI, store: Store) -> None:
    at = store.clock()
    for question in BANK.questions[:-1]:
        record_choice(store, BANK, ALICE, question.id, question.answer.id, at)
    with running_bot(slack, store) as url:
        alice = Conversation(url, slack)
        last = alice.command("quiz")
        assert "Question 15 of 15" in shown(last)
        done = alice.next(alice.choose(last, letter_of_answer(len(BANK) - 1)))
        assert_valid(done)
        assert "You have answered all 15 questions: 15 correct." in shown(done)
        [restart] = buttons(done)
        assert restart["action_id"] == ACTION_RESTART
        assert "clears your answers" in restart["confirm"]["text"]["text"]
        assert store.answers(ALICE)
        fresh = alice.press(restart["action_id"], restart["value"])
    assert_valid(fresh)
    assert "Question 1 of 15" in shown(fresh)
    assert store.answers(ALICE) == {}


def test_progress_survives_a_restart_of_the_bot(slack: SlackWebAPI, database: str) -> None:
    first_store = open_store(database)
    with running_bot(slack, first_store) as url:
        alice = Conversation(url, slack)
        alice.choose(alice.command("quiz"), letter_of_answer(0))
    first_store.close()

    second_store = open_store(database)
    try:
        with running_bot(slack, second_store) as url:
            resumed = Conversation(url, slack).command("quiz")
    finally:
        second_store.close()
    assert "Question 2 of 15" in shown(resumed)
    assert "Score: 1 correct of 1 answered, 14 to go" in shown(resumed)


def test_without_a_state_database_the_quiz_says_it_is_not_available(slack: SlackWebAPI) -> None:
    first = BANK.questions[0]
    with running_bot(slack, None) as url:
        alice = Conversation(url, slack)
        for text in ("quiz", "quiz stats"):
            answer = alice.command(text)
            assert "not running here" in answer["text"] and f"`{text}`" in answer["text"]
        pressed = alice.press("raydiag_quiz_answer_0", answer_value(first, first.answer.id))
        assert "not running here" in pressed["text"] and pressed["replace_original"] is False


def test_a_broken_database_is_told_not_raised(slack: SlackWebAPI, tmp_path: Path, database: str) -> None:
    broken = open_store(database)
    broken.close()
    (tmp_path / "raydiag-state.db").write_bytes(b"not a database any more" * 200)
    first = BANK.questions[0]
    with running_bot(slack, broken) as url:
        alice = Conversation(url, slack)
        told = alice.command("quiz")
        pressed = alice.press("raydiag_quiz_answer_0", answer_value(first, first.answer.id))
    for answer in (told, pressed):
        assert_valid(answer)
        assert (
            answer["text"]
            == "The quiz cannot reach its state database just now; please try again in a while."
        )
        assert "raydiag-state.db" not in shown(answer)  # where the database lives stays in the log
