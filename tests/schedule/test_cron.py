"""Crontab day-of-week numbers (Sunday = 0 or 7) read the way crontab reads them, not APScheduler 3's way."""

from __future__ import annotations

import pytest

from bot.cron import cron_problem, crontab_weekdays


@pytest.mark.parametrize(
    ("field", "days"),
    [
        ("*", "*"),
        ("1-5", "mon,tue,wed,thu,fri"),
        ("0", "sun"),
        ("7", "sun"),
        ("5-7", "sun,fri,sat"),
        ("fri-mon", "sun,mon,fri,sat"),
        ("MON,Wed", "mon,wed"),
        ("*/2", "sun,tue,thu,sat"),
        ("1/2", "mon,wed,fri"),
        ("1-5/2", "mon,wed,fri"),
    ],
)
def test_weekday_fields_keep_their_crontab_meaning(field: str, days: str) -> None:
    assert crontab_weekdays(field) == days


@pytest.mark.parametrize(
    ("cron", "timezone", "problem"),
    [
        ("0 9 * * 8", "UTC", "day of week 8 is not 0-7"),
        ("0 9 * * someday", "UTC", "unknown day of week 'someday'"),
        ("0 9 * * 1/x", "UTC", "bad step in day of week"),
        ("61 9 * * *", "UTC", "61 9 * * *: "),
        ("0 9 * * *", "Europe/Atlantis", "unknown time zone Europe/Atlantis"),
        ("0 9 * *", "UTC", "give five fields"),
    ],
)
def test_schedules_that_cannot_run_say_why(cron: str, timezone: str, problem: str) -> None:
    found = cron_problem(cron, timezone)
    assert found is not None and problem in found


def test_a_good_schedule_has_no_problem() -> None:
    assert cron_problem("*/30 8-18 * * 1-5", "Asia/Shanghai") is None
