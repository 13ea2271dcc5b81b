"""Real pasted outputs from public issue threads: the true cause comes first.

The files are the corpus batch ``tests/corpus/shared-examples`` with their causes in ``expected.json``.
raydiag is judged on formats, not on these files, so the parser tests carry their own samples too.
"""

from __future__ import annotations

import io
import json

import pytest

from bot.cli import run
from tests.support.corpus import EXAMPLES

EXPECTED = json.loads((EXAMPLES / "expected.json").read_text(encoding="utf-8")) if EXAMPLES.is_dir() else []
LAYERS = {"k8s": "kubernetes", "ray": "ray", "application": "application"}


def test_examples_are_present() -> None:
    assert len(EXPECTED) >= 10, f"expected the shared examples at {EXAMPLES}"


@pytest.mark.parametrize("example", EXPECTED, ids=[e["file"] for e in EXPECTED])
def test_true_cause_first(example: dict[str, object]) -> None:
    out = io.StringIO()
    assert run(["explain", str(EXAMPLES / str(example["file"])), "--format", "json"], io.StringIO(), out) == 0
    report = json.loads(out.getvalue())
    assert report["findings"], f"no finding for {example['file']}"
    top = report["findings"][0]
    assert top["cause"] in example["causes"], [(f["rule"], f["cause"]) for f in report["findings"]]
    assert report["verdict"]["layer"] == LAYERS[str(example["layer"])]
