"""Where the repo keeps its corpus of real pasted outputs (``tests/corpus``, see its README)."""

from __future__ import annotations

from pathlib import Path

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
# The first ten real pastes the project was given, with their causes in ``expected.json``.
EXAMPLES = CORPUS / "shared-examples"
# A real `ray status` of a healthy 3-node cluster (6 CPUs, 2 GPUs), recorded by tools/record_corpus.py.
HEALTHY_RAY_STATUS = CORPUS / "recorded" / "v2-healthy-ray-status.txt"
