"""`raydiag quiz` in a terminal, answers piped in, scores kept in a real SQLite state database."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from bot.cli import main, run
from bot.quiz.bank import load_bank
from bot.store import open_store

REPO = Path(__file__).resolve().parents[2]
BANK = load_bank()


def number_of_answer(index: int) -> str:
    question = BANK.questions[index]
    return str(question.choices.index(question.answer) + 1)


def number_of_a_wrong_choice(index: int) -> str:
    question = BANK.questions[index]
    return str(next(i for i, c in enumerate(question.choices, start=1) if not c.correct))


def quiz(db: Path, typed: str, *extra: str, user: str = "alice") -> str:
    out = io.StringIO()
    stdin = io.TextIOWrapper(io.BytesIO(typed.encode()), encoding="utf-8")
    assert run(["quiz", "--db", str(db), "--user", user, *extra], stdin, out) == 0
    return out.getvalue()


def results(db: Path) -> dict[str, tuple[int, int]]:
    store = open_store(f"sqlite:///{db}")
    try:
        return {r.user: (r.answered, r.correct) for r in store.team_results()}
    finally:
        store.close()


def test_piped_right_answers_play_the_whole_quiz_and_keep_score(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    typed = "\n".join(number_of_answer(i) for i in range(len(BANK))) + "\n"
    shown = quiz(db, typed)
    assert shown.count("Correct.") == len(BANK)
    assert f"Question {len(BANK)} of {len(BANK)}" in shown
    assert f"You have answered all {len(BANK)} questions: {len(BANK)} correct." in shown
    assert results(db) == {"alice": (len(BANK), len(BANK))}
    # Running it again shows the final score and how to start over, and asks nothing.
    again = quiz(db, "")
    assert "Question" not in again and "raydiag quiz --reset" in again


def test_a_wrong_answer_is_explained_with_its_cause(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    # Questions 1 and 2 right, then a wrong choice on the fragmentation question (cause 1).
    assert BANK.questions[2].id == "fragmented-gpus"
    typed = f"{number_of_answer(0)}\n{number_of_answer(1)}\n{number_of_a_wrong_choice(2)}\nq\n"
    shown = quiz(db, typed)
    feedback = shown.split("Question 3 of")[1]
    assert f"Not quite: the answer is {number_of_answer(2)}." in feedback
    assert "Cause 1: Kubernetes resources insufficient or fragmented" in feedback
    assert "A Pod has to fit on one node." in feedback
    assert "Score: 2 correct of 3 answered" in feedback
    assert "Triage order" in shown  # the first two are about the triage order, not a cause
    assert results(db) == {"alice": (3, 2)}


def test_q_and_end_of_input_stop_with_progress_saved_and_the_next_run_resumes(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    first = quiz(db, f"{number_of_answer(0)}\nq\n")
    assert "Your progress is saved" in first
    second = quiz(db, f"{number_of_a_wrong_choice(1)}\n")  # then the input ends
    assert second.lstrip().startswith("Onboarding quiz · Question 2 of")
    assert "Your progress is saved" in second
    third = quiz(db, "q\n")
    assert "Question 3 of" in third and "Score: 1 correct of 2 answered" in third


def test_anything_but_a_choice_number_asks_again_and_records_nothing(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    shown = quiz(db, "x\n0\n9\n\n1 2\nDROP TABLE quiz_answers;\nq\n")
    assert shown.count("Type a number from 1 to 4, or q to quit.") == 6
    assert results(db) == {}


def test_chinese(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    shown = quiz(
        db,
        f"{number_of_answer(0)}\n{number_of_answer(1)}\n{number_of_a_wrong_choice(2)}\nq\n",
        "--lang",
        "zh",
    )
    assert "入门测验 · 第 1 题，共 15 题" in shown
    assert "回答正确。" in shown
    assert f"不对，正确答案是 {number_of_answer(2)}。" in shown
    assert "原因 1：Kubernetes 资源不足或碎片化" in shown
    assert "进度已保存" in shown


def test_stats_and_reset(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    assert "Nobody has taken the quiz yet" in quiz(db, "", "--stats")
    quiz(db, f"{number_of_answer(0)}\n{number_of_answer(1)}\nq\n", user="alice")
    quiz(db, f"{number_of_a_wrong_choice(0)}\nq\n", user="bob")
    stats = quiz(db, "", "--stats")
    assert stats.splitlines() == [
        "Onboarding quiz: team results",
        "1. alice: 2 correct of 2 answered",
        "2. bob: 0 correct of 1 answered",
        f"2 people have taken the quiz; it has {len(BANK)} questions.",
    ]
    assert "Your answers were cleared." in quiz(db, "", "--reset", user="alice")
    assert results(db) == {"bob": (1, 0)}


def test_the_default_database_is_the_bots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAYDIAG_DATA_DIR", str(tmp_path / "data"))
    out = io.StringIO()
    stdin = io.TextIOWrapper(io.BytesIO(f"{number_of_answer(0)}\nq\n".encode()), encoding="utf-8")
    assert run(["quiz", "--user", "alice"], stdin, out) == 0
    assert results(tmp_path / "data" / "raydiag-state.db") == {"alice": (1, 1)}


def test_config_state_url_names_the_database(tmp_path: Path) -> None:
    db = tmp_path / "shared-state.db"
    config = tmp_path / "raydiag.yaml"
    config.write_text(yaml.safe_dump({"state": {"url": f"sqlite:///{db}"}}), encoding="utf-8")
    out = io.StringIO()
    stdin = io.TextIOWrapper(io.BytesIO(f"{number_of_answer(0)}\nq\n".encode()), encoding="utf-8")
    assert run(["quiz", "--config", str(config), "--user", "alice"], stdin, out) == 0
    assert results(db) == {"alice": (1, 1)}


def test_an_unusable_database_or_user_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corrupt = tmp_path / "corrupt.db"
    corrupt.write_bytes(b"this is not a SQLite database at all" * 100)
    assert main(["quiz", "--db", str(corrupt), "--user", "alice"]) == 2
    error = capsys.readouterr().err
    assert error.startswith("raydiag: error: ") and "corrupt.db" in error
    assert error.count("\n") == 1
    assert corrupt.read_bytes().startswith(b"this is not")  # left as it was

    assert main(["quiz", "--db", str(tmp_path / "ok.db"), "--user", " "]) == 2
    assert "--user must be" in capsys.readouterr().err
    assert main(["quiz", "--db", "mysql://db.example/raydiag", "--user", "alice"]) == 2
    assert "unsupported database" in capsys.readouterr().err
    assert main(["quiz", "--stats", "--reset"]) == 2


def test_the_installed_command_reads_answers_from_a_pipe(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    done = subprocess.run(
        [sys.executable, "-m", "bot", "quiz", "--db", str(db), "--user", "pipe"],
        input=f"{number_of_answer(0)}\n",
        check=False,
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "Correct." in done.stdout and "Your progress is saved" in done.stdout
    assert results(db) == {"pipe": (1, 1)}
