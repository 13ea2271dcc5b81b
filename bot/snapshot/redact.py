"""Secret-looking values are replaced before text enters a snapshot.

Log lines and messages are quoted verbatim as evidence, into Slack channels and shared snapshot
files; a token printed by a misbehaving entrypoint must not travel with them. Redaction happens in
the snapshot models themselves (``Redacted`` fields, redacted when a record is made; see
``bot.snapshot.base``), so no collector can forget it.
"""

from __future__ import annotations

import re
from typing import Annotated

MASK = "[REDACTED]"

_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"(?i)\b(bearer|basic)\s+[a-z0-9._~+/=-]{8,}"),
    # key=value / key: value where the key names a secret
    re.compile(
        r"(?i)\b((?:[a-z0-9_.-]*?)(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|"
        r"client[_-]?secret|authorization|credentials?)[a-z0-9_.-]*)(\s*[=:]\s*)(\"[^\"]*\"|'[^']*'|[^\s,;&\"']+)"
    ),
    re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),  # AWS access key id
    re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"),  # Google API key
    re.compile(r"\bya29\.[0-9A-Za-z_-]{20,}"),  # Google OAuth access token
    re.compile(r"\bhf_[A-Za-z0-9]{20,}\b"),  # Hugging Face
    re.compile(r"\bsk-[A-Za-z0-9_-]{20,}\b"),  # OpenAI-style keys
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b"),  # GitHub tokens
    re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"),  # Slack tokens
    re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}\b"),  # GitLab
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)"),
    re.compile(r"\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"),  # JWT
    re.compile(r"(?i)(://[^\s:/@]+:)[^\s@/]+(@)"),  # credentials in URLs
)


def _mask(match: re.Match[str]) -> str:
    groups = match.groups()
    if len(groups) == 3 and groups[1] is not None and groups[2] is not None:
        return f"{groups[0]}{groups[1]}{MASK}"
    if len(groups) == 2 and groups[0] and groups[0].startswith("://"):
        return f"{groups[0]}{MASK}{groups[1]}"
    if groups and groups[0] and groups[0].lower() in ("bearer", "basic"):
        return f"{groups[0]} {MASK}"
    return MASK


def redact(text: str) -> str:
    if not text:
        return text
    for pattern in _PATTERNS:
        text = pattern.sub(_mask, text)
    return text


def redact_lines(lines: list[str]) -> list[str]:
    return [redact(line) for line in lines]


class _Marker:
    """Says, in a field's annotation, that ``Record`` redacts the field (pydantic ignores it)."""

    def __repr__(self) -> str:
        return "redacted"


Redacted = Annotated[str, _Marker()]
RedactedLines = Annotated[list[str], _Marker()]
