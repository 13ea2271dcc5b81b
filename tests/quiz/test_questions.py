"""The question bank as shipped, and the loader's refusal of bad question files (file and field named)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from slack_sdk.models.blocks import Block

from bot.quiz.bank import QUESTIONS_DIR, QuizDataError, load_bank
from bot.quiz.engine import Progress
from bot.slack.quiz_blocks import question_message
from tests.support.slack_api import block_problems

BANK = load_bank()
# Two Chinese characters (or Chinese punctuation) with a space between them: a folded YAML line
# break that leaked into the text.
STRAY_SPACE = re.compile(r"[\u4e00-\u9fff\u3001\u3002\uff0c\uff1a\uff1b\uff1f\uff09] [\u4e00-\u9fff\uff08]")


def texts(question_id: str) -> list[tuple[str, str, str]]:
    question = BANK.get(question_id)
    assert question is not None
    found = [("prompt", "en", question.prompt.en), ("prompt", "zh", question.prompt.zh)]
    found += [("explanation", "en", question.explanation.en), ("explanation", "zh", question.explanation.zh)]
    for choice in question.choices:
        found += [
            (f"choice {choice.id}", "en", choice.text.en),
            (f"choice {choice.id}", "zh", choice.text.zh),
        ]
    return found


def test_at_least_twelve_questions_one_file_each() -> None:
    files = sorted(QUESTIONS_DIR.glob("*.yaml"))
    assert len(BANK) >= 12
    assert [path.stem for path in files] == sorted(question.id for question in BANK)


@pytest.mark.parametrize("question_id", [q.id for q in BANK])
def test_every_question_has_one_right_choice_and_both_languages(question_id: str) -> None:
    question = BANK.get(question_id)
    assert question is not None
    assert 3 <= len(question.choices) <= 4
    assert sum(choice.correct for choice in question.choices) == 1
    for where, lang, text in texts(question_id):
        assert text.strip(), f"{question_id}: {where} has no {lang} text"
        if lang == "zh":
            assert re.search(r"[\u4e00-\u9fff]", text), f"{question_id}: {where} zh is not Chinese: {text!r}"
            assert not STRAY_SPACE.search(text), f"{question_id}: {where} zh has a stray space: {text!r}"
    assert len(question.explanation.en) >= 150 and len(question.explanation.zh) >= 60


def test_every_cause_has_a_question_and_so_do_triage_and_verification() -> None:
    assert {q.cause for q in BANK if q.cause is not None} == set(range(1, 11))
    topics = {q.topic for q in BANK}
    assert {"triage", "verification"} <= topics


def test_the_guides_three_self_test_questions_are_there() -> None:
    self_test = {q.id: q for q in BANK if q.source == "guide-self-test"}
    assert len(self_test) == 3
    # 1: Pods Running but a task pending (which layer first); 2: A100 only, both layers; 3: a Running
    # worker missing from `ray status`.
    running_but_pending = self_test["pod-running-task-pending"]
    assert running_but_pending.topic == "triage"
    assert "ray status" in running_but_pending.answer.text.en
    assert "A100" in self_test["a100-only-both-layers"].prompt.en
    assert self_test["a100-only-both-layers"].cause == 7
    assert "ray status" in self_test["worker-running-not-in-ray"].prompt.en
    assert self_test["worker-running-not-in-ray"].cause == 8


def test_the_right_answer_is_not_always_in_the_same_place() -> None:
    positions = {q.choices.index(q.answer) for q in BANK}
    assert len(positions) >= 3


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_question_renders_as_a_valid_slack_message(lang: str) -> None:
    for question in BANK:
        message = question_message(BANK, question, Progress(0, 0, len(BANK)), lang)  # type: ignore[arg-type]
        assert block_problems(message["blocks"]) == []
        for raw in message["blocks"]:
            block = Block.parse(raw)
            assert block is not None
            block.validate_json()


# -- bad files ------------------------------------------------------------------------------------


def good_question() -> dict[str, object]:
    return {
        "id": "held-gpus",
        "order": 1,
        "topic": "cause",
        "cause": 5,
        "source": "raydiag",
        "prompt": {"en": "Who holds the GPUs?", "zh": "谁占着 GPU？"},
        "choices": [
            {"id": "a", "correct": True, "text": {"en": "A detached actor", "zh": "一个 detached Actor"}},
            {"id": "b", "text": {"en": "The device plugin", "zh": "device plugin"}},
            {"id": "c", "text": {"en": "Nobody", "zh": "没有人"}},
        ],
        "explanation": {"en": "Detached actors keep their GPUs.", "zh": "detached Actor 会一直占着 GPU。"},
    }


def write(directory: Path, data: object, name: str = "held-gpus.yaml") -> Path:
    path = directory / name
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return path


def test_a_good_file_loads(tmp_path: Path) -> None:
    write(tmp_path, good_question())
    bank = load_bank(tmp_path)
    assert [q.id for q in bank] == ["held-gpus"]


def two_right(data: dict) -> None:
    data["choices"][1]["correct"] = True


def none_right(data: dict) -> None:
    data["choices"][0]["correct"] = False


def no_chinese_explanation(data: dict) -> None:
    del data["explanation"]["zh"]


def empty_english_choice(data: dict) -> None:
    data["choices"][2]["text"]["en"] = "  "


def five_choices(data: dict) -> None:
    data["choices"] += [
        {"id": "d", "text": {"en": "d", "zh": "丁"}},
        {"id": "e", "text": {"en": "e", "zh": "戊"}},
    ]


def repeated_choice_id(data: dict) -> None:
    data["choices"][2]["id"] = "b"


def cause_out_of_range(data: dict) -> None:
    data["cause"] = 11


def cause_question_without_cause(data: dict) -> None:
    data["cause"] = None


def unknown_field(data: dict) -> None:
    data["hint"] = "look at ray status"


def unknown_source(data: dict) -> None:
    data["source"] = "internet"


@pytest.mark.parametrize(
    ("spoil", "expected"),
    [
        (two_right, "held-gpus.yaml: choices: exactly one choice must have correct: true, found 2 (a, b)"),
        (none_right, "held-gpus.yaml: choices: exactly one choice must have correct: true, found 0"),
        (no_chinese_explanation, "held-gpus.yaml: explanation.zh: Field required"),
        (empty_english_choice, "held-gpus.yaml: choices.2.text.en: String should have at least 1 character"),
        (five_choices, "held-gpus.yaml: choices: needs 3 to 4 choices, found 5"),
        (repeated_choice_id, "held-gpus.yaml: choices: choice ids must be unique; repeated: b"),
        (cause_out_of_range, "held-gpus.yaml: cause: Input should be less than or equal to 10"),
        (cause_question_without_cause, "held-gpus.yaml: cause: a question on a cause needs the cause number"),
        (unknown_field, "held-gpus.yaml: hint: Extra inputs are not permitted"),
        (unknown_source, "held-gpus.yaml: source: Input should be 'guide-self-test' or 'raydiag'"),
    ],
)
def test_a_bad_file_is_refused_naming_file_and_field(tmp_path: Path, spoil: object, expected: str) -> None:
    data = good_question()
    spoil(data)  # type: ignore[operator]
    write(tmp_path, data)
    with pytest.raises(QuizDataError) as refused:
        load_bank(tmp_path)
    assert str(refused.value).startswith(expected), str(refused.value)


def test_id_must_match_the_file_name(tmp_path: Path) -> None:
    write(tmp_path, good_question(), name="gpus-held.yaml")
    with pytest.raises(QuizDataError, match=r"^gpus-held.yaml: id: 'held-gpus' must equal the file name"):
        load_bank(tmp_path)


def test_two_questions_in_the_same_place_are_refused(tmp_path: Path) -> None:
    write(tmp_path, good_question())
    other = good_question() | {"id": "held-gpus-again"}
    write(tmp_path, other, name="held-gpus-again.yaml")
    with pytest.raises(
        QuizDataError, match=r"^held-gpus.yaml: order: 1 is already used by held-gpus-again.yaml"
    ):
        load_bank(tmp_path)


def test_broken_yaml_and_non_mappings_are_refused(tmp_path: Path) -> None:
    (tmp_path / "broken.yaml").write_text("id: broken\nprompt: {en: [unclosed\n", encoding="utf-8")
    with pytest.raises(QuizDataError, match=r"^broken.yaml: cannot read YAML"):
        load_bank(tmp_path)
    (tmp_path / "broken.yaml").write_text("- just\n- a list\n", encoding="utf-8")
    with pytest.raises(QuizDataError, match=r"^broken.yaml: expected a mapping at the top level"):
        load_bank(tmp_path)


def test_an_empty_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(QuizDataError, match="no question files"):
        load_bank(tmp_path)
