"""Turn whatever was pasted into plain lines that the format parsers can trust.

Pasted text arrives through chat clients, terminals and browsers, and each adds its own noise:
Slack escapes ``<none>`` as ``&lt;none&gt;`` and wraps links, terminals leave colour escapes,
web pages add non-breaking spaces and curly quotes, and markdown adds fences. None of it is part of
the tool output, and every parser would otherwise need to cope with it separately.

This is also where the work is bounded: the input is cut to ``MAX_CHARS`` and long lines to
``MAX_LINE`` (except lines that may be compact JSON, which the JSON reader needs whole), so no later
step can be made slow or large by the size of a paste.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MAX_CHARS = 2_000_000
MAX_LINE = 16_000

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\x1b]{0,200}(?:\x07|\x1b\\)|\x1b[()][A-Za-z0-9]")
# Control characters other than tab and newline, plus zero-width and byte-order marks.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200d\u2060\ufeff]")
_SLACK_LINK = re.compile(r"<((?:https?|mailto):[^|<>\s]{0,2000})(?:\|([^<>]{0,2000}))?>")
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u00a0": " "})
_FENCE = re.compile(r"^\s*(?:```|~~~)[A-Za-z0-9_+-]*\s*")
_SURROGATE = re.compile(r"[\ud800-\udfff]")


@dataclass
class CleanText:
    lines: list[str]
    notes: list[str] = field(default_factory=list)


def _without_surrogates(text: str) -> str:
    """Lone surrogates replaced by U+FFFD (and split surrogate pairs joined into their character).

    A JSON string (a Slack event is JSON) may carry half of a surrogate pair, ``"\\ud800"``, which
    Python decodes into a code point UTF-8 cannot encode: a snapshot or diagnosis quoting it could
    then not be written as JSON or posted back.
    """
    if not _SURROGATE.search(text):
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _unslack(text: str) -> str:
    if "&lt;" in text or "&gt;" in text or "&amp;" in text:
        text = text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    if "<http" in text or "<mailto" in text:
        text = _SLACK_LINK.sub(lambda m: m.group(2) or m.group(1), text)
    return text


def _without_trailing_fence(text: str) -> str:
    text = text.rstrip()
    return text[:-3].rstrip() if text.endswith(("```", "~~~")) else text


def _strip_fence(line: str) -> str | None:
    """A fence line keeps any text after its marker and language tag; a bare fence disappears."""
    if "```" not in line and "~~~" not in line:
        return line
    fence = _FENCE.match(line)
    if fence:
        rest = _without_trailing_fence(line[fence.end() :])
        return rest if rest.strip() else None
    return _without_trailing_fence(line)


def _may_be_json(line: str) -> bool:
    return line.lstrip()[:1] in {"{", "["}


def clean(text: object) -> CleanText:
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    if not isinstance(text, str):
        text = str(text)
    notes: list[str] = []
    if len(text) > MAX_CHARS:
        notes.append(f"paste truncated to its first {MAX_CHARS:,} characters (it had {len(text):,})")
        text = text[:MAX_CHARS]
    text = _without_surrogates(text).replace("\r\n", "\n").replace("\r", "\n")
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    text = _CONTROL.sub("", text)
    text = _unslack(text).translate(_QUOTES)
    lines: list[str] = []
    for raw in text.split("\n"):
        line = _strip_fence(raw)
        if line is None:
            continue
        if "\t" in line:
            line = line.expandtabs(8)
        line = line.rstrip()
        if len(line) > MAX_LINE and not _may_be_json(line):
            line = line[:MAX_LINE]
        lines.append(line)
    return CleanText(lines=lines, notes=notes)
