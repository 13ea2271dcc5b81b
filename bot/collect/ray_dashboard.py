"""Read the Ray layer over the dashboard's HTTP API.

No ``ray.init``: a driver must match the cluster's Ray and Python versions, and one bot serves
clusters of many versions. The dashboard's JSON is read as-is and translated by
``bot.read.ray_json``, which knows the response shapes of older and newer Ray 2.x.

An unreachable dashboard is evidence, not a crash: the head may be down, its Service may have no
endpoints, or a NetworkPolicy may block the bot. The first failed call that shows the dashboard is
not there at all (refused, no such host, timed out, or a proxy's HTML page before any JSON) stops
the Ray collection, so a dead head costs one timeout rather than one per endpoint. Once the
dashboard has answered, one endpoint that times out (the state API on a big cluster) is reported
on its own and the others are still read; a second timeout stops the collection. The first
endpoint is the probe; once it answers, the others are asked at once (a few at a time) and judged
in their fixed order, so the outcome does not depend on which answer came first.
"""

from __future__ import annotations

import json
import socket
import threading
import urllib.error
import urllib.request
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from bot.collect.deadline import Deadline
from bot.collect.html_answer import html_summary, is_html
from bot.read.ray_json import ray_state
from bot.snapshot.model import CollectionError
from bot.snapshot.ray import RayState

LIMIT = "limit=10000"
# Key (as ray_json.ray_state takes it) -> path. Order matters: version first, as the probe.
ENDPOINTS: dict[str, str] = {
    "version": "/api/version",
    "nodes": f"/api/v0/nodes?detail=1&{LIMIT}",
    "cluster_status": "/api/cluster_status",
    # Autoscaler v2 (KubeRay's newer autoscaler) leaves the structured status empty; its demands
    # are only in the formatted text.
    "cluster_status_formatted": "/api/cluster_status?format=1",
    "nodes_summary": "/nodes?view=summary",
    "actors": f"/api/v0/actors?detail=1&{LIMIT}&filter_keys=state&filter_predicates=%3D&filter_values=ALIVE",
    "pending_tasks": f"/api/v0/tasks?detail=1&{LIMIT}"
    "&filter_keys=state&filter_predicates=%3D&filter_values=PENDING_NODE_ASSIGNMENT",
    "placement_groups": f"/api/v0/placement_groups?detail=1&{LIMIT}",
    "jobs": "/api/jobs/",
    "state_jobs": f"/api/v0/jobs?{LIMIT}",
    "serve_applications": "/api/serve/applications/",
}
# Older dashboards lack some endpoints; these are tried when the main one answers 404.
FALLBACKS: dict[str, str] = {
    "serve_applications": "/api/serve/deployments/status",
}
# Endpoints that older Ray versions simply do not have; their absence is not worth a finding.
OPTIONAL = frozenset({"cluster_status_formatted", "nodes_summary", "state_jobs", "serve_applications"})
MAX_BODY = 64 * 1024 * 1024


class DashboardDown(Exception):
    """The dashboard is not reachable at all; further calls would only wait again."""

    def __init__(self, reason: str, *, timed_out: bool = False) -> None:
        super().__init__(reason)
        self.timed_out = timed_out


