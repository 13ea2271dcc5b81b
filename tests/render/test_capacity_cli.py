"""`raydiag capacity`: the chart to a file, the figures on stdout, one-line errors with exit code 2."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from bot.cli import main, run
from tests.support import scenarios

REPO = Path(__file__).resolve().parents[2]


def snapshot_file(tmp_path: Path) -> Path:
    path = tmp_path / "never-joined.json"
    path.write_text(json.dumps(scenarios.gpu_worker_runs_but_never_joined().to_json()), encoding="utf-8")
    return path


def capacity(args: list[str]) -> str:
    out = io.StringIO()
    assert run(["capacity", *args], io.StringIO(), out) == 0
    return out.getvalue()


def test_writes_the_chart_and_prints_the_table(tmp_path: Path) -> None:
    chart = tmp_path / "chart.png"
    text = capacity(["--snapshot", str(snapshot_file(tmp_path)), "-o", str(chart)])
    with Image.open(chart) as image:
        assert (image.format, image.size) == ("PNG", (1200, 600))
    lines = text.splitlines()
    assert lines[0] == "GPUs of raycluster-gpu, layer by layer"
    assert lines[2] == "model  allocatable  given to Ray Pods  registered in Ray  in use  waiting"
    assert lines[3].split() == ["A100", "8", "8", "4", "1", "0"]
    assert "4 of the 8 GPUs given to Ray Pods are not registered in Ray" in text
    assert lines[-1] == f"Chart: {chart}"


def test_json_is_one_object_with_the_figures(tmp_path: Path) -> None:
    chart = tmp_path / "chart.png"
    report = json.loads(
        capacity(["--snapshot", str(snapshot_file(tmp_path)), "-o", str(chart), "--format", "json"])
    )
    picture = report.pop("capacity")
    assert report == {
        "cluster": "raycluster-gpu",
        "chart": str(chart),
        "summary": "A100: 4 of the 8 GPUs given to Ray Pods are not registered in Ray (causes 4 and 8)",
        "models": [
            {
                "model": "A100",
                "allocatable": 8.0,
                "given_to_ray_pods": 8.0,
                "registered_in_ray": 4.0,
                "in_use": 1.0,
                "pending_demand": 0.0,
            }
        ],
    }
    # The diagnosis's whole GPU picture comes along, both layers read.
    assert picture["layers_read"] == ["kubernetes", "ray"]
    assert picture["models"] == report["models"]
    assert picture["gpu_nodes"] == 2 and picture["ray_nodes_alive"] == 4


def test_chinese_table(tmp_path: Path) -> None:
    text = capacity(
        ["--snapshot", str(snapshot_file(tmp_path)), "-o", str(tmp_path / "c.png"), "--lang", "zh"]
    )
    assert text.splitlines()[0] == "raycluster-gpu 的 GPU，逐层看"
    assert "型号" in text and "没有在 Ray 中登记" in text and text.rstrip().endswith("c.png")


def test_an_existing_file_is_replaced(tmp_path: Path) -> None:
    chart = tmp_path / "chart.png"
    chart.write_bytes(b"old")
    capacity(["--snapshot", str(snapshot_file(tmp_path)), "-o", str(chart)])
    assert chart.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


def usage_error(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["capacity", *args]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("raydiag: error: ")
    return lines[0]


def test_a_directory_is_never_overwritten(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "charts"
    folder.mkdir()
    (folder / "keep.txt").write_text("mine", encoding="utf-8")
    message = usage_error(["--snapshot", str(snapshot_file(tmp_path)), "-o", str(folder)], capsys)
    assert "is a directory" in message
    assert [p.name for p in folder.iterdir()] == ["keep.txt"]


def test_bad_input_is_one_line_and_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    chart = tmp_path / "chart.png"
    assert "cannot" in usage_error(["--snapshot", str(tmp_path / "missing.json"), "-o", str(chart)], capsys)
    broken = tmp_path / "broken.json"
    broken.write_text('{"kubernetes": {"nodes": [', encoding="utf-8")
    usage_error(["--snapshot", str(broken), "-o", str(chart)], capsys)
    usage_error(
        ["--snapshot", str(snapshot_file(tmp_path)), "-o", str(tmp_path / "no" / "such" / "c.png")], capsys
    )
    usage_error(["--snapshot", str(snapshot_file(tmp_path))], capsys)  # no -o
    usage_error(["-o", str(chart)], capsys)  # neither --snapshot nor --cluster
    usage_error(["--cluster", "Not_A_Name!", "-o", str(chart)], capsys)
    assert not chart.exists()


def test_round_trip_through_the_installed_command(tmp_path: Path) -> None:
    chart = tmp_path / "chart.png"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "bot.cli",
            "capacity",
            "--snapshot",
            str(snapshot_file(tmp_path)),
            "-o",
            str(chart),
            "--format",
            "json",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["models"][0]["registered_in_ray"] == 4.0
    with Image.open(chart) as image:
        assert image.size == (1200, 600)


def test_json_says_null_for_the_stages_of_a_layer_not_read(tmp_path: Path) -> None:
    path = tmp_path / "no-dashboard.json"
    path.write_text(json.dumps(scenarios.dashboard_connection_refused().to_json()), encoding="utf-8")
    report = json.loads(
        capacity(["--snapshot", str(path), "-o", str(tmp_path / "c.png"), "--format", "json"])
    )
    [a100] = report["models"]
    assert (a100["given_to_ray_pods"], a100["registered_in_ray"], a100["in_use"]) == (8.0, None, None)
    assert report["capacity"]["layers_read"] == ["kubernetes"]
    assert "causes 4 and 8" not in report["summary"]
