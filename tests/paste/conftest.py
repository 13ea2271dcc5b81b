"""Shared fixtures for the pasted-text collector tests: the real pasted examples in tests/corpus."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.support.corpus import EXAMPLES


@pytest.fixture
def example() -> Callable[[str], str]:
    def read(name: str) -> str:
        path = EXAMPLES / name
        assert path.exists(), f"corpus example {name} not found at {path}"
        return path.read_text(encoding="utf-8")

    return read
