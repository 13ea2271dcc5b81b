"""Shared fixtures for the pasted-text collector tests: the real pasted examples in shared/."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[3] / "shared" / "examples"


@pytest.fixture
def example() -> Callable[[str], str]:
    def read(name: str) -> str:
        path = EXAMPLES / name
        # CI lays shared/ beside the clone; a missing example is a broken setup, not a pass.
        assert path.exists(), f"shared example {name} not found at {path}"
        return path.read_text(encoding="utf-8")

    return read
