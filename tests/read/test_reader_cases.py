"""Every format reader against its cases, walked from ``tests/read/<reader>/`` (see its README)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.read.readers import READERS
from tests.support.read_cases import CASES, READER_NAMES, case_files, expected_path, read_case

CASE_FILES = list(case_files())


def test_every_reader_has_a_folder_of_cases_and_every_folder_a_reader() -> None:
    folders = {p.name for p in CASES.iterdir() if p.is_dir() and not p.name.startswith(("_", "."))}
    assert folders == set(READER_NAMES)
    assert len({reader.name for reader in READERS}) == len(READERS), "two readers share a name"
    for name in READER_NAMES:
        assert any(reader == name for reader, _ in CASE_FILES), f"tests/read/{name}/ has no case"


@pytest.mark.parametrize(("reader", "path"), CASE_FILES, ids=[f"{r}/{p.stem}" for r, p in CASE_FILES])
def test_the_reader_reads_its_case_as_recorded(reader: str, path: Path) -> None:
    expected = json.loads(expected_path(path).read_text(encoding="utf-8"))
    got = read_case(path.read_text(encoding="utf-8"))
    assert reader in got["readers"], f"{reader} claimed no block of {path.name}: {got['readers']}"
    assert got == expected
