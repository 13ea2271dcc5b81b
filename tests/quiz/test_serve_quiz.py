"""`raydiag serve --http` as a real process plays the quiz, and a restarted process remembers the score."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import quote_plus

import yaml

from bot.quiz.bank import load_bank
from tests.support.bot_process import bot_process
from tests.support.slack_api import (
    SlackWebAPI,
    block_actions_payload,
    post_signed,
    serve_slack,
    slash_command_body,
)

SECRET = "process-quiz-secret"
USER = "U0NEWHIRE1"
CHANNEL = "C0ONBOARD1"
BANK = load_bank()


def quiz_command(url: str, slack: SlackWebAPI) -> dict[str, object]:
    seen = len(slack.calls_to("response_url"))
    body = slash_command_body(
        text="quiz", user_id=USER, channel_id=CHANNEL, response_url=slack.response_url("quiz")
    )
    assert post_signed(url, body, SECRET).status == 200
    return slack.wait_for("response_url", count=seen + 1, timeout=30)[-1].params


def test_the_served_bot_keeps_quiz_scores_across_a_restart(tmp_path: Path) -> None:
    config = tmp_path / "raydiag.yaml"
    state = tmp_path / "state" / "raydiag-state.db"
    config.write_text(
        yaml.safe_dump(
            {"clusters": [{"name": "gpu-prod", "namespace": "ml"}], "state": {"url": f"sqlite:///{state}"}}
        ),
        encoding="utf-8",
    )
    first = BANK.questions[0]
    with serve_slack() as slack:
        with bot_process(config, slack.url, tmp_path / "data", secret=SECRET) as bot:
            url = bot.events_url
            question = quiz_command(url, slack)
            assert "Question 1 of 15" in json.dumps(question)
            [right] = [
                e
                for block in question["blocks"]  # type: ignore[attr-defined]
                if block["type"] == "actions"
                for e in block["elements"]
                if json.loads(e["value"])["choice"] == first.answer.id
            ]
            payload = block_actions_payload(
                right["action_id"], right["value"], USER, CHANNEL, response_url=slack.response_url("press")
            )
            assert post_signed(url, "payload=" + quote_plus(json.dumps(payload)), SECRET).status == 200
            feedback = slack.wait_for("response_url", count=2, timeout=30)[-1].params
            assert feedback["text"].startswith("Correct.")

        with bot_process(config, slack.url, tmp_path / "data", secret=SECRET) as bot:
            resumed = quiz_command(bot.events_url, slack)
    said = json.dumps(resumed)
    assert "Question 2 of 15" in said and "Score: 1 correct of 1 answered" in said
