"""Write bot/similar/reports.json, the index of resolved reports that "Seen before" searches.

    .venv/bin/python tools/build_similar_index.py          # write it
    .venv/bin/python tools/build_similar_index.py --check  # exit 1 if it is stale against tests/corpus

The bot must not read tests/ at run time, so the corpus is distilled into a file shipped in the
package: for each ``thread`` case (a public thread with a settled cause) and each ``quiet`` case
(kept as healthy, with no cause), its id, causes, the first sentence of ``what_happened`` (our
words, cut to ``RESOLUTION_LIMIT`` characters) and the thread's address; then, for each word of
the pastes (``bot.similar.tokens``), the BM25 weight bm25s gives it in each report that uses it
(``bot.similar.weights``). Not the pasted text itself. Cases recorded here (``recorded``) are left
out: they are no one's resolved report. tests/similar checks that the shipped file equals what
this writes, so a corpus change without a new index fails there.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bot.similar.index import INDEX_FILE, INDEX_VERSION  # noqa: E402
from bot.similar.tokens import term_counts  # noqa: E402
from bot.similar.weights import postings  # noqa: E402

CORPUS = ROOT / "tests" / "corpus"
KINDS = ("thread", "quiet")
RESOLUTION_LIMIT = 160
# A sentence ends at . ! or ? followed by a space and a capital, a backtick or a quote; not inside
# "e.g. the" or "nvidia.com/gpu".
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`'\"(])")
ABBREVIATIONS = ("e.g.", "i.e.", "vs.", "etc.")
GITHUB = re.compile(r"github\.com/([\w.-]+)/([\w.-]+)/(?:issues|pull|discussions)/(\d+)")
SHORT = re.compile(r"^([\w.-]+/[\w.-]+)#(\d+)")
URL = re.compile(r"https?://[^\s)]+")


@dataclass(frozen=True)
class CorpusReport:
    """One case of the corpus as the index and its evaluation see it."""

    entry: Mapping[str, Any]  # what reports.json keeps of it
    terms: Mapping[str, int]  # the words of its paste, counted
    text: str  # the paste, as a query in the evaluation
    also_ok: tuple[int, ...]  # a defensible second answer (scored as right, never indexed)


def thread_of(source: str) -> str:
    """The thread a case comes from, one spelling for all (``owner/repo#N``, lower-case): the
    corpus writes it as ``owner/repo#N (https://…)`` or as a bare ``github.com/…`` address."""
    found = GITHUB.search(source)
    if found:
        return f"{found[1]}/{found[2]}#{found[3]}".lower()
    found = SHORT.match(source)
    if found:
        return f"{found[1]}#{found[2]}".lower()
    return source.strip()


def address_of(source: str) -> str:
    """The thread's web address, else the source as written (how a healthy output was recorded)."""
    found = URL.search(source)
    if found:
        return found[0].rstrip(".,")
    found = GITHUB.search(source)
    if found:
        return f"https://{found[0]}"
    return source.strip()


def first_sentence(text: str, limit: int = RESOLUTION_LIMIT) -> str:
    """The first sentence of ``text``, cut with an ellipsis past ``limit`` characters."""
    text = " ".join(text.split())
    ends = (m.start() for m in SENTENCE_END.finditer(text) if not text[: m.start()].endswith(ABBREVIATIONS))
    text = text[: next(ends, len(text))]
    if len(text) <= limit:
        return text
    return text[: limit - 1].rstrip() + "…"


def corpus_reports(root: Path = CORPUS) -> list[CorpusReport]:
    """Every thread and quiet case under ``root``, in batch and file order."""
    found: list[CorpusReport] = []
    for expected in sorted(root.glob("*/expected.json")):
        for raw in json.loads(expected.read_text(encoding="utf-8")):
            kind = str(raw.get("kind", "thread"))
            if kind not in KINDS:
                continue
            path = expected.parent / str(raw["file"])
            text = path.read_bytes().decode("utf-8", errors="replace")
            source = str(raw["source"])
            entry = {
                "id": f"{expected.parent.name}/{path.stem}",
                "causes": [int(c) for c in raw["causes"]] if kind == "thread" else [],
                "healthy": kind == "quiet",
                "resolution": first_sentence(str(raw.get("what_happened", ""))),
                "address": address_of(source),
                "thread": thread_of(source),
            }
            also_ok = tuple(int(c) for c in raw.get("also_ok", []))
            found.append(CorpusReport(entry, term_counts(text), text, also_ok))
    return found


def build(root: Path = CORPUS) -> dict[str, Any]:
    reports = corpus_reports(root)
    return {
        "version": INDEX_VERSION,
        "reports": [r.entry for r in reports],
        "words": postings([r.terms for r in reports]),
    }


def render(index: Mapping[str, Any]) -> str:
    """The file's text: one report a line, then one word a line (a report's index and its weight,
    repeated), so that the file reads and diffs line by line."""

    def dumped(value: object) -> str:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

    reports = ",\n".join(dumped(r) for r in index["reports"])
    words = ",\n".join(f"{dumped(word)}:{dumped(pairs)}" for word, pairs in index["words"].items())
    return f'{{"version":{index["version"]},"reports":[\n{reports}\n],"words":{{\n{words}\n}}}}\n'


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the shipped index is stale")
    args = parser.parse_args(argv)
    text = render(build())
    if args.check:
        current = INDEX_FILE.read_text(encoding="utf-8") if INDEX_FILE.is_file() else ""
        if current != text:
            print(f"{INDEX_FILE} is stale: run tools/build_similar_index.py", file=sys.stderr)
            return 1
        return 0
    INDEX_FILE.write_text(text, encoding="utf-8")
    index = json.loads(text)
    counts = f"{len(index['reports'])} reports, {len(index['words'])} words, {len(text):,} bytes"
    print(f"wrote {INDEX_FILE}: {counts}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
