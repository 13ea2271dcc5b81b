"""The state store against SQLite and a real PostgreSQL: what survives a restart, and what happens once.

"Once" means once across replicas: two ``Store`` objects on one database stand for two bot
processes, and threads racing on one key stand for concurrent Slack deliveries.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, inspect, select

from bot.store import (
    CONFIG_OWNER,
    PostState,
    Schedule,
    Store,
    StoreError,
    config_schedule_id,
    open_store,
)
from bot.store.migrations import STEPS, Step, migrate
from bot.store.schema import schema_version
from tests.store.manual_clock import ManualClock

T0 = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)
STATE_TABLES = {
    "raydiag_schema_version",
    "raydiag_schedules",
    "raydiag_mutes",
    "raydiag_seen_keys",
    "raydiag_post_state",
    "raydiag_claimed_runs",
    "raydiag_quiz_answers",
    "raydiag_diagnoses",
    "raydiag_verdicts",
    "raydiag_scheduler_jobs",
}


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(T0)


@pytest.fixture
def opened(store_url: str, clock: ManualClock) -> Iterator[Callable[[], Store]]:
    """Open the same database as many times as a test wants (replicas, restarts); all closed at the end."""
    stores: list[Store] = []

    def open_one() -> Store:
        stores.append(open_store(store_url, clock=clock))
        return stores[-1]

    yield open_one
    for store in stores:
        store.close()


def versions(store: Store) -> list[int]:
    with store.engine.connect() as connection:
        return [row.version for row in connection.execute(select(schema_version.c.version))]


# -- schema ----------------------------------------------------------------------------------------


def test_an_empty_database_gets_every_table_and_reopening_migrates_nothing(
    opened: Callable[[], Store],
) -> None:
    first = opened()
    assert set(inspect(first.engine).get_table_names()) >= STATE_TABLES
    assert versions(first) == [step.version for step in STEPS]
    first.close()
    again = opened()
    assert versions(again) == [step.version for step in STEPS]
    with again.engine.begin() as connection:
        assert migrate(connection, T0) == []


def test_a_database_from_a_newer_raydiag_is_refused_and_left_alone(
    opened: Callable[[], Store], store_url: str
) -> None:
    store = opened()
    with store.engine.begin() as connection:
        connection.execute(schema_version.insert().values(version=99, applied_at=T0))
    with pytest.raises(
        StoreError, match=rf"schema version 99, newer than this raydiag knows \({STEPS[-1].version}\)"
    ):
        open_store(store_url)
    assert versions(store)[-1] == 99


def test_a_failing_step_rolls_back_everything_it_did(opened: Callable[[], Store]) -> None:
    store = opened()

    def half_done(connection: object) -> None:
        from sqlalchemy import Connection, text

        assert isinstance(connection, Connection)
        connection.execute(text("CREATE TABLE raydiag_half_done (id INTEGER)"))
        connection.execute(text("SELECT * FROM no_such_table"))

    steps = (*STEPS, Step(STEPS[-1].version + 1, "breaks halfway", half_done))
    with pytest.raises(Exception, match="no_such_table"), store.engine.begin() as connection:
        migrate(connection, T0, steps)
    assert "raydiag_half_done" not in inspect(store.engine).get_table_names()
    assert versions(store) == [step.version for step in STEPS]


def test_naive_timestamps_are_refused(opened: Callable[[], Store]) -> None:
    store = opened()
    with pytest.raises(StoreError, match="naive datetime"):
        store.mute("gpu-prod", datetime(2025, 3, 3, 10, 0), "U0ENGINEER")


# -- opening problems (one line each) --------------------------------------------------------------


def test_a_corrupt_sqlite_file_is_a_clear_error_and_stays_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "raydiag-state.db"
    garbage = b"this is not SQLite, it is the tail of a log file\n" * 200
    path.write_bytes(garbage)
    with pytest.raises(StoreError) as raised:
        open_store(f"sqlite:///{path}")
    message = str(raised.value)
    assert "\n" not in message
    assert str(path) in message and "not a usable SQLite file" in message and "move it aside" in message
    assert path.read_bytes() == garbage


def test_an_unreachable_postgresql_names_the_server_but_not_the_password() -> None:
    with pytest.raises(StoreError) as raised:
        open_store("postgresql+psycopg://raydiag:hunter2@127.0.0.1:9/state")
    message = str(raised.value)
    assert "\n" not in message
    assert "127.0.0.1:9/state" in message and "refused" in message.lower()
    assert "hunter2" not in message


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("not a url at all", "is not a database URL"),
        ("sqlite://", "in-memory SQLite database, which is lost on restart"),
        ("mysql://raydiag@db/state", "unsupported database 'mysql'"),
        ("postgresql+psycopg2://raydiag@db/state", "use the psycopg driver"),
    ],
)
def test_urls_raydiag_cannot_use_are_refused_before_connecting(url: str, problem: str) -> None:
    with pytest.raises(StoreError, match=problem):
        open_store(url)


def test_a_sqlite_file_in_a_folder_that_cannot_be_made_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the data folder should be")
    with pytest.raises(StoreError, match="cannot create the folder of the state database"):
        open_store(f"sqlite:///{blocker}/raydiag-state.db")


# -- dedupe keys -----------------------------------------------------------------------------------


def test_an_event_id_is_answered_once_until_it_expires(opened: Callable[[], Store]) -> None:
    store = opened()
    hour = timedelta(hours=1)
    assert store.first_seen("Ev08MFMKH6CQ", T0, hour)
    assert not store.first_seen("Ev08MFMKH6CQ", T0 + timedelta(minutes=59), hour)
    assert store.first_seen("Ev08MFMKH6CR", T0, hour)
    assert store.first_seen("Ev08MFMKH6CQ", T0 + timedelta(minutes=61), hour)
    assert not store.first_seen("Ev08MFMKH6CQ", T0 + timedelta(minutes=62), hour)


def test_replicas_racing_on_one_event_id_answer_it_once(opened: Callable[[], Store]) -> None:
    replicas = [opened(), opened()]
    start = threading.Barrier(8)
    wins: list[bool] = []
    lock = threading.Lock()

    def deliver(store: Store) -> None:
        start.wait()
        won = store.first_seen("Ev0RETRIED1", T0, timedelta(hours=1))
        with lock:
            wins.append(won)

    threads = [threading.Thread(target=deliver, args=(replicas[i % 2],)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(wins) == [False] * 7 + [True]


# -- claimed runs ----------------------------------------------------------------------------------


def test_a_scheduled_run_is_claimed_once_across_replicas_and_restarts(opened: Callable[[], Store]) -> None:
    first, second = opened(), opened()
    nine = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)
    assert first.claim_run("a1b2c3", nine, T0)
    assert not second.claim_run("a1b2c3", nine, T0)
    assert second.claim_run("a1b2c3", nine + timedelta(hours=1), T0)
    assert second.claim_run("d4e5f6", nine, T0)
    first.close()
    assert not opened().claim_run("a1b2c3", nine, T0)


# -- mutes -----------------------------------------------------------------------------------------


def test_a_mute_lasts_until_its_end_and_survives_a_restart(opened: Callable[[], Store]) -> None:
    store = opened()
    until = T0 + timedelta(hours=24)
    store.mute("gpu-prod", until, "U0ENGINEER")
    assert store.muted_until("gpu-prod", T0) == until
    assert store.muted_until("research", T0) is None
    store.close()
    again = opened()
    assert again.muted_until("gpu-prod", T0 + timedelta(hours=23)) == until
    assert again.muted_until("gpu-prod", until) is None
    again.mute("gpu-prod", until + timedelta(hours=2), "U0ONCALL01")
    assert again.muted_until("gpu-prod", until) == until + timedelta(hours=2)


# -- schedules -------------------------------------------------------------------------------------


def configured(channel: str, cluster: str, cron: str, mode: str = "changes") -> Schedule:
    return Schedule(
        id=config_schedule_id(channel, cluster, "ml", cron, "Europe/Berlin", mode),
        channel=channel,
        cluster=cluster,
        namespace="ml",
        cron=cron,
        timezone="Europe/Berlin",
        mode="digest" if mode == "digest" else "changes",
        created_by=CONFIG_OWNER,
        created_at=T0,
    )


def added_in_slack(store: Store, channel: str, cron: str) -> Schedule:
    return store.add_schedule(
        channel=channel,
        cluster="gpu-prod",
        namespace="ml",
        cron=cron,
        timezone="UTC",
        mode="changes",
        created_by="U0GPUOPS01",
        now=T0,
    )


def test_configured_schedules_sync_idempotently_and_leave_slack_ones_alone(
    opened: Callable[[], Store],
) -> None:
    store = opened()
    morning = configured("C0MLPLATFORM", "gpu-prod", "0 9 * * 1-5")
    digest = configured("C0MLPLATFORM", "research", "0 17 * * 5", "digest")
    added, removed = store.sync_config_schedules([morning, digest])
    assert sorted(added) == sorted([morning.id, digest.id]) and removed == []
    from_slack = added_in_slack(store, "C0INCIDENT1", "*/30 * * * *")
    assert len(from_slack.id) == 6 and from_slack.id.isalnum()

    assert store.sync_config_schedules([morning, digest]) == ([], [])
    store.close()
    again = opened()
    assert [s.id for s in again.schedules()].count(morning.id) == 1
    # The digest left the configuration: it goes; the Slack-made schedule stays.
    assert again.sync_config_schedules([morning]) == ([], [digest.id])
    assert {s.id for s in again.schedules()} == {morning.id, from_slack.id}
    assert again.schedule(from_slack.id) == from_slack


def test_removing_a_schedule_forgets_what_it_posted_and_claimed(opened: Callable[[], Store]) -> None:
    store = opened()
    schedule = added_in_slack(store, "C0MLPLATFORM", "0 * * * *")
    store.claim_run(schedule.id, T0, T0)
    store.save_post_state(PostState(schedule.id, posted_keys=frozenset({"1|k8s|Pod/ml/w"})), T0)
    assert store.remove_schedule(schedule.id)
    assert store.schedule(schedule.id) is None and store.post_state(schedule.id) is None
    assert store.claim_run(schedule.id, T0, T0)
    assert not store.remove_schedule(schedule.id)


# -- last-posted state -----------------------------------------------------------------------------


def test_the_last_post_round_trips_with_aware_utc_times(opened: Callable[[], Store]) -> None:
    store = opened()
    berlin_morning = datetime.fromisoformat("2025-03-03T10:00:00+01:00")
    key = "1|k8s-insufficient-resources|Pod/ml/raycluster-gpu-worker-gpu-x7k2p"
    state = PostState(
        "a1b2c3",
        posted_keys=frozenset({key}),
        first_seen={key: berlin_morning},
        announced={key: (40,)},
        channel="C0MLPLATFORM",
        message_ts="1733000000.000100",
        posted_at=T0,
        observed_at=T0,
    )
    store.save_post_state(state, T0)
    loaded = store.post_state("a1b2c3")
    assert loaded == state
    assert loaded is not None and loaded.first_seen[key].tzinfo is not None
    assert loaded.first_seen[key] == datetime(2025, 3, 3, 9, 0, tzinfo=UTC)
    store.save_post_state(PostState("a1b2c3", channel="C0MLPLATFORM", observed_at=T0), T0)
    assert store.post_state("a1b2c3") == PostState("a1b2c3", channel="C0MLPLATFORM", observed_at=T0)


# -- quiz answers ----------------------------------------------------------------------------------


def test_the_first_answer_counts_and_scores_survive_a_restart(opened: Callable[[], Store]) -> None:
    store = opened()
    assert store.record_answer("U0ALICE001", "guide-1", "b", True, T0)
    assert not store.record_answer("U0ALICE001", "guide-1", "a", False, T0 + timedelta(minutes=1))
    store.record_answer("U0ALICE001", "cause-4", "c", False, T0 + timedelta(minutes=2))
    store.record_answer("U0BOB00001", "guide-1", "b", True, T0 + timedelta(minutes=3))
    store.record_answer("U0BOB00001", "cause-4", "a", True, T0 + timedelta(minutes=4))
    store.record_answer("U0CAROL001", "guide-1", "b", True, T0 + timedelta(minutes=5))
    store.close()

    again = opened()
    assert again.answers("U0ALICE001") == {"guide-1": True, "cause-4": False}
    results = again.team_results()
    assert [(r.user, r.answered, r.correct) for r in results] == [
        ("U0BOB00001", 2, 2),
        ("U0CAROL001", 1, 1),
        ("U0ALICE001", 2, 1),
    ]
    assert results[0].last_at == T0 + timedelta(minutes=4)
    again.reset_answers("U0ALICE001")
    assert again.answers("U0ALICE001") == {}
    assert again.record_answer("U0ALICE001", "guide-1", "a", False, T0 + timedelta(hours=1))


def test_concurrent_first_answers_from_two_replicas_count_once(opened: Callable[[], Store]) -> None:
    replicas = [opened(), opened()]
    start = threading.Barrier(2)
    wins: list[bool] = []

    def answer(store: Store, choice: str) -> None:
        start.wait()
        wins.append(store.record_answer("U0ALICE001", "guide-2", choice, choice == "a", T0))

    threads = [threading.Thread(target=answer, args=(replicas[i], "ab"[i])) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(wins) == [False, True]
    with replicas[0].engine.connect() as connection:
        from bot.store.schema import quiz_answers

        assert connection.execute(select(func.count()).select_from(quiz_answers)).scalar() == 1


def test_replicas_starting_together_migrate_once(store_url: str) -> None:
    start = threading.Barrier(3)
    opened_stores: list[Store] = []
    failures: list[BaseException] = []

    def start_replica() -> None:
        start.wait()
        try:
            opened_stores.append(open_store(store_url))
        except BaseException as error:
            failures.append(error)

    threads = [threading.Thread(target=start_replica) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    try:
        assert failures == [] and len(opened_stores) == 3
        assert versions(opened_stores[0]) == [step.version for step in STEPS]
    finally:
        for store in opened_stores:
            store.close()
