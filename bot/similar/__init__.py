"""Seen before: the resolved public reports a pasted text reads most like, and what they agree on.

The corpus of real pastes (``tests/corpus``) holds, for each public thread, the text people pasted
and the cause its resolution settled on. ``reports.json`` beside this file is a compact index of
it (ids, causes, a one-line resolution, the thread's address and the words of each paste), made by
``tools/build_similar_index.py``: the running bot never reads tests/, and nothing is downloaded.

``seen_before`` is called by the service after a paste is classified (``Diagnoser.explain``): it
attaches the three closest reports by BM25 (weights computed by ``bm25s`` when the index is built)
to the diagnosis, and when no reader recognised anything in the paste it adds one ``info`` finding
with the cause those reports agree on, saying plainly that it comes from likeness to them and not
from the text. Renderers only read the diagnosis. The index is read on first use (about 10 ms), so
a command that explains nothing pays nothing.
"""

from __future__ import annotations

from bot.similar.fallback import agreed_cause, likeness_finding, seen_before

__all__ = ["agreed_cause", "likeness_finding", "seen_before"]
