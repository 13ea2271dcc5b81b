"""The state store: schedules, mutes, dedupe keys, last posts, claimed runs, quiz answers, verdicts.

Several replicas may share one PostgreSQL database, so every "only once" question is answered by
the database: an insert into a primary key either wins or raises ``IntegrityError`` (the other
replica won). Nothing here reads the clock: times are passed in, and ``Store.clock`` is the one
clock the callers share, so tests move time by hand.

Every database failure leaves this module as ``StoreError`` with one line naming the database
(passwords hidden) and the problem.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import secrets
import string
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Literal

from sqlalchemy import (
    Connection,
    Engine,
    RowMapping,
    case,
    delete,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from bot.store.errors import StoreError
from bot.store.schema import (
    claimed_runs,
    diagnoses,
    mutes,
    post_state,
    quiz_answers,
    schedules,
    seen_keys,
    verdicts,
)

Clock = Callable[[], datetime]
ScheduleMode = Literal["changes", "digest"]
CONFIG_OWNER = "config"
# How long a claimed run is remembered: far longer than any outage a missed run is replayed after.
CLAIM_MEMORY = timedelta(days=30)
# How long a posted diagnosis nobody gave a verdict on is kept: a verdict comes while the thread is
# fresh; one with verdicts is kept until someone deletes its message (it is a corpus case).
DIAGNOSIS_MEMORY = timedelta(days=30)
_ID_ALPHABET = string.ascii_lowercase + string.digits


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class Schedule:
    """A health post: which cluster, into which channel, when (cron in a time zone), and how."""

    id: str
    channel: str
    cluster: str
    namespace: str
    cron: str
    timezone: str
    mode: ScheduleMode
    created_by: str
    created_at: datetime

    @property
    def from_config(self) -> bool:
        return self.created_by == CONFIG_OWNER


@dataclass(frozen=True)
class PostState:
    """What a schedule last told its channel, and what it has observed since.

    ``posted_keys`` are the finding keys of the last post (what the channel knows);
    ``first_seen`` holds every finding observed in the latest run and when it was first observed
    (updated on quiet runs too, so durations are true); ``announced`` the duration thresholds (in
    minutes) already announced per finding, so each is said once.
    """

    schedule_id: str
    posted_keys: frozenset[str] = frozenset()
    first_seen: Mapping[str, datetime] = field(default_factory=dict)
    announced: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    channel: str | None = None
    message_ts: str | None = None
    posted_at: datetime | None = None
    observed_at: datetime | None = None

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.posted_keys)


def fingerprint(keys: frozenset[str]) -> str:
    return hashlib.sha256("\n".join(sorted(keys)).encode()).hexdigest()


@dataclass(frozen=True)
class QuizResult:
    user: str
    answered: int
    correct: int
    last_at: datetime


@dataclass(frozen=True)
class StoredDiagnosis:
    """A diagnosis posted in Slack with "Right cause?" buttons, kept for the verdicts on it.

    ``input`` is what it was given, redacted; ``diagnosis`` the Diagnosis as JSON; ``asked_cause``
    the cause the buttons ask about (None: the diagnosis named no numbered cause).
    """

    id: str
    channel: str
    message_ts: str
    thread_ts: str | None
    source_ts: str | None
    trigger: str
    cluster: str | None
    input: str
    diagnosis: str
    asked_cause: int | None
    posted_at: datetime


@dataclass(frozen=True)
class Verdict:
    """One person's answer to "Right cause?": right, or the true cause, or something else in words."""

    diagnosis_id: str
    user: str
    right: bool
    cause: int | None
    other: str | None
    given_at: datetime


def config_schedule_id(
    channel: str, cluster: str, namespace: str, cron: str, timezone: str, mode: str
) -> str:
    """A stable id for a schedule from the configuration: the same entry gets the same id every start."""
    digest = hashlib.sha256(f"{channel}|{cluster}|{namespace}|{cron}|{timezone}|{mode}".encode()).hexdigest()
    return f"cfg{digest[:7]}"


