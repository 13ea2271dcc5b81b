"""Where a benchmark's results go in a markdown file: between its own two marker comments.

Each benchmark owns one block (``<!-- name:start -->`` … ``<!-- name:end -->``) in BENCHMARKS.md or
RELIABILITY.md, so a rerun replaces its figures and leaves every other section as it is.
"""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def write_block(
    path: Path, block: str, start: str, end: str, *, new_file: str = "", heading: str = ""
) -> None:
    """Replace the text between ``start`` and ``end`` in ``path`` with ``block`` (which carries the
    markers); without markers the block is appended, after ``heading`` when one is given, and a file
    that does not exist yet starts with ``new_file``."""
    text = path.read_text(encoding="utf-8") if path.exists() else new_file
    if start in text and end in text:
        head, rest = text.split(start, 1)
        _, tail = rest.split(end, 1)
        text = head + block + tail
    else:
        text = text.rstrip("\n") + "\n\n" + (f"{heading}\n\n" if heading else "") + block + "\n"
    path.write_text(text, encoding="utf-8")


def commit() -> str:
    """The checkout's short commit, or "unknown" outside a git checkout."""
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def measured_block(start: str, end: str, command: str, body: str) -> str:
    """A benchmark's block: its markers around a line saying when, at which commit and with which
    command it was measured, then ``body``."""
    today = datetime.now(UTC).strftime("%Y-%m-%d")
    return "\n".join([start, f"Measured {today} at commit {commit()} with {command}.", "", body, end])
