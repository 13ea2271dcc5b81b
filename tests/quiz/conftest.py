"""A real state database for quiz tests: a SQLite file in the test's own folder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.store import Store, open_store


@pytest.fixture
def database(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'raydiag-state.db'}"


@pytest.fixture
def store(database: str) -> Iterator[Store]:
    opened = open_store(database)
    yield opened
    opened.close()
