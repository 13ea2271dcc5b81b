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
        if not path.exists():
            pytest.skip(f"shared example {name} is not available in this checkout")
        return path.read_text(encoding="utf-8")

    return read
