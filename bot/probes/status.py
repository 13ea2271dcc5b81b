"""``ray status`` without a shell on the head: the dashboard's formatted cluster status.

``GET /api/cluster_status?format=1`` answers ``{"result": true, "data": {"clusterStatus": "<text>"}}``
where the text is what ``ray status`` prints (node status, resources, pending demands), for the
autoscaler v1 and v2 alike. Some versions spell the key ``cluster_status``; both are read.

A Slack message holds about 4000 characters, so long texts are clipped: the head (node status and
resources) and the tail (pending demands) are kept, and the per-node middle gives way.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from bot.collect.deadline import Deadline
from bot.collect.ray_dashboard import DashboardDown, DashboardReader
from bot.probes import Outcome
from bot.snapshot.redact import redact

PATH = "/api/cluster_status?format=1"
MAX_CHARS = 3500
TAIL_SHARE = 0.4  # of MAX_CHARS kept from the end, where the pending demands are


@dataclass(frozen=True)
class StatusResult:
    outcome: Outcome  # "ran", "unreachable" (no dashboard), "failed" (it answered without the text)
    dashboard_url: str
    text: str | None = None
    clipped: bool = False
    total_chars: int = 0
    note: str | None = None
    error: str | None = None
    elapsed_s: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def status_text(answer: object) -> str | None:
    """The formatted text out of the dashboard's answer, wherever this version puts it."""
    if isinstance(answer, str):
        return answer
    data = answer.get("data") if isinstance(answer, Mapping) else None
    for holder in (data, answer):
        if isinstance(holder, Mapping):
            for key in ("clusterStatus", "cluster_status"):
                value = holder.get(key)
                if isinstance(value, str):
                    return value
    return None


def clip(text: str, limit: int = MAX_CHARS) -> tuple[str, bool]:
    """``text`` within ``limit`` characters, keeping whole lines from its start and its end."""
    if len(text) <= limit:
        return text, False
    lines = text.splitlines()
    budget = limit - 60  # room for the marker line
    tail_budget = int(budget * TAIL_SHARE)
    tail: list[str] = []
    used = 0
    for line in reversed(lines):
        if used + len(line) + 1 > tail_budget:
            break
        tail.insert(0, line)
        used += len(line) + 1
    head: list[str] = []
    room = budget - used
    used = 0
    for line in lines[: len(lines) - len(tail)]:
        if used + len(line) + 1 > room:
            break
        head.append(line)
        used += len(line) + 1
    if not head:  # one enormous first line
        head = [lines[0][: max(0, room - 1)]]
    left_out = len(text) - sum(len(line) + 1 for line in head + tail) + 1
    marker = f"… ({max(0, left_out)} characters left out) …"
    return "\n".join([*head, marker, *tail]), True


def ray_status_text(dashboard_url: str, timeout_s: float = 10.0) -> StatusResult:
    """The ``ray status`` text of the cluster behind ``dashboard_url``; never raises."""
    began = time.monotonic()
    url = dashboard_url.rstrip("/")
    reader = DashboardReader(url, Deadline(timeout_s), call_timeout=timeout_s)

    def elapsed() -> float:
        return round(time.monotonic() - began, 3)

    try:
        answer = reader.get(PATH)
    except DashboardDown as down:
        return StatusResult(
            "unreachable", url, error=f"cannot reach the Ray dashboard: {down}", elapsed_s=elapsed()
        )
    except Exception as error:  # an HTTP error, HTML from a proxy, a Ray without this endpoint
        return StatusResult("failed", url, error=redact(f"GET {PATH}: {error}"), elapsed_s=elapsed())
    text = status_text(answer)
    if text is None or not text.strip():
        return StatusResult(
            "failed",
            url,
            error="the dashboard answered without a formatted status",
            note="the autoscaler (monitor) on the head may not have published a status yet",
            elapsed_s=elapsed(),
        )
    text = redact(text.strip("\n"))
    shown, clipped = clip(text)
    note = (
        f"clipped to {len(shown)} of {len(text)} characters: the start and the pending demands at "
        "the end are kept; run `ray status` on the head for the rest"
        if clipped
        else None
    )
    return StatusResult(
        "ran", url, text=shown, clipped=clipped, total_chars=len(text), note=note, elapsed_s=elapsed()
    )


__all__ = ["MAX_CHARS", "StatusResult", "clip", "ray_status_text", "status_text"]