class Store:
    """raydiag's durable state in one SQL database (see ``open_store``)."""

    def __init__(self, engine: Engine, where: str, clock: Clock = utc_now) -> None:
        self.engine = engine
        self.where = where  # the database, for messages (no password)
        self.clock = clock
        self._writes = 0

    # -- plumbing -----------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _transaction(self, what: str) -> Iterator[Connection]:
        try:
            with self.engine.begin() as connection:
                yield connection
        except SQLAlchemyError as error:
            raise StoreError(f"state database {self.where}: cannot {what}: {first_line(error)}") from error

    def close(self) -> None:
        self.engine.dispose()

    # -- schedules ----------------------------------------------------------------------------------

    def add_schedule(
        self,
        *,
        channel: str,
        cluster: str,
        namespace: str,
        cron: str,
        timezone: str,
        mode: ScheduleMode,
        created_by: str,
        now: datetime,
    ) -> Schedule:
        """Store a schedule made in Slack under a new short id."""
        for _ in range(8):
            schedule = Schedule(
                "".join(secrets.choice(_ID_ALPHABET) for _ in range(6)),
                channel,
                cluster,
                namespace,
                cron,
                timezone,
                mode,
                created_by,
                now,
            )
            with self._transaction("add a schedule") as connection:
                if _insert_once(connection, schedules, _schedule_row(schedule)):
                    return schedule
        raise StoreError(f"state database {self.where}: cannot find a free schedule id")

    def sync_config_schedules(self, wanted: Sequence[Schedule]) -> tuple[list[str], list[str]]:
        """Make the configuration's schedules the stored ones; Slack-made schedules are left alone.

        Idempotent: entries keep their ids across starts. Returns (added ids, removed ids).
        """
        with self._transaction("sync the configured schedules") as connection:
            stored = {
                row.id
                for row in connection.execute(
                    select(schedules.c.id).where(schedules.c.created_by == CONFIG_OWNER)
                )
            }
            wanted_ids = {s.id for s in wanted}
            added = []
            for schedule in wanted:
                if schedule.id not in stored and _insert_once(connection, schedules, _schedule_row(schedule)):
                    added.append(schedule.id)
            removed = sorted(stored - wanted_ids)
            for schedule_id in removed:
                _forget_schedule(connection, schedule_id)
        return added, removed

    def schedules(self) -> list[Schedule]:
        with self._transaction("read the schedules") as connection:
            rows = connection.execute(select(schedules).order_by(schedules.c.created_at, schedules.c.id))
            return [_schedule(row._mapping) for row in rows]

    def schedule(self, schedule_id: str) -> Schedule | None:
        with self._transaction("read a schedule") as connection:
            row = connection.execute(select(schedules).where(schedules.c.id == schedule_id)).first()
        return None if row is None else _schedule(row._mapping)

    def remove_schedule(self, schedule_id: str) -> bool:
        """Forget a schedule and what it posted; False when there was no such schedule."""
        with self._transaction("remove a schedule") as connection:
            return _forget_schedule(connection, schedule_id)

    # -- runs and what they posted --------------------------------------------------------------------

    def claim_run(self, schedule_id: str, fire_time: datetime, now: datetime) -> bool:
        """True for the one caller that may post this run; every later or concurrent caller gets False."""
        with self._transaction("claim a scheduled run") as connection:
            won = _insert_once(
                connection,
                claimed_runs,
                {"schedule_id": schedule_id, "fire_time": fire_time, "claimed_at": now},
            )
            if won and self._every_so_often():
                connection.execute(delete(claimed_runs).where(claimed_runs.c.fire_time < now - CLAIM_MEMORY))
        return won

    def claimed_fire_times(self, schedule_id: str) -> list[datetime]:
        """The runs of a schedule claimed so far (recent ones: old claims are pruned), oldest first."""
        with self._transaction("read claimed runs") as connection:
            rows = connection.execute(
                select(claimed_runs.c.fire_time)
                .where(claimed_runs.c.schedule_id == schedule_id)
                .order_by(claimed_runs.c.fire_time)
            )
            return [_as_utc(row.fire_time) for row in rows]

    def post_state(self, schedule_id: str) -> PostState | None:
        with self._transaction("read the last post") as connection:
            row = connection.execute(
                select(post_state).where(post_state.c.schedule_id == schedule_id)
            ).first()
        if row is None:
            return None
        values = row._mapping
        return PostState(
            schedule_id=schedule_id,
            posted_keys=frozenset(_json_list(values["posted_keys"])),
            first_seen={
                key: _parse_time(value)
                for key, value in _json_dict(values["first_seen"]).items()
                if isinstance(value, str)
            },
            announced={
                key: tuple(sorted(int(v) for v in value if isinstance(v, int)))
                for key, value in _json_dict(values["announced"]).items()
                if isinstance(value, list)
            },
            channel=values["channel"],
            message_ts=values["message_ts"],
            posted_at=values["posted_at"],
            observed_at=values["observed_at"],
        )

    def save_post_state(self, state: PostState, now: datetime) -> None:
        row = {
            "schedule_id": state.schedule_id,
            "fingerprint": state.fingerprint,
            "posted_keys": json.dumps(sorted(state.posted_keys)),
            "first_seen": json.dumps({k: v.astimezone(UTC).isoformat() for k, v in state.first_seen.items()}),
            "announced": json.dumps({k: list(v) for k, v in state.announced.items()}),
            "channel": state.channel,
            "message_ts": state.message_ts,
            "posted_at": state.posted_at,
            "observed_at": state.observed_at or now,
        }
        with self._transaction("save the last post") as connection:
            changed = connection.execute(
                update(post_state).where(post_state.c.schedule_id == state.schedule_id).values(**row)
            ).rowcount
            if not changed:
                connection.execute(insert(post_state).values(**row))

    # -- mutes --------------------------------------------------------------------------------------

    def mute(self, cluster: str, until: datetime, by: str) -> None:
        with self._transaction("save a mute") as connection:
            changed = connection.execute(
                update(mutes).where(mutes.c.cluster == cluster).values(until=until, muted_by=by)
            ).rowcount
            if not changed and not _insert_once(
                connection, mutes, {"cluster": cluster, "until": until, "muted_by": by}
            ):
                # Another replica muted the same cluster between our update and insert: the later end wins.
                connection.execute(
                    update(mutes).where(mutes.c.cluster == cluster, mutes.c.until < until).values(until=until)
                )

    def muted_until(self, cluster: str, now: datetime) -> datetime | None:
        """When the mute on this cluster ends, or None when it is not muted at ``now``."""
        with self._transaction("read a mute") as connection:
            until = connection.execute(select(mutes.c.until).where(mutes.c.cluster == cluster)).scalar()
        return until if until is not None and until > now else None

    # -- dedupe -------------------------------------------------------------------------------------

    def first_seen(self, key: str, now: datetime, ttl: timedelta) -> bool:
        """True for the first caller with this key until it expires; atomic across replicas."""
        expires = now + ttl
        with self._transaction("remember a key") as connection:
            if _insert_once(connection, seen_keys, {"key": key[:200], "expires_at": expires}):
                if self._every_so_often():
                    connection.execute(delete(seen_keys).where(seen_keys.c.expires_at <= now))
                return True
            # Taken: it counts as new again only once expired, and only one caller may renew it.
            renewed = connection.execute(
                update(seen_keys)
                .where(seen_keys.c.key == key[:200], seen_keys.c.expires_at <= now)
                .values(expires_at=expires)
            ).rowcount
            return bool(renewed)

    # -- quiz ---------------------------------------------------------------------------------------

    def record_answer(self, user: str, question_id: str, choice: str, correct: bool, at: datetime) -> bool:
        """Keep a user's first answer to a question; False (and nothing changed) for any later one."""
        row = {
            "user_id": user,
            "question_id": question_id,
            "choice": choice,
            "correct": correct,
            "answered_at": at,
        }
        with self._transaction("record a quiz answer") as connection:
            return _insert_once(connection, quiz_answers, row)

    def answers(self, user: str) -> dict[str, bool]:
        with self._transaction("read quiz answers") as connection:
            rows = connection.execute(
                select(quiz_answers.c.question_id, quiz_answers.c.correct).where(
                    quiz_answers.c.user_id == user
                )
            )
            return {row.question_id: bool(row.correct) for row in rows}

    def team_results(self) -> list[QuizResult]:
        """Everyone's score, best first (more correct, then fewer answered, then who got there first)."""
        correct = func.sum(case((quiz_answers.c.correct, 1), else_=0))
        query = select(
            quiz_answers.c.user_id,
            func.count().label("answered"),
            correct.label("correct"),
            func.max(quiz_answers.c.answered_at).label("last_at"),
        ).group_by(quiz_answers.c.user_id)
        with self._transaction("read quiz results") as connection:
            results = [
                QuizResult(row.user_id, int(row.answered), int(row.correct or 0), _as_utc(row.last_at))
                for row in connection.execute(query)
            ]
        return sorted(results, key=lambda r: (-r.correct, r.answered, r.last_at, r.user))

    def reset_answers(self, user: str) -> None:
        with self._transaction("reset quiz answers") as connection:
            connection.execute(delete(quiz_answers).where(quiz_answers.c.user_id == user))

    # -- diagnoses and verdicts -----------------------------------------------------------------------

    def save_diagnosis(self, record: StoredDiagnosis) -> None:
        with self._transaction("keep a posted diagnosis") as connection:
            connection.execute(insert(diagnoses).values(**_diagnosis_row(record)))
            if self._every_so_often():
                _forget_unjudged(connection, record.posted_at - DIAGNOSIS_MEMORY)

    def forget_unjudged(self, before: datetime) -> int:
        """Forget the diagnoses posted before ``before`` that nobody gave a verdict on; how many."""
        with self._transaction("forget old diagnoses") as connection:
            return _forget_unjudged(connection, before)

    def diagnosis(self, diagnosis_id: str) -> StoredDiagnosis | None:
        with self._transaction("read a posted diagnosis") as connection:
            row = connection.execute(select(diagnoses).where(diagnoses.c.id == diagnosis_id)).first()
        return None if row is None else _stored_diagnosis(row._mapping)

    def forget_message(self, channel: str, ts: str) -> int:
        """A message was deleted: forget the diagnoses it carried or was the input of, and their
        verdicts. Returns how many diagnoses were forgotten."""
        with self._transaction("forget a deleted message") as connection:
            ids = [
                row.id
                for row in connection.execute(
                    select(diagnoses.c.id).where(
                        diagnoses.c.channel == channel,
                        (diagnoses.c.message_ts == ts) | (diagnoses.c.source_ts == ts),
                    )
                )
            ]
            if ids:
                connection.execute(delete(verdicts).where(verdicts.c.diagnosis_id.in_(ids)))
                connection.execute(delete(diagnoses).where(diagnoses.c.id.in_(ids)))
        return len(ids)

    def record_verdict(self, verdict: Verdict) -> bool:
        """Keep a person's first verdict on a diagnosis; False (nothing changed) for any later one,
        and for a diagnosis no longer kept."""
        row = {
            "diagnosis_id": verdict.diagnosis_id,
            "user_id": verdict.user,
            "is_right": verdict.right,
            "cause": verdict.cause,
            "other": verdict.other,
            "given_at": verdict.given_at,
        }
        with self._transaction("record a verdict") as connection:
            kept = connection.execute(
                select(diagnoses.c.id).where(diagnoses.c.id == verdict.diagnosis_id)
            ).first()
            return kept is not None and _insert_once(connection, verdicts, row)

    def verdict(self, diagnosis_id: str, user: str) -> Verdict | None:
        with self._transaction("read a verdict") as connection:
            row = connection.execute(
                select(verdicts).where(verdicts.c.diagnosis_id == diagnosis_id, verdicts.c.user_id == user)
            ).first()
        return None if row is None else _verdict(row._mapping)

    def judged_diagnoses(self) -> list[tuple[StoredDiagnosis, list[Verdict]]]:
        """Every kept diagnosis that has verdicts, oldest first, each with its verdicts oldest first."""
        with self._transaction("read the verdicts") as connection:
            given = [
                _verdict(row._mapping)
                for row in connection.execute(
                    select(verdicts).order_by(verdicts.c.given_at, verdicts.c.user_id)
                )
            ]
            by_id: dict[str, list[Verdict]] = {}
            for verdict in given:
                by_id.setdefault(verdict.diagnosis_id, []).append(verdict)
            rows = connection.execute(
                select(diagnoses)
                .where(diagnoses.c.id.in_(list(by_id)))
                .order_by(diagnoses.c.posted_at, diagnoses.c.id)
            )
            return [(_stored_diagnosis(row._mapping), by_id[row.id]) for row in rows]

    def _every_so_often(self) -> bool:
        """True once every 200 winning writes: when expired rows are swept (cheap, indexed)."""
        self._writes += 1
        return self._writes % 200 == 1


