"""The tables of raydiag's state database, as SQLAlchemy Core tables.

One schema serves SQLite (one replica, a file) and PostgreSQL (several replicas). Whatever must
happen at most once across replicas — answering a Slack event, posting a scheduled run, counting
a quiz answer — is a primary key, so the database itself refuses the second writer: an insert
that raises ``IntegrityError`` is the loser of the race, with no lock held in Python.

Timestamps are stored as UTC and always come back timezone-aware (SQLite keeps no zone).
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import (
    Boolean,
    Column,
    DateTime,
    Dialect,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    TypeDecorator,
)


class UTCDateTime(TypeDecorator[datetime]):
    """A timezone-aware UTC datetime on every backend; naive datetimes are refused, not guessed."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError(f"naive datetime {value.isoformat()} given to the state store; use UTC")
        utc = value.astimezone(UTC)
        # SQLite stores text without a zone; PostgreSQL's timestamptz keeps the instant.
        return utc.replace(tzinfo=None) if dialect.name == "sqlite" else utc

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


metadata = MetaData()

schema_version = Table(
    "raydiag_schema_version",
    metadata,
    Column("version", Integer, primary_key=True),
    Column("applied_at", UTCDateTime, nullable=False),
)

schedules = Table(
    "raydiag_schedules",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("channel", String(32), nullable=False),
    Column("cluster", String(63), nullable=False),
    Column("namespace", String(63), nullable=False),
    Column("cron", String(200), nullable=False),
    Column("timezone", String(64), nullable=False),
    Column("mode", String(16), nullable=False),
    # "config" for schedules from the configuration file (re-synced at start), else a Slack user id.
    Column("created_by", String(32), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
)

mutes = Table(
    "raydiag_mutes",
    metadata,
    Column("cluster", String(63), primary_key=True),
    Column("until", UTCDateTime, nullable=False),
    Column("muted_by", String(32), nullable=False),
)

seen_keys = Table(
    "raydiag_seen_keys",
    metadata,
    Column("key", String(200), primary_key=True),
    Column("expires_at", UTCDateTime, nullable=False),
    Index("raydiag_seen_keys_expiry", "expires_at"),
)

post_state = Table(
    "raydiag_post_state",
    metadata,
    Column("schedule_id", String(32), primary_key=True),
    # sha256 of the sorted finding keys last posted, so "did anything change" is one comparison.
    Column("fingerprint", String(64), nullable=False),
    Column("posted_keys", Text, nullable=False),  # JSON list of finding keys
    Column("first_seen", Text, nullable=False),  # JSON {finding key: ISO time first observed}
    Column("announced", Text, nullable=False),  # JSON {finding key: [threshold minutes announced]}
    Column("channel", String(32)),
    Column("message_ts", String(32)),
    Column("posted_at", UTCDateTime),
    Column("observed_at", UTCDateTime, nullable=False),
)

claimed_runs = Table(
    "raydiag_claimed_runs",
    metadata,
    Column("schedule_id", String(32), nullable=False),
    Column("fire_time", UTCDateTime, nullable=False),
    Column("claimed_at", UTCDateTime, nullable=False),
    PrimaryKeyConstraint("schedule_id", "fire_time", name="raydiag_claimed_runs_once"),
)

quiz_answers = Table(
    "raydiag_quiz_answers",
    metadata,
    Column("user_id", String(32), nullable=False),
    Column("question_id", String(64), nullable=False),
    Column("choice", String(64), nullable=False),
    Column("correct", Boolean, nullable=False),
    Column("answered_at", UTCDateTime, nullable=False),
    PrimaryKeyConstraint("user_id", "question_id", name="raydiag_quiz_answers_first"),
)

# A diagnosis posted in Slack with "Right cause?" buttons: what it was given (redacted) and what it said,
# kept so that a user's verdict on it becomes a corpus case (``raydiag corpus export``).
diagnoses = Table(
    "raydiag_diagnoses",
    metadata,
    Column("id", String(32), primary_key=True),
    # The message carrying the buttons: a verdict pressed anywhere else is refused.
    Column("channel", String(32), nullable=False),
    Column("message_ts", String(32), nullable=False),
    Column("thread_ts", String(32)),  # where the audit line goes; None: the message is a thread root
    Column("source_ts", String(32)),  # the person's message the input came from (a paste), if any
    Column("trigger", String(16), nullable=False),
    Column("cluster", String(63)),
    Column("input", Text, nullable=False),  # redacted before it is stored
    Column("diagnosis", Text, nullable=False),  # the Diagnosis as JSON
    Column("asked_cause", Integer),  # the cause "Right cause?" asks about; None: no numbered cause
    Column("posted_at", UTCDateTime, nullable=False),
    Index("raydiag_diagnoses_message", "channel", "message_ts"),
)

verdicts = Table(
    "raydiag_verdicts",
    metadata,
    Column("diagnosis_id", String(32), nullable=False),
    Column("user_id", String(32), nullable=False),
    Column("is_right", Boolean, nullable=False),
    Column("cause", Integer),  # the true cause when wrong; None with ``other`` for "something else"
    Column("other", Text),
    Column("given_at", UTCDateTime, nullable=False),
    # One verdict per person per diagnosis: a repeated click is the database's to refuse.
    PrimaryKeyConstraint("diagnosis_id", "user_id", name="raydiag_verdicts_once"),
)

# APScheduler's SQLAlchemyJobStore keeps scheduled jobs here; the table's shape is APScheduler's.
SCHEDULER_JOB_TABLE = "raydiag_scheduler_jobs"

VERSION_1_TABLES = (schedules, mutes, seen_keys, post_state, claimed_runs, quiz_answers)
VERSION_2_TABLES = (diagnoses, verdicts)
