"""The contract every paste reader keeps: say whether a block of yours starts here, then read it.

A paste is walked once, line by line (:mod:`bot.read.scan`). At each line the scan asks the readers
of :data:`bot.read.readers.READERS`, in order, whether a block of theirs starts there; the first
that says yes reads to the end of its block and answers with a :class:`Block`. ``starts`` decides
from the current line and at most a few after it, so the walk stays linear in the paste's size.

A reader adds what it understood to the paste's :class:`~bot.read.found.Found` and hands back the
lines inside its block that it did not understand; the scan reads those as loose lines, so a
message inside a ``describe`` or a ``ray status`` is never lost.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bot.read.found import Found


@dataclass
class Paste:
    """What the scan knows while it walks one paste.

    ``namespace`` is the one the last ``kubectl``/``oc`` command line named: rows below it that
    carry no NAMESPACE column belong there.
    """

    found: Found
    namespace: str | None = None


@dataclass(frozen=True)
class Block:
    """What a reader made of the block starting at the line it was asked about.

    ``end`` is the index of the first line after the block. ``leftover`` holds lines inside the
    block the reader did not understand. ``claimed`` is False when the text only looked like the
    format (JSON or YAML that is no object raydiag reads): its lines are then loose lines, joined
    with those above it.
    """

    end: int
    leftover: Sequence[str] = ()
    claimed: bool = True


@dataclass(frozen=True)
class Reader:
    """One format of tool output and how to find and read it in a paste.

    ``name`` is the reader's folder of cases, ``tests/read/<name>/``. A ``tentative`` reader may
    decline a block after reading it (``Block.claimed``), so the lines above it are read only after
    it has answered; every other reader is asked once the lines above it have been read.
    """

    name: str
    starts: Callable[[Sequence[str], int], bool]
    read: Callable[[Sequence[str], int, Paste], Block]
    tentative: bool = False