def _insert_once(connection: Connection, table: object, row: dict[str, object]) -> bool:
    """Insert inside a savepoint; False when the key exists (the transaction stays usable)."""
    try:
        with connection.begin_nested():
            connection.execute(insert(table).values(**row))  # type: ignore[arg-type]
    except IntegrityError:
        return False
    return True


def _forget_unjudged(connection: Connection, before: datetime) -> int:
    judged = select(verdicts.c.diagnosis_id)
    stale = delete(diagnoses).where(diagnoses.c.posted_at < before, diagnoses.c.id.not_in(judged))
    return int(connection.execute(stale).rowcount or 0)


def _forget_schedule(connection: Connection, schedule_id: str) -> bool:
    connection.execute(delete(post_state).where(post_state.c.schedule_id == schedule_id))
    connection.execute(delete(claimed_runs).where(claimed_runs.c.schedule_id == schedule_id))
    return bool(connection.execute(delete(schedules).where(schedules.c.id == schedule_id)).rowcount)


def _schedule_row(schedule: Schedule) -> dict[str, object]:
    return {
        "id": schedule.id,
        "channel": schedule.channel,
        "cluster": schedule.cluster,
        "namespace": schedule.namespace,
        "cron": schedule.cron,
        "timezone": schedule.timezone,
        "mode": schedule.mode,
        "created_by": schedule.created_by,
        "created_at": schedule.created_at,
    }


