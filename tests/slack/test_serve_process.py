"""`raydiag serve --http --port N` as a real process: Bolt's endpoint answers signed commands."""

from __future__ import annotations

import urllib.request
from pathlib import Path

import yaml

from tests.support.bot_process import bot_process
from tests.support.slack_api import post_signed, serve_slack, slash_command_body


def test_http_mode_serves_slack_events_and_health(tmp_path: Path) -> None:
    config = tmp_path / "raydiag.yaml"
    config.write_text(yaml.safe_dump({"clusters": [{"name": "gpu-prod", "namespace": "ml"}]}))
    with serve_slack() as slack, bot_process(config, slack.url, tmp_path / "data") as bot:
        answer = post_signed(bot.events_url, slash_command_body(text="help"), "process-secret")
        assert answer.status == 200
        assert "`gpu-prod`" in str(answer.json()["blocks"])
        assert post_signed(bot.events_url, slash_command_body(text="help"), "wrong").status == 401
        with urllib.request.urlopen(bot.base + "/healthz", timeout=5) as health:
            assert health.status == 200
        with urllib.request.urlopen(bot.base + "/metrics", timeout=5) as answer:
            assert answer.headers["Content-Type"].startswith("text/plain")
            metrics = answer.read().decode()
        # One replica without leader election runs its schedules itself.
        assert "raydiag_schedules_leader 1.0" in metrics
        assert "# TYPE raydiag_diagnosis_seconds histogram" in metrics
        # The kubelet's SIGTERM stops it cleanly (as PID 1 an unhandled SIGTERM would be ignored).
        bot.process.terminate()
        assert bot.process.wait(timeout=15) == 0
    # The default state file went to the data folder the process was given, not the home folder.
    assert (tmp_path / "data" / "raydiag-state.db").is_file()
