"""A Ray dashboard on loopback that replays recorded answers, and can be made to misbehave.

The fault tests need the Ray half of a diagnosis without a Ray cluster: this server answers every
path exactly as the recording in ``tests/fixtures/ray/<scenario>/`` says Ray 2.60 answered it (the
path table is the recording's own ``_recording.json``; the paths in ``_errors.json`` answer 404),
and anything else with aiohttp's ``404: Not Found``, as the real dashboard does.

Two older Ray versions and one newer one are built from the fixtures too:

* ``ray_2_9_answers()``: the hand-written Ray 2.9.3 answers (``older-shapes/ray-2.9``: version,
  nodes, cluster status keyed by IP); the other list endpoints of 2.9 answer an empty list in the
  state API envelope, which has not changed since 2.0.
* ``ray_2_2_answers()``: Ray 2.2.0 (``older-shapes/ray-2.2``): no ``/api/serve/applications/`` yet
  (404; Serve's single-application status lives at ``/api/serve/deployments/status``), no
  ``?format=1`` cluster status, no ``/api/v0/jobs``; a cluster status with no autoscaler report, as
  a cluster without an autoscaler answers.
* ``newer_answers()``: the ``broken`` recording as a future Ray might send it: a new version
  string, unknown fields in every record and envelope, and optional fields renamed (a node's
  ``is_head_node`` -> ``is_head``, an actor's ``ray_namespace`` -> ``namespace``, a task's
  ``func_or_class_name`` -> ``function_name``).

``DashboardFault`` delays an answer, replaces it by a status (a Ray-style JSON failure, aiohttp's
plain 500, or nginx's HTML page) or cuts its body in half. Stdlib only; ``stop()`` returns at once
even while faulted requests are sleeping.
"""

from __future__ import annotations

import contextlib
import copy
import http.server
import json
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ray"
JSON = "application/json; charset=utf-8"
TEXT = "text/plain; charset=utf-8"
LIMIT = "limit=10000"
STATE_FILTER = "&filter_keys=state&filter_predicates=%3D&filter_values="
# The paths Ray's own clients (``ray list``, ``ray status``, the job and Serve CLIs) ask for.
PATHS: dict[str, str] = {
    "version": "/api/version",
    "nodes": f"/api/v0/nodes?detail=1&{LIMIT}",
    "cluster_status": "/api/cluster_status",
    "cluster_status_formatted": "/api/cluster_status?format=1",
    "nodes_summary": "/nodes?view=summary",
    "actors_alive": f"/api/v0/actors?detail=1&{LIMIT}{STATE_FILTER}ALIVE",
    "pending_tasks": f"/api/v0/tasks?detail=1&{LIMIT}{STATE_FILTER}PENDING_NODE_ASSIGNMENT",
    "placement_groups": f"/api/v0/placement_groups?detail=1&{LIMIT}",
    "jobs": "/api/jobs/",
    "state_jobs": f"/api/v0/jobs?{LIMIT}",
    "serve_applications": "/api/serve/applications/",
    "serve_deployments_status": "/api/serve/deployments/status",
}
NGINX_502 = (
    "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
    "<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
)
LOGIN_PAGE = (
    '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
    '<title>Sign in - ml-platform SSO</title>\n</head>\n<body>\n<form method="post" '
    'action="/oauth2/start"><button type="submit">Sign in with Google</button></form>\n</body>\n</html>\n'
)
AIOHTTP_500 = "500 Internal Server Error\n\nServer got itself in trouble"
GCS_TIMEOUT = (
    "Failed to get the data from GCS within the timeout (30 seconds). The GCS may be overloaded; "
    "retry with a larger timeout or a smaller limit: DEADLINE_EXCEEDED"
)


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes
    content_type: str = JSON

    @classmethod
    def json(cls, document: Any, status: int = 200) -> Answer:
        return cls(status, json.dumps(document, indent=2).encode() + b"\n")

    def document(self) -> Any:
        return json.loads(self.body)


NOT_FOUND = Answer(404, b"404: Not Found", TEXT)


