"""The command line diagnoses through the bot's one ``Diagnoser``, like every trigger: given a meter,
its diagnoses are counted under the trigger ``cli``, whether it explains a paste or judges a
snapshot file."""

from __future__ import annotations

import io
import json
from pathlib import Path

from bot.cli import run
from bot.observe.metrics import Metrics
from tests.support import scenarios

CASES = Path(__file__).resolve().parents[1] / "cases"


def _count(metrics: Metrics, trigger: str) -> float:
    return metrics.registry.get_sample_value("raydiag_diagnosis_seconds_count", {"trigger": trigger}) or 0.0


def test_explain_and_a_snapshot_file_are_diagnosed_and_metered_as_cli(tmp_path: Path) -> None:
    metrics = Metrics()
    paste = CASES / "ray-gpu-driver-error" / "fires" / "raylet-nvml.txt"
    out = io.StringIO()
    assert run(["explain", str(paste), "--format", "json"], io.StringIO(), out, meter=metrics) == 0
    assert "ray-gpu-driver-error" in out.getvalue()
    assert _count(metrics, "cli") == 1

    snapshot = tmp_path / "snapshot.json"
    snapshot.write_text(json.dumps(scenarios.third_gpu_worker_no_free_gpu().to_json()), encoding="utf-8")
    out = io.StringIO()
    assert (
        run(["diagnose", "--snapshot", str(snapshot), "--format", "json"], io.StringIO(), out, meter=metrics)
        == 0
    )
    assert "k8s-insufficient-resources" in out.getvalue()
    assert _count(metrics, "cli") == 2
    diagnoses = metrics.registry.get_sample_value(
        "raydiag_diagnoses_total", {"cluster": "raycluster-gpu", "outcome": "findings"}
    )
    assert diagnoses == 1


def test_without_a_meter_the_command_line_counts_nothing_and_still_answers() -> None:
    paste = CASES / "ray-gpu-driver-error" / "fires" / "raylet-nvml.txt"
    out = io.StringIO()
    assert run(["explain", str(paste)], io.StringIO(), out) == 0
    assert "RD0404" in out.getvalue()
