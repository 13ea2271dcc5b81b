"""A stand-in for the Slack Web API on loopback, plus signed requests for driving a Bolt app, for tests.

The real ``slack_sdk.WebClient`` (and so a Bolt ``App``) talks to it as it would to https://slack.com/api/::

    with serve_slack(usergroups={"S0GPUONCALL": ["U111"]}) as api:
        client = WebClient(token="xoxb-test", base_url=api.url)   # or RAYDIAG_SLACK_API_URL=api.url
        client.chat_postMessage(channel="C111", text="hi")
        [call] = api.wait_for("chat.postMessage")
        assert call.params["text"] == "hi"

What it answers, shaped like Slack's own answers:

* ``auth.test`` for the bot ``raydiag`` (``UBOT123`` / ``BBOT123`` in team ``T123``);
* ``chat.postMessage`` (a unique, increasing ``ts`` and the message echoed back, blocks included),
  ``chat.postEphemeral``, ``chat.update``, ``chat.delete``, ``chat.getPermalink``; the message
  methods check blocks the way Slack does (``invalid_blocks`` with json-pointers), and answer
  ``no_text``, ``channel_not_found`` and ``msg_too_long`` (over 40,000 characters);
* ``conversations.history`` / ``conversations.replies`` from what was posted here or seeded with
  ``add_message``; ``conversations.open``; ``reactions.add``; ``views.open|update|push|publish``;
* ``users.info`` (with ``tz``; ``locale`` only with ``include_locale``, as Slack does);
* ``usergroups.users.list`` from the configured ``usergroups`` (unknown group: ``no_such_subteam``);
* ``files.getUploadURLExternal``, the upload URL itself (``POST``/``PUT`` of bytes, recorded as the
  method ``"file_upload"``), ``files.completeUploadExternal``, so ``files_upload_v2`` works end to
  end; ``files.upload`` answers ``method_deprecated`` (Slack retired it);
* ``/response/<id>``: a ``response_url`` (Bolt's ``respond()``), recorded as method ``"response_url"``;
* any other method: ``{"ok": true}``, unless ``handle()`` gave it an answer (the Socket Mode server in
  ``tests/support/socket_mode.py`` answers ``apps.connections.open`` that way).

Every API method wants a token (``Authorization: Bearer xox...`` or a ``token`` parameter):
without one it answers ``not_authed``, with a malformed one ``invalid_auth`` (HTTP 200, like Slack).
``fail()`` injects faults: HTTP 429 with ``Retry-After`` (body error ``ratelimited``), 200 with an
error such as ``invalid_blocks``, 5xx, optionally slowed down; ``slow()`` delays good answers.

Also here: ``signed_headers`` and payload builders for the requests Slack sends to an app, and
``serve_bolt``, a small HTTP server in front of a Bolt ``App`` (what ``app.start()`` would do).
Everything is stdlib ``http.server`` in daemon threads; ``stop()`` returns promptly even while a
delayed answer is sleeping.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import http.server
import itertools
import json
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import HTTP
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlencode, urlsplit

from slack_bolt.request import BoltRequest

if TYPE_CHECKING:
    from slack_bolt import App

TEAM_ID = "T123"
TEAM_DOMAIN = "raydiag-test"
TEAM_NAME = "Raydiag Test"
WORKSPACE_URL = f"https://{TEAM_DOMAIN}.slack.com/"
BOT_USER_ID = "UBOT123"
BOT_ID = "BBOT123"
BOT_NAME = "raydiag"
APP_ID = "A123"
VERIFICATION_TOKEN = "legacy-verification-token"
FIRST_TS_MICROS = 1_733_000_000_000_100
TS_STEP_MICROS = 100
MAX_REQUEST_BODY = 16 * 1024 * 1024
MAX_TEXT = 40_000
MAX_MESSAGE_BLOCKS = 50
MAX_VIEW_BLOCKS = 100
# Parameters Slack reads as JSON when they arrive as form fields; decoded so assertions need not care.
JSON_PARAMS = frozenset({"blocks", "attachments", "view", "files", "metadata", "unfurls", "user_auth_blocks"})
MESSAGE_METHODS = frozenset({"chat.postMessage", "chat.postEphemeral", "chat.update", "chat.scheduleMessage"})
UNAUTHENTICATED_METHODS = frozenset({"api.test", "file_upload", "response_url"})
DEFAULT_USER: dict[str, Any] = {
    "team_id": TEAM_ID,
    "deleted": False,
    "color": "9f69e7",
    "tz": "America/Los_Angeles",
    "tz_label": "Pacific Standard Time",
    "tz_offset": -28800,
    "is_admin": False,
    "is_owner": False,
    "is_bot": False,
    "is_app_user": False,
    "updated": 1732900000,
}


# --------------------------------------------------------------------------------------------------
# What was received
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    """One request that reached the stand-in.

    ``method`` is the Web API method (``"chat.postMessage"``), or ``"response_url"`` / ``"file_upload"``
    for those two endpoints. ``params`` merges the query string with the JSON, form or multipart body
    (JSON-valued form fields such as ``blocks`` decoded). ``headers`` keys are lower-case. ``status``
    is the HTTP status the stand-in answered.
    """

    method: str
    params: dict[str, Any]
    headers: dict[str, str]
    time: float
    http_method: str = "POST"
    path: str = ""
    status: int = 200

    @property
    def token(self) -> str | None:
        """The token the caller presented, from the Authorization header or a ``token`` parameter."""
        auth = self.headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            return auth[7:].strip() or None
        token = self.params.get("token")
        return token if isinstance(token, str) and token else None


@dataclass
class Fault:
    """An armed fault: the next ``remaining`` calls to ``method`` get this answer (None: all of them)."""

    method: str
    status: int
    error: str | None
    retry_after: int | None
    remaining: int | None
    body: str | None = None
    delay: float = 0.0
    passthrough: bool = False

    def matches(self, method: str) -> bool:
        return self.remaining != 0 and self.method in (method, "*")


@dataclass
class _Answer:
    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)


def _json_answer(
    payload: Mapping[str, Any], status: int = 200, headers: Mapping[str, str] | None = None
) -> _Answer:
    merged = {"Content-Type": "application/json; charset=utf-8", **(headers or {})}
    return _Answer(status, json.dumps(payload).encode(), merged)


# --------------------------------------------------------------------------------------------------
# Block Kit checks, the limits Slack enforces on messages and views
# --------------------------------------------------------------------------------------------------

BLOCK_TYPES = frozenset(
    {
        "section",
        "header",
        "divider",
        "context",
        "actions",
        "image",
        "rich_text",
        "input",
        "file",
        "video",
        "markdown",
        "table",
        "context_actions",
    }
)


class _BlockChecker:
    def __init__(self) -> None:
        self.problems: list[str] = []

    def err(self, message: str, pointer: str) -> None:
        self.problems.append(f"{message} [json-pointer:{pointer}]")

    def string(self, value: Any, limit: int, pointer: str, *, required: bool = True) -> None:
        if value is None:
            if required:
                self.err("missing required field", pointer)
            return
        if not isinstance(value, str):
            self.err("must be a string", pointer)
        elif required and not value:
            self.err("must be more than 0 characters", pointer)
        elif len(value) > limit:
            self.err(f"must be less than {limit + 1} characters", pointer)

    def text(self, obj: Any, limit: int, pointer: str, *, plain_only: bool = False) -> None:
        if not isinstance(obj, dict):
            self.err("must be a text object", pointer)
            return
        allowed = ("plain_text",) if plain_only else ("plain_text", "mrkdwn")
        if obj.get("type") not in allowed:
            self.err(f"must be one of {', '.join(allowed)}", f"{pointer}/type")
        self.string(obj.get("text"), limit, f"{pointer}/text")

    def element(self, element: Any, pointer: str, action_ids: set[str]) -> None:
        if not isinstance(element, dict) or not isinstance(element.get("type"), str):
            self.err("must be an element with a type", pointer)
            return
        action_id = element.get("action_id")
        if action_id is not None:
            self.string(action_id, 255, f"{pointer}/action_id")
            if action_id in action_ids:
                self.err("duplicate action_id", f"{pointer}/action_id")
            action_ids.add(action_id)
        kind = element["type"]
        if kind == "button":
            self.text(element.get("text"), 75, f"{pointer}/text", plain_only=True)
            self.string(element.get("value"), 2000, f"{pointer}/value", required=False)
            self.string(element.get("url"), 3000, f"{pointer}/url", required=False)
            if element.get("style") not in (None, "primary", "danger"):
                self.err("must be one of primary, danger", f"{pointer}/style")
        elif kind == "overflow":
            self.sized(element.get("options"), 2, 5, f"{pointer}/options")
        elif kind in ("static_select", "multi_static_select") and "option_groups" not in element:
            self.sized(element.get("options"), 1, 100, f"{pointer}/options")

    def sized(self, items: Any, low: int, high: int, pointer: str) -> list[Any]:
        if not isinstance(items, list):
            self.err("must be an array", pointer)
            return []
        if len(items) < low:
            self.err(f"must provide at least {low} items", pointer)
        elif len(items) > high:
            self.err(f"no more than {high} items allowed", pointer)
        return items

    def blocks(self, blocks: Any, max_blocks: int, root: str) -> None:
        items = self.sized(blocks, 0, max_blocks, root)
        block_ids: set[str] = set()
        for index, block in enumerate(items):
            pointer = f"{root}/{index}"
            if not isinstance(block, dict):
                self.err("must be an object", pointer)
                continue
            kind = block.get("type")
            if kind not in BLOCK_TYPES:
                self.err("unsupported type", f"{pointer}/type")
                continue
            block_id = block.get("block_id")
            if block_id is not None:
                self.string(block_id, 255, f"{pointer}/block_id")
                if block_id in block_ids:
                    self.err("duplicate block_id", f"{pointer}/block_id")
                block_ids.add(block_id)
            self.block(kind, block, pointer)

    def block(self, kind: str, block: dict[str, Any], pointer: str) -> None:
        action_ids: set[str] = set()
        if kind == "section":
            text, fields = block.get("text"), block.get("fields")
            if text is None and fields is None:
                self.err("must provide either text or fields", pointer)
            if text is not None:
                self.text(text, 3000, f"{pointer}/text")
            if fields is not None:
                for i, item in enumerate(self.sized(fields, 1, 10, f"{pointer}/fields")):
                    self.text(item, 2000, f"{pointer}/fields/{i}")
            if "accessory" in block:
                self.element(block["accessory"], f"{pointer}/accessory", action_ids)
        elif kind == "header":
            self.text(block.get("text"), 150, f"{pointer}/text", plain_only=True)
        elif kind == "context":
            for i, item in enumerate(self.sized(block.get("elements"), 1, 10, f"{pointer}/elements")):
                if isinstance(item, dict) and item.get("type") in ("plain_text", "mrkdwn"):
                    self.text(item, 3000, f"{pointer}/elements/{i}")
                elif not (isinstance(item, dict) and item.get("type") == "image"):
                    self.err("must be a text or image element", f"{pointer}/elements/{i}")
        elif kind == "actions":
            for i, item in enumerate(self.sized(block.get("elements"), 1, 25, f"{pointer}/elements")):
                self.element(item, f"{pointer}/elements/{i}", action_ids)
        elif kind == "image":
            if "image_url" not in block and "slack_file" not in block:
                self.err("must provide image_url or slack_file", pointer)
            self.string(block.get("alt_text"), 2000, f"{pointer}/alt_text")
        elif kind == "markdown":
            self.string(block.get("text"), 12000, f"{pointer}/text")


def block_problems(blocks: Any, *, max_blocks: int = MAX_MESSAGE_BLOCKS, root: str = "/blocks") -> list[str]:
    """What Slack would reject in ``blocks``, as Slack words it: ``"<problem> [json-pointer:/blocks/0/...]"``.

    Covers the limits that bite in practice: block count, unknown block types, empty or overlong
    text (section 3000, field 2000, header 150, button 75), fields ≤ 10, context elements ≤ 10,
    actions elements ≤ 25, duplicate ``block_id`` / ``action_id``, header and button text not plain.
    """
    checker = _BlockChecker()
    checker.blocks(blocks, max_blocks, root)
    return checker.problems


# --------------------------------------------------------------------------------------------------
# The stand-in server
# --------------------------------------------------------------------------------------------------


class _Server(http.server.ThreadingHTTPServer):
    request_queue_size = 256
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], api: SlackWebAPI) -> None:
        self.api = api
        super().__init__(address, _APIHandler)


class _APIHandler(http.server.BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.0"

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _handle(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_REQUEST_BODY:
            self.send_error(413)
            return
        body = self.rfile.read(length) if length else b""
        headers = {key.lower(): value for key, value in self.headers.items()}
        answer = self.server.api._serve(self.command, self.path, headers, body)
        self.send_response(answer.status)
        for key, value in answer.headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(answer.body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(answer.body)

    do_GET = do_POST = do_PUT = _handle


def _decode_params(content_type: str, body: bytes) -> dict[str, Any]:
    if not body:
        return {}
    media = content_type.split(";", 1)[0].strip().lower()
    if media == "application/json":
        try:
            decoded = json.loads(body)
        except ValueError:
            return {"_invalid_json": body.decode("utf-8", "replace")}
        return dict(decoded) if isinstance(decoded, dict) else {"_json": decoded}
    if media == "multipart/form-data":
        return _decode_multipart(content_type, body)
    return _flatten(parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True))


def _decode_multipart(content_type: str, body: bytes) -> dict[str, Any]:
    message = BytesParser(policy=HTTP).parsebytes(f"Content-Type: {content_type}\r\n\r\n".encode() + body)
    params: dict[str, Any] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if not isinstance(name, str):
            continue
        payload = part.get_payload(decode=True)
        data = payload if isinstance(payload, bytes) else b""
        filename = part.get_filename()
        if filename is not None:
            params[name] = {"filename": filename, "size": len(data)}
        else:
            params[name] = data.decode("utf-8", "replace")
    return params


def _flatten(parsed: Mapping[str, list[str]]) -> dict[str, Any]:
    return {key: values[0] if len(values) == 1 else list(values) for key, values in parsed.items()}


def _truthy(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.lower() in ("true", "1"))


class SlackWebAPI:
    """The Slack Web API on ``127.0.0.1`` (port chosen by the OS), recording every call.

    ``usergroups`` maps a user group id (``"S0GPUONCALL"``) to its member user ids; ``users`` maps a user
    id to fields that override the default ``users.info`` profile (``{"U111": {"tz": "Europe/Berlin"}}``);
    with ``users`` given, unknown ids answer ``user_not_found``. ``check_blocks=False`` turns off the
    Block Kit checks on message and view methods.
    """

    def __init__(
        self,
        *,
        usergroups: Mapping[str, Sequence[str]] | None = None,
        users: Mapping[str, Mapping[str, Any]] | None = None,
        check_blocks: bool = True,
        host: str = "127.0.0.1",
    ) -> None:
        self.usergroups: dict[str, list[str]] = {
            key: list(value) for key, value in (usergroups or {}).items()
        }
        self.users: dict[str, dict[str, Any]] | None = (
            None if users is None else {key: dict(value) for key, value in users.items()}
        )
        self.check_blocks = check_blocks
        self.uploads: dict[str, bytes] = {}
        self._cond = threading.Condition()
        self._calls: list[Call] = []
        self._faults: list[Fault] = []
        self._messages: dict[str, list[dict[str, Any]]] = {}
        self._upload_names: dict[str, str] = {}
        self._ts = itertools.count(FIRST_TS_MICROS, TS_STEP_MICROS)
        self._ids = itertools.count(1)
        self._stopping = threading.Event()
        self._methods: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
            "api.test": lambda params: {"ok": True, "args": params},
            "auth.test": self._auth_test,
            "chat.postMessage": self._post_message,
            "chat.postEphemeral": self._post_ephemeral,
            "chat.update": self._update,
            "chat.delete": lambda params: {
                "ok": True,
                "channel": params.get("channel"),
                "ts": params.get("ts"),
            },
            "chat.getPermalink": self._permalink,
            "conversations.history": self._history,
            "conversations.replies": self._replies,
            "conversations.open": self._open_conversation,
            "reactions.add": self._reaction,
            "views.open": self._view,
            "views.update": self._view,
            "views.push": self._view,
            "views.publish": self._view,
            "users.info": self._user_info,
            "usergroups.users.list": self._usergroup_users,
            "files.getUploadURLExternal": self._upload_url,
            "files.completeUploadExternal": self._complete_upload,
            "files.upload": lambda params: {"ok": False, "error": "method_deprecated"},
        }
        self._handlers: dict[str, Callable[[Call], dict[str, Any]]] = {}
        self._server = _Server((host, 0), self)
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="slack-web-api",
            daemon=True,
        )
        self._thread.start()

    # -- addresses ---------------------------------------------------------------------------------

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    @property
    def url(self) -> str:
        """Base URL of the Web API, ending in "/": ``WebClient(base_url=api.url)``."""
        return f"{self.root}api/"

    def response_url(self, name: str = "cmd") -> str:
        """A ``response_url`` on this server, to put into slash-command and interaction payloads."""
        return f"{self.root}response/{name}"

    # -- what was received -------------------------------------------------------------------------

    @property
    def calls(self) -> list[Call]:
        """A snapshot of every call so far, oldest first."""
        with self._cond:
            return list(self._calls)

    def calls_to(self, method: str) -> list[Call]:
        with self._cond:
            return [call for call in self._calls if call.method == method]

    def wait_for(self, method: str, count: int = 1, timeout: float = 10.0) -> list[Call]:
        """Block until ``count`` calls to ``method`` have arrived; return all calls to it so far.

        Raises AssertionError (naming what did arrive) after ``timeout`` seconds.
        """
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                found = [call for call in self._calls if call.method == method]
                if len(found) >= count:
                    return found
                left = deadline - time.monotonic()
                if left <= 0:
                    seen = [call.method for call in self._calls]
                    raise AssertionError(
                        f"waited {timeout:g}s for {count} call(s) to {method}, got {len(found)}; received: {seen}"
                    )
                self._cond.wait(left)

    def clear(self) -> None:
        """Forget recorded calls (armed faults, posted messages and uploads stay)."""
        with self._cond:
            self._calls.clear()

    # -- faults and state --------------------------------------------------------------------------

    def fail(
        self,
        method: str,
        error: str | None = None,
        status: int = 429,
        retry_after: int | None = 1,
        times: int | None = 1,
        *,
        body: str | None = None,
        delay: float = 0.0,
    ) -> Fault:
        """Make the next ``times`` calls to ``method`` (``"*"``: any) fail; ``times=None``: every call.

        HTTP 429 answers ``{"ok": false, "error": "ratelimited"}`` (Slack's word for it; ``error``
        ``"rate_limited"`` is read as that) with a ``Retry-After`` header unless ``retry_after=None``.
        Other statuses answer ``{"ok": false, "error": error}``; ``error`` defaults to ``internal_error``
        for 5xx. ``body`` replaces the answer's body verbatim (an HTML 503 page, say); ``delay`` sleeps
        first.
        """
        if status == 429 and error in (None, "rate_limited"):
            error = "ratelimited"
        elif error is None:
            error = "internal_error" if status >= 500 else "unknown_error"
        fault = Fault(method, status, error, retry_after if status == 429 else None, times, body, delay)
        with self._cond:
            self._faults.append(fault)
        return fault

    def slow(self, method: str, seconds: float, times: int | None = 1) -> Fault:
        """Answer the next ``times`` calls to ``method`` normally, but only after ``seconds``."""
        fault = Fault(method, 200, None, None, times, delay=seconds, passthrough=True)
        with self._cond:
            self._faults.append(fault)
        return fault

    def handle(self, method: str, answer: Callable[[Call], dict[str, Any]]) -> None:
        """Answer ``method`` with ``answer(call)`` (the call carries the token), instead of the built-in
        answer; faults armed with ``fail()`` and ``slow()`` still come first."""
        with self._cond:
            self._handlers[method] = answer

    def clear_faults(self) -> None:
        with self._cond:
            self._faults.clear()

    def add_message(self, channel: str, message: Mapping[str, Any]) -> dict[str, Any]:
        """Seed a message for conversations.history / replies; a ``ts`` is issued when it has none."""
        with self._cond:
            stored = {"type": "message", **message}
            stored.setdefault("ts", self._next_ts())
            self._messages.setdefault(channel, []).append(stored)
            return stored

    def messages(self, channel: str) -> list[dict[str, Any]]:
        """Messages in ``channel``, oldest first: seeded ones and those posted through the API."""
        with self._cond:
            return sorted(self._messages.get(channel, []), key=lambda m: float(m["ts"]))

    def stop(self) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> SlackWebAPI:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- request handling --------------------------------------------------------------------------

    def _next_ts(self) -> str:
        micros = next(self._ts)
        return f"{micros // 1_000_000}.{micros % 1_000_000:06d}"

    def _next_id(self, prefix: str) -> str:
        return f"{prefix}{next(self._ids):08X}"

    def _serve(self, http_method: str, raw_path: str, headers: dict[str, str], body: bytes) -> _Answer:
        parts = urlsplit(raw_path)
        path = parts.path
        params = _flatten(parse_qs(parts.query, keep_blank_values=True))
        if path.startswith("/upload/v1/"):
            method = "file_upload"
            params = {**params, "file_id": path.rsplit("/", 1)[-1], "size": len(body)}
        else:
            params.update(_decode_params(headers.get("content-type", ""), body))
            method = (
                "response_url" if path.startswith("/response/") else path.removeprefix("/api/").strip("/")
            )
        for key in JSON_PARAMS & params.keys():
            if isinstance(params[key], str):
                with contextlib.suppress(ValueError):
                    params[key] = json.loads(params[key])

        with self._cond:
            fault = next((f for f in self._faults if f.matches(method)), None)
            if fault is not None and fault.remaining is not None:
                fault.remaining -= 1
        if fault is not None and fault.delay:
            self._stopping.wait(fault.delay)

        if fault is not None and not fault.passthrough:
            answer = self._fault_answer(fault)
        else:
            answer = self._answer(method, params, headers, body)
        call = Call(method, params, headers, time.time(), http_method, path, answer.status)
        with self._cond:
            self._calls.append(call)
            self._cond.notify_all()
        return answer

    @staticmethod
    def _fault_answer(fault: Fault) -> _Answer:
        extra = {} if fault.retry_after is None else {"Retry-After": str(fault.retry_after)}
        if fault.body is not None:
            return _Answer(fault.status, fault.body.encode(), {"Content-Type": "text/html", **extra})
        return _json_answer({"ok": False, "error": fault.error}, fault.status, extra)

    def _answer(self, method: str, params: dict[str, Any], headers: dict[str, str], body: bytes) -> _Answer:
        if method == "file_upload":
            with self._cond:
                self.uploads[params["file_id"]] = body
            return _Answer(200, f"OK - {len(body)}".encode(), {"Content-Type": "text/plain; charset=utf-8"})
        if method == "response_url":
            return _json_answer({"ok": True})
        if not method or "/" in method:
            return _Answer(404, b"Not Found", {"Content-Type": "text/plain"})
        if method not in UNAUTHENTICATED_METHODS:
            token = Call(method, params, headers, 0.0).token
            if token is None:
                return _json_answer({"ok": False, "error": "not_authed"})
            if not token.startswith(("xoxb-", "xoxp-", "xoxe.", "xapp-")):
                return _json_answer({"ok": False, "error": "invalid_auth"})
        with self._cond:
            custom = self._handlers.get(method)
        if custom is not None:
            return _json_answer(custom(Call(method, params, headers, time.time())))
        handler = self._methods.get(method)
        payload = {"ok": True} if handler is None else handler(params)
        return _json_answer(payload)

    # -- methods -----------------------------------------------------------------------------------

    @staticmethod
    def _error(error: str, problems: Sequence[str] = ()) -> dict[str, Any]:
        payload: dict[str, Any] = {"ok": False, "error": error}
        if problems:
            payload["errors"] = list(problems)
            payload["response_metadata"] = {"messages": [f"[ERROR] {problem}" for problem in problems]}
        return payload

    def _message_problem(self, params: dict[str, Any], *, need_content: bool = True) -> dict[str, Any] | None:
        if not params.get("channel"):
            return self._error("channel_not_found")
        text, blocks = params.get("text"), params.get("blocks")
        if need_content and not text and not blocks and not params.get("attachments"):
            return self._error("no_text")
        if isinstance(text, str) and len(text) > MAX_TEXT:
            return self._error("msg_too_long")
        if blocks is not None and self.check_blocks:
            problems = block_problems(blocks)
            if problems:
                return self._error("invalid_blocks", problems)
        return None

    def _bot_message(self, params: dict[str, Any], ts: str) -> dict[str, Any]:
        message: dict[str, Any] = {
            "type": "message",
            "user": BOT_USER_ID,
            "bot_id": BOT_ID,
            "app_id": APP_ID,
            "text": params.get("text") or "",
            "ts": ts,
            "team": TEAM_ID,
            "bot_profile": {
                "id": BOT_ID,
                "app_id": APP_ID,
                "name": BOT_NAME,
                "deleted": False,
                "team_id": TEAM_ID,
            },
        }
        for key in ("blocks", "attachments", "metadata"):
            if params.get(key) is not None:
                message[key] = params[key]
        if params.get("thread_ts"):
            message["thread_ts"] = str(params["thread_ts"])
        return message

    @staticmethod
    def _channel_for(channel: str) -> str:
        # Posting to a user id lands in the app's DM with that user, which has a D... id.
        return f"D{channel[1:]}" if channel[:1] in ("U", "W") else channel

    def _auth_test(self, params: dict[str, Any]) -> dict[str, Any]:
        return {
            "ok": True,
            "url": WORKSPACE_URL,
            "team": TEAM_NAME,
            "user": BOT_NAME,
            "team_id": TEAM_ID,
            "user_id": BOT_USER_ID,
            "bot_id": BOT_ID,
            "is_enterprise_install": False,
        }

    def _post_message(self, params: dict[str, Any]) -> dict[str, Any]:
        problem = self._message_problem(params)
        if problem is not None:
            return problem
        channel = self._channel_for(str(params["channel"]))
        with self._cond:
            ts = self._next_ts()
            message = self._bot_message(params, ts)
            self._messages.setdefault(channel, []).append(message)
        return {"ok": True, "channel": channel, "ts": ts, "message": message}

    def _post_ephemeral(self, params: dict[str, Any]) -> dict[str, Any]:
        problem = self._message_problem(params)
        if problem is not None:
            return problem
        if not params.get("user"):
            return self._error("user_not_found")
        with self._cond:
            return {"ok": True, "message_ts": self._next_ts()}

    def _update(self, params: dict[str, Any]) -> dict[str, Any]:
        problem = self._message_problem(params, need_content=False)
        if problem is not None:
            return problem
        if not params.get("ts"):
            return self._error("message_not_found")
        channel, ts = str(params["channel"]), str(params["ts"])
        message = self._bot_message(params, ts)
        with self._cond:
            for stored in self._messages.get(channel, []):
                if stored.get("ts") == ts:
                    stored.update(
                        {k: v for k, v in message.items() if k in ("text", "blocks", "attachments")}
                    )
        return {"ok": True, "channel": channel, "ts": ts, "text": message["text"], "message": message}

    def _permalink(self, params: dict[str, Any]) -> dict[str, Any]:
        channel, ts = params.get("channel"), params.get("message_ts")
        if not channel or not ts:
            return self._error("message_not_found")
        link = f"{WORKSPACE_URL}archives/{channel}/p{str(ts).replace('.', '')}"
        return {"ok": True, "channel": channel, "permalink": link}

    def _history(self, params: dict[str, Any]) -> dict[str, Any]:
        newest_first = list(reversed(self.messages(str(params.get("channel", "")))))
        limit = int(params.get("limit") or 100)
        return {
            "ok": True,
            "messages": newest_first[:limit],
            "has_more": len(newest_first) > limit,
            "pin_count": 0,
            "response_metadata": {"next_cursor": ""},
        }

    def _replies(self, params: dict[str, Any]) -> dict[str, Any]:
        ts = str(params.get("ts", ""))
        thread = [
            m
            for m in self.messages(str(params.get("channel", "")))
            if ts in (m.get("ts"), m.get("thread_ts"))
        ]
        return {"ok": True, "messages": thread, "has_more": False, "response_metadata": {"next_cursor": ""}}

    def _open_conversation(self, params: dict[str, Any]) -> dict[str, Any]:
        users = str(params.get("users") or "").split(",")
        return {"ok": True, "channel": {"id": self._channel_for(users[0]) if users[0] else "D000000"}}

    @staticmethod
    def _reaction(params: dict[str, Any]) -> dict[str, Any]:
        if not params.get("name"):
            return {"ok": False, "error": "invalid_name"}
        return {"ok": True}

    def _view(self, params: dict[str, Any]) -> dict[str, Any]:
        view = params.get("view")
        if not isinstance(view, dict):
            return self._error("invalid_arguments")
        if self.check_blocks:
            problems = block_problems(view.get("blocks", []), max_blocks=MAX_VIEW_BLOCKS, root="/view/blocks")
            if problems:
                return self._error("invalid_arguments", problems)
        with self._cond:
            view_id = str(params.get("view_id") or self._next_id("V"))
        echoed = {
            "id": view_id,
            "team_id": TEAM_ID,
            "app_id": APP_ID,
            "bot_id": BOT_ID,
            "hash": uuid.uuid4().hex[:20],
            "state": {"values": {}},
            **view,
        }
        return {"ok": True, "view": echoed}

    def _user_info(self, params: dict[str, Any]) -> dict[str, Any]:
        user_id = str(params.get("user") or "")
        if not user_id or (self.users is not None and user_id not in self.users):
            return self._error("user_not_found")
        name = f"user-{user_id.lower()}"
        user: dict[str, Any] = {
            "id": user_id,
            "name": name,
            "real_name": name.title(),
            **DEFAULT_USER,
            "profile": {"real_name": name.title(), "display_name": name, "team": TEAM_ID},
        }
        user.update((self.users or {}).get(user_id, {}))
        if _truthy(params.get("include_locale")):
            user.setdefault("locale", "en-US")
        else:
            user.pop("locale", None)
        return {"ok": True, "user": user}

    def _usergroup_users(self, params: dict[str, Any]) -> dict[str, Any]:
        group = str(params.get("usergroup") or "")
        if group not in self.usergroups:
            return self._error("no_such_subteam")
        return {"ok": True, "users": list(self.usergroups[group])}

    def _upload_url(self, params: dict[str, Any]) -> dict[str, Any]:
        filename, length = params.get("filename"), params.get("length")
        if not filename or length in (None, ""):
            return self._error("invalid_arguments")
        with self._cond:
            file_id = self._next_id("F")
            self._upload_names[file_id] = str(filename)
        return {"ok": True, "upload_url": f"{self.root}upload/v1/{file_id}", "file_id": file_id}

    def _complete_upload(self, params: dict[str, Any]) -> dict[str, Any]:
        files = params.get("files")
        if not isinstance(files, list) or not files:
            return self._error("invalid_arguments")
        done = []
        with self._cond:
            for item in files:
                file_id = str(item.get("id", "")) if isinstance(item, dict) else ""
                if file_id not in self._upload_names:
                    return self._error("file_not_found")
                name = self._upload_names[file_id]
                done.append(
                    {
                        "id": file_id,
                        "name": name,
                        "title": item.get("title") or name,
                        "size": len(self.uploads.get(file_id, b"")),
                        "user": BOT_USER_ID,
                        "permalink": f"{WORKSPACE_URL}files/{BOT_USER_ID}/{file_id}/{name}",
                    }
                )
        return {"ok": True, "files": done}


@contextlib.contextmanager
def serve_slack(
    *,
    usergroups: Mapping[str, Sequence[str]] | None = None,
    users: Mapping[str, Mapping[str, Any]] | None = None,
    check_blocks: bool = True,
) -> Iterator[SlackWebAPI]:
    """Run a ``SlackWebAPI`` for the duration of the block."""
    api = SlackWebAPI(usergroups=usergroups, users=users, check_blocks=check_blocks)
    try:
        yield api
    finally:
        api.stop()


# --------------------------------------------------------------------------------------------------
# Requests Slack sends to the app
# --------------------------------------------------------------------------------------------------


def signed_headers(
    body: str, secret: str, timestamp: int | None = None, *, content_type: str | None = None
) -> dict[str, str]:
    """Headers Slack sends with ``body``: ``X-Slack-Signature`` = ``v0=`` HMAC-SHA256 of ``v0:{ts}:{body}``.

    ``timestamp`` defaults to now; the content type to JSON for a body starting with ``{``, else a form.
    """
    ts = int(time.time()) if timestamp is None else timestamp
    digest = hmac.new(secret.encode(), f"v0:{ts}:{body}".encode(), hashlib.sha256).hexdigest()
    if content_type is None:
        is_json = body.lstrip().startswith("{")
        content_type = "application/json" if is_json else "application/x-www-form-urlencoded"
    return {
        "Content-Type": content_type,
        "X-Slack-Request-Timestamp": str(ts),
        "X-Slack-Signature": f"v0={digest}",
    }


def _now_ts() -> str:
    return f"{time.time():.6f}"


def _trigger_id() -> str:
    return f"{int(time.time())}.{TEAM_ID[1:]}4711.{uuid.uuid4().hex}"


def _hooks_url(kind: str) -> str:
    return f"https://hooks.slack.com/{kind}/{TEAM_ID}/{uuid.uuid4().int % 10**13}/{uuid.uuid4().hex[:24]}"


def _user(user_id: str) -> dict[str, Any]:
    name = f"user-{user_id.lower()}"
    return {"id": user_id, "username": name, "name": name, "team_id": TEAM_ID}


def _payload_form(payload: Mapping[str, Any]) -> str:
    return urlencode({"payload": json.dumps(payload)})


def slash_command_body(
    command: str = "/raydiag",
    text: str = "raydiag-gpu",
    user_id: str = "U111",
    channel_id: str = "C111",
    response_url: str | None = None,
    trigger_id: str | None = None,
    *,
    channel_name: str = "ml-platform",
    user_name: str | None = None,
) -> str:
    """The urlencoded form Slack POSTs for a slash command, fields in Slack's order.

    Pass ``response_url=api.response_url()`` so that ``respond()`` reaches the stand-in.
    """
    fields = {
        "token": VERIFICATION_TOKEN,
        "team_id": TEAM_ID,
        "team_domain": TEAM_DOMAIN,
        "channel_id": channel_id,
        "channel_name": channel_name,
        "user_id": user_id,
        "user_name": user_name or f"user-{user_id.lower()}",
        "command": command,
        "text": text,
        "api_app_id": APP_ID,
        "is_enterprise_install": "false",
        "response_url": response_url or _hooks_url("commands"),
        "trigger_id": trigger_id or _trigger_id(),
    }
    return urlencode(fields)


def _block_id_of(blocks: Sequence[Mapping[str, Any]], action_id: str) -> str | None:
    for block in blocks:
        elements = list(block.get("elements") or [])
        if "accessory" in block:
            elements.append(block["accessory"])
        if any(isinstance(e, Mapping) and e.get("action_id") == action_id for e in elements):
            block_id = block.get("block_id")
            return str(block_id) if block_id else None
    return None


def block_actions_payload(
    action_id: str,
    value: str = "",
    user_id: str = "U111",
    channel_id: str = "C111",
    message_ts: str = "1733000000.000100",
    thread_ts: str | None = None,
    response_url: str | None = None,
    message_blocks: Sequence[Mapping[str, Any]] | None = None,
    *,
    block_id: str | None = None,
    button_text: str = "Button",
    message_text: str = "",
    message_author: str | None = None,
) -> dict[str, Any]:
    """The ``block_actions`` payload for a button click on a bot message (as a dict).

    ``message_author``: the button sits on this person's message instead (no ``bot_id``).
    """
    blocks = [dict(block) for block in message_blocks or []]
    block_id = block_id or _block_id_of(blocks, action_id) or "raydiag_actions"
    author = (
        {"user": BOT_USER_ID, "bot_id": BOT_ID, "app_id": APP_ID}
        if message_author is None
        else {"user": message_author}
    )
    message: dict[str, Any] = {
        "type": "message",
        **author,
        "text": message_text,
        "ts": message_ts,
        "team": TEAM_ID,
        "blocks": blocks,
    }
    if thread_ts is not None:
        message["thread_ts"] = thread_ts
    return {
        "type": "block_actions",
        "user": _user(user_id),
        "api_app_id": APP_ID,
        "token": VERIFICATION_TOKEN,
        "container": {
            "type": "message",
            "message_ts": message_ts,
            "channel_id": channel_id,
            "is_ephemeral": False,
            **({"thread_ts": thread_ts} if thread_ts is not None else {}),
        },
        "trigger_id": _trigger_id(),
        "team": {"id": TEAM_ID, "domain": TEAM_DOMAIN},
        "enterprise": None,
        "is_enterprise_install": False,
        "channel": {"id": channel_id, "name": "ml-platform"},
        "message": message,
        "state": {"values": {}},
        "response_url": response_url or _hooks_url("actions"),
        "actions": [
            {
                "action_id": action_id,
                "block_id": block_id,
                "text": {"type": "plain_text", "text": button_text, "emoji": True},
                "value": value,
                "type": "button",
                "action_ts": _now_ts(),
            }
        ],
    }


def block_actions_body(
    action_id: str,
    value: str = "",
    user_id: str = "U111",
    channel_id: str = "C111",
    message_ts: str = "1733000000.000100",
    thread_ts: str | None = None,
    response_url: str | None = None,
    message_blocks: Sequence[Mapping[str, Any]] | None = None,
    **extra: Any,
) -> str:
    """``payload=<urlencoded JSON>``: the form Slack POSTs when a user clicks a button."""
    payload = block_actions_payload(
        action_id, value, user_id, channel_id, message_ts, thread_ts, response_url, message_blocks, **extra
    )
    return _payload_form(payload)


def app_mention_event(
    text: str = f"<@{BOT_USER_ID}> raydiag-gpu",
    user: str = "U111",
    channel: str = "C111",
    ts: str | None = None,
    thread_ts: str | None = None,
) -> dict[str, Any]:
    """An ``app_mention`` event, as it sits in an event_callback."""
    ts = ts or _now_ts()
    event: dict[str, Any] = {
        "type": "app_mention",
        "client_msg_id": str(uuid.uuid4()),
        "user": user,
        "text": text,
        "ts": ts,
        "team": TEAM_ID,
        "channel": channel,
        "event_ts": ts,
    }
    if thread_ts is not None:
        event["thread_ts"] = thread_ts
    return event


def message_event(
    text: str = "hello",
    user: str | None = "U111",
    channel: str = "C111",
    ts: str | None = None,
    thread_ts: str | None = None,
    *,
    bot_id: str | None = None,
    subtype: str | None = None,
    channel_type: str = "channel",
) -> dict[str, Any]:
    """A ``message`` event; ``bot_id`` makes it a bot's post, ``subtype`` e.g. ``"bot_message"``."""
    ts = ts or _now_ts()
    event: dict[str, Any] = {"type": "message", "text": text, "ts": ts, "channel": channel, "event_ts": ts}
    if subtype is not None:
        event["subtype"] = subtype
    if user is not None:
        event["user"] = user
    if bot_id is not None:
        event["bot_id"] = bot_id
        event["app_id"] = APP_ID if bot_id == BOT_ID else f"A{bot_id[1:]}"
    else:
        event["client_msg_id"] = str(uuid.uuid4())
    event["team"] = TEAM_ID
    event["channel_type"] = channel_type
    if thread_ts is not None:
        event["thread_ts"] = thread_ts
    return event


def event_callback_payload(
    event: Mapping[str, Any], event_id: str = "Ev123", *, event_time: int | None = None
) -> dict[str, Any]:
    return {
        "token": VERIFICATION_TOKEN,
        "team_id": TEAM_ID,
        "context_team_id": TEAM_ID,
        "context_enterprise_id": None,
        "api_app_id": APP_ID,
        "event": dict(event),
        "type": "event_callback",
        "event_id": event_id,
        "event_time": int(time.time()) if event_time is None else event_time,
        "authorizations": [
            {
                "enterprise_id": None,
                "team_id": TEAM_ID,
                "user_id": BOT_USER_ID,
                "is_bot": True,
                "is_enterprise_install": False,
            }
        ],
        "is_ext_shared_channel": False,
        "event_context": f"4-{uuid.uuid4().hex}",
    }


def event_callback_body(
    event: Mapping[str, Any], event_id: str = "Ev123", *, event_time: int | None = None
) -> str:
    """The JSON body of an Events API delivery wrapping ``event``."""
    return json.dumps(event_callback_payload(event, event_id, event_time=event_time))


def message_shortcut_body(
    callback_id: str = "raydiag_diagnose",
    message_text: str = "raycluster raydiag-gpu is stuck",
    channel_id: str = "C111",
    user_id: str = "U111",
    message_ts: str = "1733000000.000100",
    *,
    response_url: str | None = None,
    message_user: str = "U222",
) -> str:
    """``payload=<urlencoded JSON>`` of a message shortcut (``type: message_action``)."""
    payload = {
        "type": "message_action",
        "token": VERIFICATION_TOKEN,
        "action_ts": _now_ts(),
        "team": {"id": TEAM_ID, "domain": TEAM_DOMAIN},
        "user": _user(user_id),
        "channel": {"id": channel_id, "name": "ml-platform"},
        "is_enterprise_install": False,
        "enterprise": None,
        "callback_id": callback_id,
        "trigger_id": _trigger_id(),
        "response_url": response_url or _hooks_url("app"),
        "message_ts": message_ts,
        "message": {
            "client_msg_id": str(uuid.uuid4()),
            "type": "message",
            "text": message_text,
            "user": message_user,
            "ts": message_ts,
            "team": TEAM_ID,
        },
    }
    return _payload_form(payload)


def url_verification_body(challenge: str = "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P") -> str:
    return json.dumps({"token": VERIFICATION_TOKEN, "challenge": challenge, "type": "url_verification"})


# --------------------------------------------------------------------------------------------------
# A Bolt app over HTTP
# --------------------------------------------------------------------------------------------------


class _BoltServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], app: App, path: str) -> None:
        self.app = app
        self.events_path = path
        super().__init__(address, _BoltHandler)


