"""Where the repo keeps its corpus of real pasted outputs (``tests/corpus``, see its README)."""

from __future__ import annotations

from pathlib import Path

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
# The first ten real pastes the project was given, with their causes in ``expected.json``.
EXAMPLES = CORPUS / "shared-examples"