@dataclass
class DashboardReader:
    base_url: str
    deadline: Deadline
    call_timeout: float = 8.0
    errors: list[CollectionError] = field(default_factory=list)
    # Optional endpoints this release does not have (404 on the path and its fallback): key -> the
    # paths asked. Not an error, but what they would have shown is unknown, not empty.
    unanswered: dict[str, list[str]] = field(default_factory=dict)
    requests: int = 0
    bytes_read: int = 0
    _counting: threading.Lock = field(
        default_factory=threading.Lock, repr=False
    )  # endpoints are read at once

    def get(self, path: str) -> Any:
        url = self.base_url.rstrip("/") + path
        timeout = min(self.call_timeout, max(0.05, self.deadline.remaining()))
        request = urllib.request.Request(url, headers={"Accept": "application/json", "User-Agent": "raydiag"})
        with self._counting:
            self.requests += 1
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                body = response.read(MAX_BODY + 1)
        except urllib.error.HTTPError as error:
            page = error.read(8192)
            if is_html(page):
                raise _HttpError(error.code, html_summary(page), html=True) from error
            raise _HttpError(error.code, _failure_message(page)) from error
        except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as error:
            reason = _network_reason(error, timeout)
            raise DashboardDown(reason, timed_out=reason.endswith("(timed out)")) from error
        with self._counting:
            self.bytes_read += len(body)
        if len(body) > MAX_BODY:
            raise _HttpError(200, f"answer larger than {MAX_BODY} bytes")
        try:
            parsed = json.loads(body)
        except (ValueError, RecursionError) as error:
            if is_html(body):
                raise _HttpError(200, f"the answer is {html_summary(body)}", html=True) from error
            raise _HttpError(
                200, f"the answer is not valid JSON ({len(body)} bytes, cut off?): {_snippet(body)}"
            ) from error
        if isinstance(parsed, Mapping) and parsed.get("result") is False:
            raise _HttpError(200, str(parsed.get("msg") or "the dashboard reported a failure")[:300])
        return parsed