def _schedule(values: RowMapping) -> Schedule:
    mode: ScheduleMode = "digest" if values["mode"] == "digest" else "changes"
    created_at = values["created_at"]
    assert isinstance(created_at, datetime)
    return Schedule(
        id=str(values["id"]),
        channel=str(values["channel"]),
        cluster=str(values["cluster"]),
        namespace=str(values["namespace"]),
        cron=str(values["cron"]),
        timezone=str(values["timezone"]),
        mode=mode,
        created_by=str(values["created_by"]),
        created_at=created_at,
    )


def _diagnosis_row(record: StoredDiagnosis) -> dict[str, object]:
    return {
        "id": record.id,
        "channel": record.channel,
        "message_ts": record.message_ts,
        "thread_ts": record.thread_ts,
        "source_ts": record.source_ts,
        "trigger": record.trigger,
        "cluster": record.cluster,
        "input": record.input,
        "diagnosis": record.diagnosis,
        "asked_cause": record.asked_cause,
        "posted_at": record.posted_at,
    }


def _stored_diagnosis(values: RowMapping) -> StoredDiagnosis:
    asked = values["asked_cause"]
    return StoredDiagnosis(
        id=str(values["id"]),
        channel=str(values["channel"]),
        message_ts=str(values["message_ts"]),
        thread_ts=values["thread_ts"],
        source_ts=values["source_ts"],
        trigger=str(values["trigger"]),
        cluster=values["cluster"],
        input=str(values["input"]),
        diagnosis=str(values["diagnosis"]),
        asked_cause=None if asked is None else int(asked),
        posted_at=_as_utc(values["posted_at"]),
    )