class _BoltHandler(http.server.BaseHTTPRequestHandler):
    server: _BoltServer

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _reply(self, status: int, headers: Mapping[str, Sequence[str]], body: bytes) -> None:
        self.send_response(status)
        for key, values in headers.items():
            for value in [values] if isinstance(values, str) else values:
                self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        path, _, query = self.path.partition("?")
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode("utf-8") if length else ""
        if path != self.server.events_path:
            self._reply(404, {"Content-Type": ["text/plain"]}, b"Not Found")
            return
        headers: dict[str, str | Sequence[str]] = {
            key.lower(): self.headers.get_all(key) or [] for key in set(self.headers.keys())
        }
        response = self.server.app.dispatch(BoltRequest(body=body, query=query, headers=headers))
        self._reply(response.status, response.headers, response.body.encode("utf-8"))

    def do_GET(self) -> None:
        self._reply(404, {"Content-Type": ["text/plain"]}, b"Not Found")


@contextlib.contextmanager
def serve_bolt(app: App, *, path: str = "/slack/events") -> Iterator[str]:
    """Serve ``app`` over HTTP on loopback, like ``app.start()``; yields the events URL."""
    server = _BoltServer(("127.0.0.1", 0), app, path)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="bolt-http", daemon=True
    )
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}{path}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@dataclass(frozen=True)
class HttpAnswer:
    status: int
    headers: dict[str, str]
    body: str

    def json(self) -> Any:
        return json.loads(self.body)


def post(url: str, body: str, headers: Mapping[str, str], timeout: float = 10.0) -> HttpAnswer:
    """POST ``body`` and return the answer, HTTP errors included (no exception for 4xx/5xx)."""
    request = urllib.request.Request(url, data=body.encode(), headers=dict(headers), method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return HttpAnswer(response.status, dict(response.headers.items()), response.read().decode())
    except urllib.error.HTTPError as error:
        with error:
            return HttpAnswer(error.code, dict(error.headers.items()), error.read().decode())


def bolt_request(body: str, secret: str, timestamp: int | None = None) -> BoltRequest:
    """A ``BoltRequest`` for ``app.dispatch()``, signed the way Slack signs ``body``."""
    headers: dict[str, str | Sequence[str]] = dict(signed_headers(body, secret, timestamp))
    return BoltRequest(body=body, headers=headers)


def post_signed(url: str, body: str, secret: str, timestamp: int | None = None) -> HttpAnswer:
    """POST ``body`` to a Bolt app the way Slack does, signed with ``secret``."""
    return post(url, body, signed_headers(body, secret, timestamp))
