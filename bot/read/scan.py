"""Walking a paste once and handing each block to the reader that recognises it.

A real paste mixes formats without separators: a ``kubectl get pod`` table, then an event row,
then a manifest, then a ``describe node`` fragment, with shell prompts and markdown around them.
The scan walks the lines once. At each line it asks the readers of :data:`READERS`, in order,
whether a block of theirs starts there (:mod:`bot.read.protocol`); the first that says yes reads to
the end of its block and hands back any lines it did not understand. Lines no block claims gather
in runs of adjacent lines for the loose-line reader.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.read import loose_lines
from bot.read.found import Found
from bot.read.protocol import Paste
from bot.read.readers import READERS

MAX_LINES = 100_000


class _Scanner:
    def __init__(self, lines: Sequence[str], found: Found) -> None:
        self.lines = lines
        self.paste = Paste(found)
        self.run: list[str] = []

    def flush(self) -> None:
        if self.run:
            run, self.run = self.run, []
            try:
                loose_lines.read_run(run, self.paste.found, self.paste.namespace)
            except Exception as error:  # a parser bug must cost one run of lines, not the diagnosis
                self.paste.found.note(
                    f"some lines were skipped after a parser error ({type(error).__name__})"
                )

    def block_at(self, i: int) -> int | None:
        """Read the block starting at line ``i``, if any; return the index after it."""
        for reader in READERS:
            if not reader.starts(self.lines, i):
                continue
            if not reader.tentative:
                self.flush()
            block = reader.read(self.lines, i, self.paste)
            if not block.claimed:
                self.run.extend(self.lines[i : block.end])
                return block.end
            self.flush()
            if block.leftover:
                loose_lines.read_run(block.leftover, self.paste.found, self.paste.namespace)
            return block.end
        return None

    def scan(self) -> None:
        i = 0
        count = len(self.lines)
        while i < count:
            if not self.lines[i].strip():
                self.flush()
                i += 1
                continue
            try:
                end = self.block_at(i)
            except Exception as error:  # a parser bug must cost one block, not the diagnosis
                name = type(error).__name__
                self.paste.found.note(f"a block at line {i + 1} was skipped after a parser error ({name})")
                end = None
            if end is None:
                self.run.append(self.lines[i])
                i += 1
            else:
                i = end
        self.flush()


def scan(lines: Sequence[str], found: Found) -> None:
    if len(lines) > MAX_LINES:
        found.note(f"only the first {MAX_LINES:,} lines were read (the paste had {len(lines):,})")
        lines = lines[:MAX_LINES]
    _Scanner(lines, found).scan()
