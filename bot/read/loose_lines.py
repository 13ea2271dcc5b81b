"""Lines no structured parser claimed: messages, single event rows and quoted errors.

What is left after the tables, describes, YAML and ``ray status`` blocks are taken out is mostly
what users quote: a log line, an error from ``ray start``, one event row, the scheduler's sentence
in a markdown heading. Each run of adjacent lines is read here. Ray messages that wrap are first
joined into one logical line, so a rule sees ``No available node types can fulfill resource request
defaultdict(...)`` whole.

Every such line becomes a ``TextLine``, prose included, because real pastes mix the two: a sentence
that quotes ``nvidia GPUs not available on Node`` or ``1 nodes have joined so far, waiting for 1
more`` carries the signal and no error word. Whether a line *looks like* a message (an error word,
a log prefix) decides only whether the paste counts as recognised output; what the line means is
left to the phrase rules, which name their own patterns. Prose may fill only part of the text
budget, so a long chat thread cannot crowd out the log lines pasted after it. A line no format
understood is also read for the facts people state in words ("Ray 2.9 on the cluster, 2.10
locally", "each node has one A10G"): :mod:`bot.read.prose` says why it is called from here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from bot.read import kubectl_events, prose, ray_messages
from bot.read.formats import Format, Tag
from bot.read.found import MAX_TEXTS, Found
from bot.read.ray_status_text import find_demands

# Log and error lines no more specific format claims: in the corpus, nearly all of them Ray's.
MESSAGES_FORMAT = Format("log or error messages", Tag.RAY_LOG)
DEMAND_LINE_FORMAT = Format("ray status demand line", Tag.RAY_STATUS)

_MARKDOWN = re.compile(r"^\s*(?:#{1,6}\s+|>\s?|[*-]\s+(?=\S))")
# Matched against the lower-cased line: far faster than IGNORECASE over this many alternatives.
_MESSAGE = re.compile(
    r"error|warn|fail|exception|traceback|panic|fatal|abort|cannot|can't|could not|couldn't|unable|"
    r"timed out|timeout|refused|denied|forbidden|insufficient|infeasible|unschedulable|not ready|notready|"
    r"didn't|did not|mismatch|killed|\boom|evict|backoff|crash|taint|affinity|nodes are available|"
    r"scale-up|scale up|autoscaler|scheduler|preempt|no available|not found|invalid|exceeded|quota|"
    r"unhealthy|deploy_failed|gcs|raylet|node ip|nodepool|instance type|unreachable|connection|errno|"
    r"pending|rejected|unavailable|retry|no space|out of memory|errimage|imagepull"
)
_LOG_PREFIX = re.compile(
    r"^\s*(?:\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d|[IWEF]\d{4} \d\d:\d\d|\([\w ,=+.:-]{1,80}\)\s|"
    r"(?:WARNING|ERROR|CRITICAL|INFO)\b)"
)
_KUBERAY_ROW = re.compile(
    r"^[a-z0-9][-a-z0-9.]*\s+(?:Initializing|Running|Complete|Failed|Suspending|Suspended|Retrying|Waiting|"
    r"ValidationFailed|ready|unhealthy|suspended|failed)\s"
)
_MAX_JOINED_LINES = 12
_MAX_JOINED_CHARS = 20_000
# Texts kept for lines that do not look like messages stop here; messages may use the rest.
PROSE_BUDGET = MAX_TEXTS // 2
# Shorter than this, a line without an error word is a word or two of chat, not a quoted message.
_MIN_PROSE_CHARS = 12


def looks_like_message(text: str) -> bool:
    if len(text) < 4 or not any(ch.isalpha() for ch in text[:200]):
        return False
    return bool(_LOG_PREFIX.match(text) or _MESSAGE.search(text[:4000].lower()) or _KUBERAY_ROW.match(text))


def _has_words(text: str) -> bool:
    return sum(ch.isalpha() for ch in text[:200]) >= _MIN_PROSE_CHARS // 2


def _join(parts: list[str]) -> str:
    text = parts[0]
    for part in parts[1:]:
        text += part if part[:1] in ".,;:)]}" else " " + part
    return text


def _read_logical(text: str, found: Found, namespace: str | None) -> None:
    text = _MARKDOWN.sub("", text, count=1).strip()
    if not text:
        return
    event = kubectl_events.read_row(text, namespace)
    if event is not None:
        found.add_event(event)
        found.recognise(kubectl_events.format_of(event))
        found.add_text(text)
        return
    recognised = ray_messages.read_message(text, found)
    bare = kubectl_events.read_bare(text)
    if bare is not None:
        found.add_event(replace(bare, namespace=namespace))
        found.recognise(kubectl_events.format_of(bare))
        recognised = True
    if kubectl_events.is_karpenter(text):
        found.recognise(kubectl_events.KARPENTER_FORMAT)
        recognised = True
    if not recognised and "pending" in text and (demands := find_demands(text)):
        # A demand line of ``ray status`` quoted on its own or inside a sentence.
        for demand in demands:
            # Without the status around it the paste may hold nothing to judge it against.
            found.add_demand(replace(demand, listed=True))
        found.recognise(DEMAND_LINE_FORMAT)
        recognised = True
    if not recognised and prose.read_line(text, found):
        # A sentence stating versions, GPUs per node or workers that never joined: kept as text
        # whatever the prose budget, since a rule quotes it.
        found.add_text(text)
    if recognised:
        found.add_text(text)
    elif looks_like_message(text):
        found.add_text(text)
        found.recognise(MESSAGES_FORMAT)
    elif len(text) >= _MIN_PROSE_CHARS and len(found.texts) < PROSE_BUDGET and _has_words(text):
        found.add_text(text)


def read_run(lines: Sequence[str], found: Found, namespace: str | None) -> None:
    """Read adjacent unclaimed lines, joining Ray messages that wrap over several lines."""
    i = 0
    while i < len(lines):
        line = lines[i]
        j = i + 1
        if ray_messages.starts_message(line):
            parts = [line.strip()]
            size = len(parts[0])
            while (
                j < len(lines)
                and j - i < _MAX_JOINED_LINES
                and size < _MAX_JOINED_CHARS
                and ray_messages.continues_message(lines[j])
            ):
                parts.append(lines[j].strip())
                size += len(parts[-1])
                j += 1
            line = _join(parts)
        elif kubectl_events.opens_reason_list(line):
            parts = [line.strip()]
            while (
                j < len(lines)
                and j - i <= kubectl_events.MAX_REASON_LINES
                and kubectl_events.continues_reason_list(lines[j])
            ):
                parts.append(lines[j].strip())
                j += 1
            line = " ".join(parts)
        _read_logical(line, found, namespace)
        i = j