def _verdict(values: RowMapping) -> Verdict:
    cause = values["cause"]
    return Verdict(
        diagnosis_id=str(values["diagnosis_id"]),
        user=str(values["user_id"]),
        right=bool(values["is_right"]),
        cause=None if cause is None else int(cause),
        other=values["other"],
        given_at=_as_utc(values["given_at"]),
    )


def _as_utc(value: object) -> datetime:
    """An aggregate (max) of a UTC column; text when a driver returns it without the column's type."""
    if isinstance(value, datetime):
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    return _parse_time(str(value))


def _parse_time(value: str) -> datetime:
    parsed = datetime.fromisoformat(value)
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def _json_list(raw: object) -> list[str]:
    try:
        value = json.loads(str(raw))
    except ValueError:
        return []
    return [str(v) for v in value] if isinstance(value, list) else []


def _json_dict(raw: object) -> dict[str, object]:
    try:
        value = json.loads(str(raw))
    except ValueError:
        return {}
    return {str(k): v for k, v in value.items()} if isinstance(value, dict) else {}


def first_line(error: BaseException) -> str:
    """The driver's own message, first line only (SQLAlchemy appends SQL and a help link)."""
    original = getattr(error, "orig", None) or error
    text = str(original).strip().splitlines()
    return text[0][:300] if text else type(original).__name__
