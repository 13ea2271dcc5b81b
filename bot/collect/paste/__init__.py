"""Pasted text as a snapshot source.

Most people who ask why their Ray work is stuck cannot give the bot access to their cluster; they
paste what they already ran: ``ray status``, ``kubectl get pods``, a ``describe``, an error from a
log, their manifest. ``parse_paste`` turns any mixture of those into the same ``Snapshot`` a live
collector produces (``origin="paste"``), so the same classifier runs on it. It never raises: text
it cannot read is reported in the snapshot's ``notes``, and work is bounded whatever is pasted.

The package is private except for ``parse_paste``: ``split`` finds the blocks, one module per
format reads them into ``found``, and ``assemble`` settles what needs the whole paste.
"""

from __future__ import annotations

from bot.collect.paste import assemble
from bot.read import scan
from bot.read.cleaning import clean
from bot.read.found import Found
from bot.snapshot.model import Snapshot

__all__ = ["parse_paste"]


def parse_paste(text: str, source: str = "paste") -> Snapshot:
    """Read pasted tool output into a Snapshot; ``source`` labels the text lines it keeps."""
    found = Found(source=source)
    try:
        cleaned = clean(text)
        for note in cleaned.notes:
            found.note(note)
        scan.scan(cleaned.lines, found)
        return assemble.build(found)
    except Exception as error:  # the promise is a snapshot, whatever was pasted
        found.note(f"the rest of the paste was skipped after a parser error ({type(error).__name__})")
        try:
            return assemble.build(found)
        except Exception:
            return Snapshot(origin="paste", notes=[*found.notes])
