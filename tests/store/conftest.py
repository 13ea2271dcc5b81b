"""Every store test runs twice: on a SQLite file and on a real PostgreSQL server started for the session."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.postgres import shared


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An empty database: a SQLite file in a folder that does not exist yet, or a fresh PostgreSQL database."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/state/raydiag-state.db"
    return shared.fresh_database(request.getfixturevalue("postgres"))
