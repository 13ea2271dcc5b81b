"""Versioned schema migrations, applied on start in one transaction.

``raydiag_schema_version`` holds one row per applied step. On start the store takes a lock (a
PostgreSQL advisory lock; SQLite's write lock via ``BEGIN IMMEDIATE``), reads the highest version,
and applies the missing steps in order, each recording its version, all in one transaction: two
replicas starting together apply each step once, and a failed step leaves the database as it was.
A database written by a newer raydiag (a version this code does not know) is refused with a clear
message rather than used half-understood.

Adding a step: append a ``Step`` with the next version. Steps are history — never edit a released
step; a changed table gets a new step that alters it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
from sqlalchemy import Connection, func, insert, select, text

from bot.store.errors import StoreError
from bot.store.schema import (
    SCHEDULER_JOB_TABLE,
    VERSION_1_TABLES,
    VERSION_2_TABLES,
    metadata,
    schema_version,
)

# Any constant; every raydiag replica takes the same PostgreSQL advisory lock while migrating.
_MIGRATION_LOCK = 7_261_904_315


@dataclass(frozen=True)
class Step:
    version: int
    what: str
    apply: Callable[[Connection], None]


def _create_state_tables(connection: Connection) -> None:
    metadata.create_all(connection, tables=list(VERSION_1_TABLES))
    # APScheduler's job table (its own definition) lives in the same database; created here, under
    # the migration lock, so that replicas starting together do not race to create it.
    jobs = SQLAlchemyJobStore(engine=connection.engine, tablename=SCHEDULER_JOB_TABLE).jobs_t
    jobs.create(connection, checkfirst=True)


def _create_verdict_tables(connection: Connection) -> None:
    metadata.create_all(connection, tables=list(VERSION_2_TABLES))


STEPS: tuple[Step, ...] = (
    Step(1, "state tables and the scheduler's job table", _create_state_tables),
    Step(2, "diagnoses posted in Slack and users' verdicts on them", _create_verdict_tables),
)


def current_version(connection: Connection) -> int:
    schema_version.create(connection, checkfirst=True)
    return int(connection.execute(select(func.max(schema_version.c.version))).scalar() or 0)


def migrate(connection: Connection, now: datetime, steps: Sequence[Step] = STEPS) -> list[int]:
    """Bring the schema up to the last step inside the caller's transaction; the versions applied."""
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _MIGRATION_LOCK})
    found = current_version(connection)
    latest = steps[-1].version if steps else 0
    if found > latest:
        raise StoreError(
            f"the state database has schema version {found}, newer than this raydiag knows ({latest}); "
            "run the newer raydiag, or point state.url at another database"
        )
    applied = []
    for step in steps:
        if step.version <= found:
            continue
        step.apply(connection)
        connection.execute(insert(schema_version).values(version=step.version, applied_at=now))
        applied.append(step.version)
    return applied
