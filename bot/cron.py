"""Cron expressions as people write them, turned into APScheduler triggers; fire-time arithmetic.

APScheduler 3 numbers weekdays from Monday (0 = Monday) while crontab numbers them from Sunday
(0 or 7 = Sunday), and ``CronTrigger.from_crontab`` passes the field through unchanged: ``1-5``
would run Tuesday to Saturday. The day-of-week field is therefore rewritten into day names first,
so ``0 9 * * 1-5`` means weekdays at 09:00, as it does in every crontab.

A leaf: nothing from raydiag, so the config and the command grammar check schedules without
importing the scheduler package. APScheduler itself (about 120 ms to import) loads on first use.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

if TYPE_CHECKING:
    from apscheduler.triggers.cron import CronTrigger

_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")


def _day(token: str) -> int:
    if token.isdigit():
        number = int(token)
        if number > 7:
            raise ValueError(f"day of week {token} is not 0-7")
        return number
    if token[:3] in _DAYS:
        return _DAYS.index(token[:3])
    raise ValueError(f"unknown day of week {token!r}")


def crontab_weekdays(field: str) -> str:
    """A crontab day-of-week field (Sunday = 0 or 7) as day names APScheduler reads the same way."""
    if field in ("*", "?"):
        return "*"
    days: set[int] = set()
    for part in field.lower().split(","):
        base, _, step = part.partition("/")
        stride = int(step) if step.isdigit() and int(step) > 0 else None
        if step and stride is None:
            raise ValueError(f"bad step in day of week {part!r}")
        if base in ("*", "?"):
            first, last = 0, 6
        elif "-" in base:
            start, _, end = base.partition("-")
            first, last = _day(start), _day(end)
            if last < first:  # fri-sun: through the end of the week
                last += 7
        else:
            first = last = _day(base)
            if stride:  # 1/2 means from Monday, every second day
                last = 6
        days.update(day % 7 for day in range(first, last + 1, stride or 1))
    return ",".join(_DAYS[day] for day in sorted(days))


def cron_trigger(cron: str, timezone: str) -> CronTrigger:
    """The trigger for five crontab fields in an IANA time zone; ValueError says what is wrong."""
    fields = cron.split()
    if len(fields) != 5:
        raise ValueError("give five fields (minute hour day-of-month month day-of-week)")
    minute, hour, day, month, weekday = fields
    from apscheduler.triggers.cron import CronTrigger  # noqa: PLC0415 - lazy: ~120 ms, see the module docstring

    return CronTrigger(
        minute=minute,
        hour=hour,
        day=day,
        month=month,
        day_of_week=crontab_weekdays(weekday),
        timezone=ZoneInfo(timezone),
    )


def cron_problem(cron: str, timezone: str) -> str | None:
    """Why this schedule cannot run, or None when it can."""
    try:
        ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError):
        return f"unknown time zone {timezone}"
    try:
        cron_trigger(cron, timezone)
    except ValueError as error:
        return f"{cron}: {error}"
    return None


def next_fire_time(cron: str, timezone: str, now: datetime) -> datetime | None:
    fire: datetime | None = cron_trigger(cron, timezone).get_next_fire_time(None, now)
    return fire


def latest_fire_time(cron: str, timezone: str, now: datetime) -> datetime | None:
    """The most recent fire time at or before ``now`` — the run a late or coalesced job is for.

    A cron trigger only looks forward, so look forward from ever further back (an hour, then
    doubling up to a year and a half) and keep the last fire time that is not after ``now``.
    """
    trigger = cron_trigger(cron, timezone)
    window = timedelta(hours=1)
    while window <= timedelta(days=550):
        latest = None
        fire: datetime | None = trigger.get_next_fire_time(None, now - window)
        while fire is not None and fire <= now:
            latest = fire
            fire = trigger.get_next_fire_time(fire, fire + timedelta(seconds=1))
        if latest is not None:
            return latest
        window *= 2
    return None