class _HttpError(Exception):
    def __init__(self, status: int, message: str, *, html: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.html = html


def _snippet(body: bytes) -> str:
    text = body[:300].decode("utf-8", errors="replace").strip()
    return " ".join(text.split())[:200]


def _failure_message(body: bytes) -> str:
    """The ``msg`` of Ray's ``{"result": false, "msg": ...}`` failure body, else its first bytes."""
    try:
        parsed = json.loads(body)
    except (ValueError, RecursionError):
        return _snippet(body)
    message = parsed.get("msg") if isinstance(parsed, Mapping) else None
    return str(message)[:300] if isinstance(message, str) and message else _snippet(body)


def _network_reason(error: BaseException, timeout: float) -> str:
    reason = getattr(error, "reason", error)
    text = str(reason)
    if isinstance(reason, TimeoutError | socket.timeout) or "timed out" in text.lower():
        return f"no answer within {timeout:g}s (timed out)"
    if "refused" in text.lower():
        return "connection refused"
    if isinstance(reason, socket.gaierror) or "name or service not known" in text.lower():
        return "the dashboard's host name does not resolve"
    return f"{type(reason).__name__}: {text[:200]}"


# Endpoints read at once after the probe: the dashboard is one process, and the state API's calls
# each ask the GCS, so a few at a time and no more.
MAX_PARALLEL_CALLS = 3


@dataclass
class _Outcome:
    """What asking for one endpoint gave: an answer (from its path or its fallback), or why not."""

    answer: Any = None  # JSON, so None (null) is an answer too
    error: DashboardDown | _HttpError | None = None
    asked: list[str] = field(default_factory=list)  # the paths that answered 404
    skipped: bool = False  # the deadline was reached before it was asked

    @property
    def answered(self) -> bool:
        return self.error is None and not self.skipped


def _ask(reader: DashboardReader, key: str, path: str) -> _Outcome:
    """One endpoint, and its older path when this one answers 404."""
    if reader.deadline.expired():
        return _Outcome(skipped=True)
    try:
        return _Outcome(answer=reader.get(path))
    except DashboardDown as down:
        return _Outcome(error=down)
    except _HttpError as error:
        status, failed = error.status, _Outcome(error=error, asked=[path])
    fallback = FALLBACKS.get(key)
    if fallback and status == 404:
        try:
            return _Outcome(answer=reader.get(fallback))
        except _HttpError as second:
            if second.status == 404:
                failed.asked.append(fallback)
        except DashboardDown:
            pass
    return failed


def collect_ray(reader: DashboardReader) -> dict[str, Any]:
    """Raw answers by key; failures are recorded on the reader and leave their key out.

    The first endpoint is the probe: when the dashboard is not there, nothing else is asked. The
    others are then asked at once (at most ``MAX_PARALLEL_CALLS`` in flight) and their outcomes
    judged in ``ENDPOINTS`` order, as if they had been asked one after another.
    """
    (probe_key, probe_path), *rest = ENDPOINTS.items()
    answers: dict[str, Any] = {}
    judge = _Judge(reader, answers)
    if not judge(probe_key, probe_path, _ask(reader, probe_key, probe_path)):
        return answers
    with ThreadPoolExecutor(MAX_PARALLEL_CALLS, thread_name_prefix="raydiag-ray") as pool:
        asked = [(key, path, pool.submit(_ask, reader, key, path)) for key, path in rest]
        for key, path, future in asked:
            if not judge(key, path, future.result()):
                for _, _, later in asked:
                    later.cancel()
                break
    return answers


@dataclass
class _Judge:
    """Turns outcomes into answers and errors, in order; False when the collection must stop."""

    reader: DashboardReader
    answers: dict[str, Any]
    slow_endpoint_seen: bool = False

    def __call__(self, key: str, path: str, outcome: _Outcome) -> bool:
        reader, answers = self.reader, self.answers
        if outcome.skipped:
            reader.errors.append(
                CollectionError(
                    source="ray dashboard",
                    message=f"skipped {path} and later endpoints: "
                    f"the {reader.deadline.total:g}s deadline was reached",
                )
            )
            return False
        if outcome.answered:
            answers[key] = outcome.answer
            return True
        error = outcome.error
        if isinstance(error, DashboardDown):
            if error.timed_out and answers and not self.slow_endpoint_seen:
                self.slow_endpoint_seen = True
                reader.errors.append(
                    CollectionError(
                        source=f"ray api {key}",
                        message=f"GET {path}: {error}",
                        hint="the dashboard answered other calls; this one is slow on a large or busy "
                        "cluster, raise collection.call_timeout_s to wait for it",
                    )
                )
                return True
            reader.errors.append(
                CollectionError(
                    source="ray dashboard",
                    message=f"cannot reach the Ray dashboard at {reader.base_url} ({path}): {error}",
                    hint="check that the head Pod is Ready, that its Service has endpoints, and that no "
                    "NetworkPolicy blocks port 8265 from raydiag; or pass --dashboard-url",
                )
            )
            return False
        assert isinstance(error, _HttpError)
        if error.html and not answers:
            reader.errors.append(
                CollectionError(
                    source="ray dashboard",
                    message=f"{reader.base_url} ({path}) answered "
                    + (f"HTTP {error.status} with " if error.status != 200 else "")
                    + f"{str(error).removeprefix('the answer is ')}, not the Ray dashboard's JSON",
                    hint="a proxy, ingress or login page stands in front of the dashboard, or its "
                    "backend is down; check the head Pod, or pass --dashboard-url with the "
                    "dashboard itself (kubectl port-forward svc/<cluster>-head-svc 8265)",
                )
            )
            return False
        # 404: not in this version; 501: Serve's dependencies are not installed on the head, so
        # no Serve application can run there.
        if error.status in (404, 501) and key in OPTIONAL:
            if error.status == 404:
                reader.unanswered[key] = outcome.asked
            return True
        reader.errors.append(
            CollectionError(
                source=f"ray api {key}",
                message=f"GET {path}: "
                + (f"HTTP {error.status}: " if error.status != 200 else "")
                + str(error),
            )
        )
        return True


def read_ray_layer(reader: DashboardReader) -> RayState | None:
    """The Ray half of a snapshot as this dashboard answers it; None when it answered nothing.

    What failed is on ``reader.errors``; the parts this release has no endpoint for are in the
    state's ``unread``.
    """
    answers = collect_ray(reader)
    return ray_state(answers, reader.unanswered) if answers else None
