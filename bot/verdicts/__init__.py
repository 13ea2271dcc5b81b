"""Users' verdicts on posted diagnoses: what is kept, and how it is asked about.

Every diagnosis thread the bot posts asks "Right cause?". The answer is only worth keeping together
with what the diagnosis was given and what it said, so that a wrong answer can become a corpus case
(``tests/corpus``) the team's raydiag is then measured on: ``raydiag corpus export`` writes them.
What is kept is the input as a person could paste it again: a paste verbatim, and for a cluster the
bot read itself the verbatim quotes its findings carry (event messages, log lines, statuses) — the
text a reader can read back — never raydiag's own sentences. Both are redacted before they are kept.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass

from bot.diagnosis import Diagnosis
from bot.snapshot.redact import redact

# The causes a verdict may name: the catalogue's ten (CAUSES.md).
CAUSES = tuple(range(1, 11))
# Bounds on what is kept: a paste as long as Slack allows (40,000 characters) fits many times.
MAX_INPUT = 200_000
MAX_OTHER = 300
_ID = re.compile(r"d[0-9a-f]{20}")
# A Slack mention (``<@U0123ABCD>``, the bot's own in every @raydiag paste) is no part of any tool's output.
_MENTION = re.compile(r"<@[A-Z0-9]+>[ \t]?")


@dataclass(frozen=True)
class Choice:
    """What the person picked when raydiag was wrong: a cause, or "something else" said in words."""

    cause: int | None
    other: str | None


def new_diagnosis_id() -> str:
    return "d" + secrets.token_hex(10)


def is_diagnosis_id(value: object) -> bool:
    """Whether a value names a diagnosis as ``new_diagnosis_id`` makes them (nothing else is looked up)."""
    return isinstance(value, str) and _ID.fullmatch(value) is not None


def asked_cause(diagnosis: Diagnosis) -> int | None:
    """The cause "Right cause?" asks about: that of the first warning or critical finding, the one the
    verdict line names; None when it has no number or nothing was alarming."""
    alarming = [f for f in diagnosis.findings if f.severity != "info"]
    return alarming[0].cause if alarming else None


def quoted_input(diagnosis: Diagnosis) -> str:
    """The verbatim quotes of a diagnosis's findings, once each, in order: the input of a cluster the
    bot read itself, as text the paste readers read back."""
    quotes: list[str] = []
    seen: set[str] = set()
    for finding in diagnosis.findings:
        for evidence in finding.evidence:
            if evidence.phrase is None and evidence.text not in seen:
                seen.add(evidence.text)
                quotes.append(evidence.text)
    return "\n".join(quotes)


def kept_input(diagnosis: Diagnosis, pasted: str | None) -> str:
    """What is kept as a diagnosis's input: the paste (mentions left out), else the findings'
    quotes; redacted, bounded."""
    text = _MENTION.sub("", pasted[:MAX_INPUT]) if pasted is not None else quoted_input(diagnosis)
    return redact(text[:MAX_INPUT])


def read_choice(value: str | None, text: str | None) -> Choice | None:
    """The modal's answer: ``"1"``..``"10"`` or ``"other"`` (then a short text is needed); None when
    it is neither (a crafted payload), or "something else" without words."""
    words = redact(" ".join((text or "").split()))[:MAX_OTHER] or None
    if value == "other":
        return Choice(None, words) if words else None
    if value is not None and value.isdigit() and int(value) in CAUSES:
        return Choice(int(value), words)
    return None
