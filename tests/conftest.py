"""Fixtures shared by several test folders."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.postgres import PostgresServer, PostgresUnavailable, shared


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """One real PostgreSQL server for the session (Debian's `postgresql`; `make postgres` installs it)."""
    try:
        server = shared.acquire()
    except PostgresUnavailable as error:
        pytest.fail(str(error), pytrace=False)
    yield server
    shared.release()