@dataclass(frozen=True)
class DashboardFault:
    """Change the answer to requests whose path and query match ``path_regex`` (``re.search``).

    * ``delay_s``: wait this long first (a slow state API, a hung head);
    * ``status`` with ``body``: ``"ray"`` a Ray-style ``{"result": false, "msg": ...}`` failure
      (what the state API sends when the GCS times out), ``"aiohttp"`` aiohttp's plain-text 500,
      ``"html"`` nginx's 502 page, ``"login"`` an SSO proxy's sign-in page;
    * ``body="truncated"`` without ``status``: the recorded answer cut in half;
    * ``times``: None for every matching request, N for the first N only.
    """

    path_regex: str
    status: int | None = None
    delay_s: float = 0.0
    body: Literal["ray", "aiohttp", "html", "login", "truncated"] | None = None
    times: int | None = None

    def answer(self, recorded: Answer) -> Answer:
        if self.body == "truncated":
            return Answer(self.status or recorded.status, recorded.body[: len(recorded.body) // 2])
        if self.status is None:
            return recorded
        if self.body == "html":
            return Answer(self.status, NGINX_502.encode(), "text/html")
        if self.body == "login":
            return Answer(self.status, LOGIN_PAGE.encode(), "text/html; charset=utf-8")
        if self.body == "aiohttp":
            return Answer(self.status, AIOHTTP_500.encode(), TEXT)
        return Answer.json({"result": False, "msg": GCS_TIMEOUT, "data": {}}, self.status)


class RecordedDashboard:
    """A running replay server; use ``serve_dashboard()``."""

    def __init__(self, answers: Mapping[str, Answer], faults: Iterable[DashboardFault] = ()) -> None:
        self.answers = dict(answers)
        self._faults = [(fault, [fault.times]) for fault in faults]
        self._lock = threading.Lock()
        self.requests: list[tuple[str, int]] = []
        self._stopping = threading.Event()
        self._server = _Server(self)
        host, port = self._server.server_address[:2]
        self.url = f"http://{host!s}:{port}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    def respond(self, path: str) -> Answer | None:
        """The answer to ``path`` (with its query), or None for a request cut short by ``stop()``."""
        answer = self.answers.get(path, NOT_FOUND)
        fault = self._fault_for(path)
        if fault is not None:
            if fault.delay_s and self._stopping.wait(fault.delay_s):
                return None
            answer = fault.answer(answer)
        with self._lock:
            self.requests.append((path, answer.status))
        return answer

    def _fault_for(self, path: str) -> DashboardFault | None:
        with self._lock:
            for fault, remaining in self._faults:
                if remaining[0] == 0 or not re.search(fault.path_regex, path):
                    continue
                if remaining[0] is not None:
                    remaining[0] -= 1
                return fault
        return None

    def stop(self) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # as aiohttp (Ray's dashboard) does: no 40 ms delayed-ACK wait
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        answer = self.server.dashboard.respond(self.path)
        if answer is None:
            self.close_connection = True
            return
        with contextlib.suppress(OSError):  # the client gave up waiting (its call timed out)
            self.send_response(answer.status)
            self.send_header("Content-Type", answer.content_type)
            self.send_header("Content-Length", str(len(answer.body)))
            self.send_header("Server", "Python/3.11 aiohttp/3.10.11")
            self.end_headers()
            self.wfile.write(answer.body)


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, dashboard: RecordedDashboard) -> None:
        self.dashboard = dashboard
        super().__init__(("127.0.0.1", 0), _Handler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind looks the host name up (getfqdn), which can stall without DNS.
        import socketserver

        socketserver.TCPServer.server_bind(self)

    def handle_error(self, request: Any, client_address: Any) -> None:
        return


@contextlib.contextmanager
def serve_dashboard(
    answers: Mapping[str, Answer], faults: Iterable[DashboardFault] = ()
) -> Iterator[RecordedDashboard]:
    dashboard = RecordedDashboard(answers, faults)
    try:
        yield dashboard
    finally:
        dashboard.stop()


# --- answers ---------------------------------------------------------------------------------------


def recorded_answers(scenario: str = "broken") -> dict[str, Answer]:
    """Every answer of a recording at its path, with the status and body it was recorded with.

    ``scenario`` is a folder under ``tests/fixtures/ray/``: ``broken``, ``healthy``,
    ``broken-autoscaler-v2``, or ``<version>/<scenario>`` of the per-release recordings.
    """
    folder = FIXTURES / scenario
    recording = json.loads((folder / "_recording.json").read_text(encoding="utf-8"))
    answers: dict[str, Answer] = {}
    for key, endpoint in recording["endpoints"].items():
        if endpoint.get("base", "dashboard") != "dashboard":
            continue  # asked of another server (a node's dashboard agent), not the dashboard
        status = int(endpoint["status"])
        json_file, text_file = folder / f"{key}.json", folder / f"{key}.txt"
        if not status:  # the recorder could not connect: nothing was answered
            answers[endpoint["path"]] = NOT_FOUND
        elif json_file.exists():
            answers[endpoint["path"]] = Answer(status, json_file.read_bytes())
        elif text_file.exists():
            answers[endpoint["path"]] = Answer(status, text_file.read_bytes(), TEXT)
        else:
            answers[endpoint["path"]] = NOT_FOUND
    return answers


def _empty_list() -> Answer:
    return Answer.json(
        {
            "result": True,
            "msg": "",
            "data": {"result": {"total": 0, "num_after_truncation": 0, "num_filtered": 0, "result": []}},
        }
    )


def _files(version: str, names: Mapping[str, str]) -> dict[str, Answer]:
    folder = FIXTURES / "older-shapes" / version
    return {PATHS[key]: Answer(200, (folder / f"{file}.json").read_bytes()) for key, file in names.items()}


def ray_2_9_answers() -> dict[str, Answer]:
    answers = {
        PATHS[key]: _empty_list()
        for key in ("actors_alive", "pending_tasks", "placement_groups", "state_jobs")
    }
    answers[PATHS["jobs"]] = Answer.json([])
    answers.update(
        _files("ray-2.9", {"version": "version", "nodes": "nodes", "cluster_status": "cluster_status"})
    )
    return answers


def ray_2_2_answers() -> dict[str, Answer]:
    answers = {PATHS[key]: _empty_list() for key in ("pending_tasks",)}
    answers[PATHS["jobs"]] = Answer.json([])
    answers[PATHS["cluster_status"]] = Answer.json(
        {
            "result": True,
            "msg": "Got cluster status.",
            "data": {"autoscalingStatus": None, "autoscalingError": None, "clusterStatus": None},
        }
    )
    answers.update(
        _files(
            "ray-2.2",
            {
                "version": "version",
                "nodes": "nodes",
                "nodes_summary": "nodes_summary",
                "actors_alive": "actors",
                "placement_groups": "placement_groups",
                "serve_deployments_status": "serve_applications",
            },
        )
    )
    return answers


def _rename(record: dict[str, Any], old: str, new: str) -> None:
    if old in record:
        record[new] = record.pop(old)


def _state_records(document: Any, change: Callable[[dict[str, Any]], None]) -> Any:
    """The state API envelope with two fields a newer Ray might add, each record changed."""
    changed = copy.deepcopy(document)
    page = changed["data"]["result"]
    page["warnings"] = None
    page["next_cursor"] = "eyJvZmZzZXQiOiAxMDAwMH0="
    for record in page["result"]:
        record["labels_v2"] = {"ray.io/market-type": "on-demand"}
        record["accelerator_topology"] = {"slices": [], "interconnect": "nvlink"}
        change(record)
    return changed


def newer_answers() -> dict[str, Answer]:
    """The ``broken`` recording with the unknown and renamed fields of a future Ray 3."""
    answers = recorded_answers("broken")

    def edit(path: str, change: Callable[[Any], Any]) -> None:
        answers[path] = Answer.json(change(answers[path].document()))

    def version(document: dict[str, Any]) -> dict[str, Any]:
        return {**document, "ray_version": "3.0.0", "version": "5", "api_revisions": {"state": "v2"}}

    def node(record: dict[str, Any]) -> None:
        _rename(record, "is_head_node", "is_head")
        record["node_labels_source"] = "kuberay"

    def actor(record: dict[str, Any]) -> None:
        _rename(record, "ray_namespace", "namespace")
        record["restart_policy"] = {"max_restarts": 0}

    def task(record: dict[str, Any]) -> None:
        _rename(record, "func_or_class_name", "function_name")

    def job(record: dict[str, Any]) -> dict[str, Any]:
        return {**record, "driver_exit_code": 3, "entrypoint_accelerators": {"GPU": 0}}

    def serve(document: dict[str, Any]) -> dict[str, Any]:
        changed = copy.deepcopy(document)
        changed["target_groups"] = []
        for application in changed["applications"].values():
            application["deployment_topology"] = {"app_name": application["name"], "nodes": {}}
        return changed

    def cluster_status(document: dict[str, Any]) -> dict[str, Any]:
        changed = copy.deepcopy(document)
        changed["data"]["autoscalerV3Summary"] = {"schedulingPolicy": "bin-pack"}
        return changed

    edit(PATHS["version"], version)
    edit(PATHS["nodes"], lambda d: _state_records(d, node))
    edit(PATHS["actors_alive"], lambda d: _state_records(d, actor))
    edit(PATHS["pending_tasks"], lambda d: _state_records(d, task))
    edit(PATHS["placement_groups"], lambda d: _state_records(d, lambda r: None))
    edit(PATHS["jobs"], lambda d: [job(record) for record in d])
    edit(PATHS["serve_applications"], serve)
    edit(PATHS["cluster_status"], cluster_status)
    return answers
