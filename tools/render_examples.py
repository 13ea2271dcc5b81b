"""Regenerate the rendered examples in docs/: the demo incident as Slack Block Kit, Markdown and text.

    .venv/bin/python tools/render_examples.py

Input: the demo's bundled KubeRay state plus the Ray dashboard answers recorded from the same
workload (tests/fixtures/ray/broken), so the output is deterministic and needs no cluster.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bot.catalogue import default_catalogue  # noqa: E402
from bot.classify import classify  # noqa: E402
from bot.deliver.blocks.thread import render_thread  # noqa: E402
from bot.demo import kuberay_state  # noqa: E402
from bot.read.snapshot_file import parse_snapshot  # noqa: E402
from bot.render.text_report import render_markdown  # noqa: E402

RECORDED_RAY = ROOT / "tests" / "fixtures" / "ray" / "broken"
DOCS = ROOT / "docs"


def example_diagnosis():  # type: ignore[no-untyped-def]
    answers = {
        path.stem: json.loads(path.read_text(encoding="utf-8"))
        for path in RECORDED_RAY.glob("*.json")
        if not path.stem.startswith("_")
    }
    return classify(parse_snapshot({**kuberay_state.load_state(), "ray": answers}))


def main() -> int:
    catalogue = default_catalogue()
    diagnosis = example_diagnosis()
    DOCS.mkdir(exist_ok=True)
    for lang in ("en", "zh"):
        thread = render_thread(diagnosis, catalogue, lang)
        (DOCS / f"slack-thread.{lang}.json").write_text(
            json.dumps(thread, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
        )
        (DOCS / f"diagnosis.{lang}.md").write_text(
            render_markdown(diagnosis, catalogue, lang), encoding="utf-8"
        )
    print(f"wrote {DOCS}/slack-thread.{{en,zh}}.json and diagnosis.{{en,zh}}.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
