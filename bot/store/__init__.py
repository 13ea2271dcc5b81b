"""raydiag's durable state: one SQL database (SQLite file or PostgreSQL) shared by every replica.

``open_store(url)`` creates or migrates the schema and returns a ``Store``; anything that makes the
database unusable is a ``StoreError`` with one clear line. APScheduler keeps its jobs in the same
database (``Store.engine``), so schedules and their next run times survive restarts together.
"""

from bot.store.connect import open_store
from bot.store.errors import StoreError
from bot.store.store import (
    CONFIG_OWNER,
    Clock,
    PostState,
    QuizResult,
    Schedule,
    ScheduleMode,
    Store,
    StoredDiagnosis,
    Verdict,
    config_schedule_id,
    utc_now,
)

__all__ = [
    "CONFIG_OWNER",
    "Clock",
    "PostState",
    "QuizResult",
    "Schedule",
    "ScheduleMode",
    "Store",
    "StoreError",
    "StoredDiagnosis",
    "Verdict",
    "config_schedule_id",
    "open_store",
    "utc_now",
]
