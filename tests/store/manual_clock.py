"""A clock the test moves by hand, for the store and the scheduler (both take a ``clock`` callable)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta


class ManualClock:
    def __init__(self, start: datetime = datetime(2025, 3, 3, 8, 55, tzinfo=UTC)) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> datetime:
        self.now += timedelta(**delta)
        return self.now

    def set(self, when: datetime) -> datetime:
        self.now = when
        return self.now
