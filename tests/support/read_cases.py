"""The format cases as data (``tests/read/<reader>/<case>.txt``): what each reader makes of real output.

A case is a text in one format, recorded from the tool or pasted in a public thread, beside
``<case>.expected.json``: which readers claimed blocks of it, which formats it was recognised as,
and how many objects of each kind were read. ``read_case`` computes the same summary, so the test
compares the two and ``tools/read_cases.py`` writes a new case's file for review.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any
from unittest import mock

from bot.read import loose_lines, scan
from bot.read.cleaning import clean
from bot.read.found import Found
from bot.read.protocol import Block, Paste, Reader
from bot.read.readers import READERS

CASES = Path(__file__).resolve().parents[1] / "read"
# The fallback for lines no block reader claims has a folder of cases too.
LOOSE_LINES = "loose-lines"
READER_NAMES = (*(reader.name for reader in READERS), LOOSE_LINES)


def case_files(root: Path = CASES) -> Iterator[tuple[str, Path]]:
    """Every case as (reader name, text file), walked from the folders."""
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(("_", "."))):
        for text in sorted(folder.glob("*.txt")):
            yield folder.name, text


def expected_path(text: Path) -> Path:
    return text.with_name(f"{text.stem}.expected.json")


def _summary(found: Found, claimed: Sequence[str]) -> dict[str, Any]:
    counts = {
        "pods": len(found.pods),
        "nodes": len(found.nodes),
        "events": len(found.events),
        "objects": sum(len(objects) for objects in found.objects.values()),
        "ray_nodes": len(found.ray_nodes),
        "demands": len(found.demands),
        "constraints": len(found.constraints),
        "actors": len(found.ray_actors),
        "placement_groups": len(found.placement_groups),
        "node_types": len(found.node_types),
        "serve_applications": len(found.serve_applications),
        "code_requests": len(found.code.requests),
        "message_lines": len(found.texts),
        # Facts stated in words (bot/read/prose.py): versions, GPUs per node, workers not joined.
        "stated": len(found.stated_versions) + len(found.stated_gpus) + len(found.stated_join_gaps),
        # ``nvidia-smi`` outputs, and the GPUs and processes they list (bot/read/nvidia_smi.py).
        "nvidia_smi": len(found.nvidia_smi),
        "nvidia_smi_gpus": sum(len(output.gpus) for output in found.nvidia_smi),
        "nvidia_smi_processes": sum(len(output.processes) for output in found.nvidia_smi),
    }
    return {
        "readers": list(dict.fromkeys(claimed)),
        "formats": [fmt.label for fmt in found.formats],
        "counts": {kind: count for kind, count in counts.items() if count},
        "ray_status": found.ray_status is not None,
    }


def read_case(text: str) -> dict[str, Any]:
    """Scan ``text`` as a paste and summarise what was read and by which readers."""
    found = Found()
    claimed: list[str] = []

    def traced(reader: Reader) -> Reader:
        def read(lines: Sequence[str], i: int, paste: Paste) -> Block:
            block = reader.read(lines, i, paste)
            if block.claimed:
                claimed.append(reader.name)
            return block

        return dataclasses.replace(reader, read=read)

    original = loose_lines.read_run

    def read_run(lines: Sequence[str], into: Found, namespace: str | None) -> None:
        before = (len(into.formats), len(into.texts), len(into.events), len(into.demands))
        original(lines, into, namespace)
        if (len(into.formats), len(into.texts), len(into.events), len(into.demands)) != before:
            claimed.append(LOOSE_LINES)

    cleaned = clean(text)
    with (
        mock.patch.object(scan, "READERS", tuple(traced(reader) for reader in READERS)),
        mock.patch.object(loose_lines, "read_run", read_run),
    ):
        scan.scan(cleaned.lines, found)
    return _summary(found, claimed)


def write_expected(text: Path) -> dict[str, Any]:
    summary = read_case(text.read_text(encoding="utf-8"))
    expected_path(text).write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return summary
