"""The `raydiag` command's contract: exit codes, one JSON object, one-line errors."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from bot.cli import EXIT_USAGE, main, run
from tests.support import scenarios

REPO = Path(__file__).resolve().parents[2]


def _run(args: list[str], stdin: str = "") -> tuple[int, str]:
    out = io.StringIO()
    source = io.TextIOWrapper(io.BytesIO(stdin.encode()), encoding="utf-8")
    code = run(args, source, out)
    return code, out.getvalue()


def _snapshot_file(tmp_path: Path) -> Path:
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(scenarios.gpu_worker_without_toleration().to_json()), encoding="utf-8")
    return path


# The keys of each finding in the JSON contract (``--format json``), spelt out: a change is a
# change of the contract.
FINDING_KEYS = {
    "rule",
    "code",
    "cause",
    "layer",
    "severity",
    "title",
    "subject",
    "evidence",
    "commands",
    "fix",
    "verify",
}


def test_diagnose_json_is_one_object_with_the_contract_keys(tmp_path: Path) -> None:
    code, text = _run(["diagnose", "--snapshot", str(_snapshot_file(tmp_path)), "--format", "json"])
    assert code == 0
    report = json.loads(text)
    assert set(report) == {"cluster", "verdict", "findings", "errors", "similar"}
    assert report["verdict"]["layer"] == "kubernetes"
    top = report["findings"][0]
    assert set(top) == FINDING_KEYS
    assert top["cause"] == 2
    assert top["subject"] == {"kind": "Pod", "name": scenarios.PENDING, "namespace": "ml"}
    assert f"kubectl describe pod {scenarios.PENDING} -n ml" in top["commands"]
    assert any("untolerated taint {nvidia.com/gpu: present}" in e["text"] for e in top["evidence"])


def test_chinese_output(tmp_path: Path) -> None:
    code, text = _run(
        ["diagnose", "--snapshot", str(_snapshot_file(tmp_path)), "--format", "json", "--lang", "zh"]
    )
    report = json.loads(text)
    assert code == 0
    assert any(
        "\u4e00" <= ch <= "\u9fff" for ch in report["findings"][0]["title"] + report["verdict"]["summary"]
    )


def test_text_and_markdown_follow_the_guide_order(tmp_path: Path) -> None:
    path = str(_snapshot_file(tmp_path))
    for fmt, markers in (
        ("text", ["Evidence:", "Commands:", "Fix:", "Verify:"]),
        ("markdown", ["**Evidence**", "**Commands**", "**Fix**", "**Verify**"]),
    ):
        code, text = _run(["diagnose", "--snapshot", path, "--format", fmt])
        assert code == 0
        positions = [text.index(m) for m in markers]
        assert positions == sorted(positions)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["diagnose", "--snapshot", "/nonexistent/file.json"], "cannot read /nonexistent/file.json"),
        (["explain", "/nonexistent/paste.txt"], "cannot read /nonexistent/paste.txt"),
        (["diagnose"], "--snapshot"),
        (["frobnicate"], "invalid choice"),
        (["explain", "-", "--format", "yaml"], "invalid choice"),
    ],
)
def test_bad_usage_is_exit_2_with_one_line(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(args) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and message in lines[0]


@pytest.mark.parametrize(
    "content",
    ['{"kubernetes": {"nodes": [', "not json at all", "[1, 2, 3]", '{"schema": "raydiag.snapshot/v9"}', "{}"],
)
def test_unreadable_snapshot_is_exit_2(
    tmp_path: Path, content: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "snap.json"
    path.write_text(content, encoding="utf-8")
    assert main(["diagnose", "--snapshot", str(path)]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_explain_reads_stdin_and_unknown_text_is_an_empty_diagnosis() -> None:
    code, text = _run(["explain", "-", "--format", "json"], stdin="hello, this is not a cluster\n")
    assert code == 0
    report = json.loads(text)
    assert report["findings"] == []
    assert report["verdict"]["layer"] == "unknown"


def test_binary_junk_is_diagnosed_not_crashed(tmp_path: Path) -> None:
    path = tmp_path / "junk.bin"
    path.write_bytes(bytes(range(256)) * 64)
    code, text = _run(["explain", str(path), "--format", "json"])
    assert code == 0
    assert json.loads(text)["verdict"]["layer"] == "unknown"


def test_rules_lists_every_rule_in_both_languages() -> None:
    code, english = _run(["rules"])
    _, chinese = _run(["rules", "--lang", "zh"])
    assert code == 0
    assert len(english.splitlines()) == len(chinese.splitlines()) >= 40
    assert "RD0101" in english and "RD1006" in chinese


def test_snapshot_written_by_raydiag_reads_back(tmp_path: Path) -> None:
    from bot.read.snapshot_file import load_snapshot, parse_snapshot

    snapshot = parse_snapshot(scenarios.four_gpu_task_waits_on_detached_actor().to_json())
    path = tmp_path / "snapshot.json"
    path.write_text(snapshot.to_json(), encoding="utf-8")
    assert load_snapshot(path) == snapshot


def test_console_script_runs_as_a_process(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "bot",
            "diagnose",
            "--snapshot",
            str(_snapshot_file(tmp_path)),
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["findings"][0]["rule"] == "k8s-untolerated-taint"


@pytest.mark.parametrize(
    ("env", "args", "message"),
    [
        ({}, ["serve"], "SLACK_BOT_TOKEN is not set"),
        ({"SLACK_BOT_TOKEN": "xoxb-1"}, ["serve", "--http"], "SLACK_SIGNING_SECRET is not set"),
        ({"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_SIGNING_SECRET": "s"}, ["serve"], "SLACK_APP_TOKEN"),
        (
            {"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_SIGNING_SECRET": "s", "RAYDIAG_CONFIG": "/nonexistent.yaml"},
            ["serve", "--http"],
            "cannot read config /nonexistent.yaml",
        ),
    ],
)
def test_serve_refuses_to_start_without_what_it_needs(
    env: dict[str, str],
    args: list[str],
    message: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for key in ("SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_APP_TOKEN", "RAYDIAG_CONFIG"):
        monkeypatch.delenv(key, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


def test_progress_is_shown_only_for_slow_steps() -> None:
    import time

    from bot.collect.progress import StderrProgress

    stream = io.StringIO()
    with StderrProgress(stream, quiet_for=0.2) as progress:
        progress("reading Kubernetes")
        progress("reading Ray")  # replaces the first before it was shown
        time.sleep(0.5)
    with StderrProgress(stream, quiet_for=0.2) as quick:
        quick("a fast step")  # finished before it was due: never shown
    time.sleep(0.3)
    assert stream.getvalue() == "raydiag: reading Ray…\n"


def test_verify_refuses_a_timeout_out_of_range_before_reading_anything() -> None:
    for timeout in ("0", "-5", "901"):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            code = main(["verify", "--cluster", "gpu-prod", "--timeout", timeout])
        assert (
            code == EXIT_USAGE and "--timeout must be more than 0 and at most 900 seconds" in err.getvalue()
        )
