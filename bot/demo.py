"""``make demo``: diagnose the bundled incident and print it as the thread would read.

The bundled paste (``bot/examples/incident-paste.txt``) is what an engineer drops into an incident
thread: ``kubectl get pods``, ``kubectl describe pod`` with its events, and ``ray status``. The demo
runs it through the same collect → classify → render path as the CLI and the bot.
"""

from __future__ import annotations

import sys
from pathlib import Path

from bot.catalogue import default_catalogue
from bot.classify import classify
from bot.collect.paste import parse_paste
from bot.render import render_json, render_text

EXAMPLE = Path(__file__).resolve().parent / "examples" / "incident-paste.txt"
OUT = Path("out")


def main() -> int:
    catalogue = default_catalogue()
    diagnosis = classify(parse_paste(EXAMPLE.read_text(encoding="utf-8")))
    shown = EXAMPLE.relative_to(Path.cwd()) if EXAMPLE.is_relative_to(Path.cwd()) else EXAMPLE
    print(f"raydiag explain {shown}\n")
    print(render_text(diagnosis, catalogue, "en"))
    OUT.mkdir(exist_ok=True)
    report = OUT / "demo-diagnosis.json"
    report.write_text(render_json(diagnosis, catalogue, "en") + "\n", encoding="utf-8")
    (OUT / "demo-diagnosis.zh.txt").write_text(render_text(diagnosis, catalogue, "zh"), encoding="utf-8")
    print(f"JSON report: {report}; Chinese text: {OUT / 'demo-diagnosis.zh.txt'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
