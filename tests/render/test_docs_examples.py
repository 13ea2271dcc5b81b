"""The rendered examples in docs/ are current and valid Block Kit."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from slack_sdk.models.blocks import Block

from bot.catalogue import default_catalogue
from bot.deliver.blocks.thread import render_thread
from bot.render.text_report import render_markdown

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
from render_examples import example_diagnosis  # noqa: E402


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_docs_examples_are_regenerated(lang: str) -> None:
    diagnosis = example_diagnosis()
    thread = render_thread(diagnosis, default_catalogue(), lang)  # type: ignore[arg-type]
    committed = json.loads((ROOT / "docs" / f"slack-thread.{lang}.json").read_text(encoding="utf-8"))
    assert committed == thread, "run `.venv/bin/python tools/render_examples.py`"
    markdown = (ROOT / "docs" / f"diagnosis.{lang}.md").read_text(encoding="utf-8")
    assert markdown == render_markdown(diagnosis, default_catalogue(), lang)  # type: ignore[arg-type]
    for message in committed:
        assert len(message["blocks"]) <= 50
        for raw in message["blocks"]:
            block = Block.parse(raw)
            assert block is not None
            block.validate_json()
