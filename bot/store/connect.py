"""Opening the state database: SQLite by file path, PostgreSQL by URL; schema migrated on open.

SQLite is told not to start transactions on its own (Python's driver would otherwise run DDL
outside them) and every transaction begins with ``BEGIN IMMEDIATE``: the write lock is taken up
front, so two threads never deadlock upgrading a read lock, and a waiting writer waits (up to the
busy timeout) instead of failing at once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import URL, Engine, create_engine, event, make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError

from bot.store.errors import StoreError
from bot.store.migrations import migrate
from bot.store.store import Clock, Store, first_line, utc_now

SQLITE_BUSY_TIMEOUT_S = 30
POSTGRES_CONNECT_TIMEOUT_S = 10


def open_store(url: str, *, clock: Clock = utc_now) -> Store:
    """Open (creating or migrating) the state database at ``url``, or raise ``StoreError`` with one line."""
    parsed = _parse(url)
    where = _describe(parsed)
    engine = _engine(parsed, where)
    try:
        with engine.begin() as connection:
            migrate(connection, clock())
    except StoreError:
        engine.dispose()
        raise
    except SQLAlchemyError as error:
        engine.dispose()
        raise StoreError(_explain(error, parsed, where)) from error
    return Store(engine, where, clock)


def _parse(url: str) -> URL:
    try:
        parsed = make_url(url)
    except ArgumentError as error:
        raise StoreError(
            f"state.url {url.rsplit('@', maxsplit=1)[-1]!r} is not a database URL "
            "(use sqlite:///path/to/raydiag-state.db or postgresql+psycopg://user@host:5432/db)"
        ) from error
    backend = parsed.get_backend_name()
    if backend == "postgresql" and parsed.drivername == "postgresql":
        parsed = parsed.set(drivername="postgresql+psycopg")  # psycopg 3 is the driver raydiag ships
    if backend == "sqlite" and parsed.database in (None, "", ":memory:"):
        raise StoreError(
            "state.url names an in-memory SQLite database, which is lost on restart; name a file"
        )
    if backend not in ("sqlite", "postgresql"):
        raise StoreError(
            f"state.url: unsupported database {backend!r}; use sqlite:/// or postgresql+psycopg://"
        )
    if backend == "postgresql" and parsed.drivername != "postgresql+psycopg":
        raise StoreError(
            f"state.url: use the psycopg driver (postgresql+psycopg://), not {parsed.drivername}"
        )
    return parsed


def _describe(url: URL) -> str:
    if url.get_backend_name() == "sqlite":
        return str(url.database)
    return url.render_as_string(hide_password=True)


def _engine(url: URL, where: str) -> Engine:
    if url.get_backend_name() == "postgresql":
        return create_engine(
            url,
            pool_pre_ping=True,
            connect_args={"connect_timeout": POSTGRES_CONNECT_TIMEOUT_S, "application_name": "raydiag"},
        )
    path = Path(str(url.database)).expanduser()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise StoreError(
            f"cannot create the folder of the state database {where}: {error.strerror}"
        ) from error
    engine = create_engine(url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_S, "check_same_thread": False})

    @event.listens_for(engine, "connect")
    def _no_implicit_transactions(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None

    @event.listens_for(engine, "begin")
    def _take_the_write_lock(connection: Any) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


def _explain(error: SQLAlchemyError, url: URL, where: str) -> str:
    reason = first_line(error)
    if url.get_backend_name() == "sqlite":
        if "not a database" in reason or "malformed" in reason:
            return (
                f"state database {where} is not a usable SQLite file ({reason}); "
                "move it aside to start afresh, or fix state.url"
            )
        return f"cannot open the state database {where}: {reason}"
    return f"cannot use the state database {where}: {reason}"
