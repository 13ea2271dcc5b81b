"""What `/raydiag …` means, word by word, before anything acts on it."""

from __future__ import annotations

import pytest

from bot.config import Config
from bot.slack.commands import parse_command
from bot.snapshot.data import load

CONFIG = load(Config, {"clusters": [{"name": "gpu-prod", "namespace": "ml"}, {"name": "edge"}]})


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("", "help"),
        ("help", "help"),
        ("gpu-prod", "diagnose"),
        ("GPU-PROD", "diagnose"),
        ("gpu-prod capacity", "capacity"),
        ("gpu-prod other-ns", "diagnose"),
        ("gpu-prod Bad_NS", "bad-namespace"),
        ("nowhere", "unknown-cluster"),
        ("gpu-prod a b", "invalid"),
        ("quiz", "quiz"),
        ("quiz stats", "quiz-stats"),
        ("quiz me now", "invalid"),
        ("schedule list", "schedule-list"),
        ("schedule remove ab12cd", "schedule-remove"),
        ("schedule remove ../../etc", "bad-schedule"),
        ("schedule add gpu-prod 0 9 * * 1-5", "schedule-add"),
        ('schedule add gpu-prod "0 9 * * 1-5" Europe/Berlin digest', "schedule-add"),
        ("schedule add gpu-prod 0 9 * * 7", "schedule-add"),
        ("schedule add gpu-prod 0 99 * * *", "bad-schedule"),
        ("schedule add gpu-prod 0 9 * * * Mars/Olympus", "bad-schedule"),
        ("schedule add gpu-prod 0 9 * *", "invalid"),
        ("schedule add nowhere 0 9 * * *", "unknown-cluster"),
        ("schedule add gpu-prod 0 9 * * * $(rm -rf /)", "invalid"),
        ("schedule add gpu-prod 0 9 * * * $(reboot)", "bad-schedule"),
        ("schedule frobnicate", "invalid"),
    ],
)
def test_each_form_is_read_as_one_kind(text: str, kind: str) -> None:
    assert parse_command(text, CONFIG).kind == kind


def test_a_schedule_keeps_its_cron_time_zone_and_mode() -> None:
    command = parse_command("schedule add gpu-prod 30 8 * * 1-5 Asia/Shanghai digest", CONFIG)
    assert command.cluster is not None and command.cluster.name == "gpu-prod"
    assert command.schedule is not None
    assert (command.schedule.cron, command.schedule.timezone, command.schedule.mode) == (
        "30 8 * * 1-5",
        "Asia/Shanghai",
        "digest",
    )
    default = parse_command("schedule add edge 0 * * * *", CONFIG).schedule
    assert default is not None and (default.timezone, default.mode) == ("UTC", "changes")


def test_a_cluster_named_like_a_sub_command_is_still_diagnosed() -> None:
    config = load(Config, {"clusters": [{"name": "quiz"}, {"name": "schedule"}]})
    assert parse_command("quiz", config).kind == "diagnose"
    assert parse_command("schedule", config).kind == "diagnose"


def test_capacity_and_diagnosis_use_the_configured_namespace() -> None:
    assert parse_command("gpu-prod capacity", CONFIG).namespace == "ml"
    assert parse_command("gpu-prod", CONFIG).namespace == "ml"
    assert parse_command("gpu-prod team-a", CONFIG).namespace == "team-a"
