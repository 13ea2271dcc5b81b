"""A Slack Socket Mode server on loopback, for tests: what ``wss://wss-primary.slack.com/link/`` does.

slack_sdk's Socket Mode clients (the built-in one and the ``websocket-client`` one, under Bolt's
``SocketModeHandler``) connect to it as they would to Slack. The Web API stand-in answers
``apps.connections.open`` with this server's URL once it is attached::

    with serve_slack() as api, serve_socket_mode(api) as socket:
        ...  # start the bot with SLACK_APP_TOKEN=xapp-... and RAYDIAG_SLACK_API_URL=api.url
        socket.wait_connected()
        envelope = socket.slash_command(text="help")
        ack = socket.wait_ack(envelope)
        socket.disconnect()  # {"type": "disconnect", "reason": "refresh_requested"}
        socket.wait_connected(count=2)

The protocol, as Slack documents it (docs.slack.dev/apis/events-api/using-socket-mode) and slack_sdk
speaks it: each connection opens with ``{"type": "hello", ...}``; the server delivers envelopes
``{"envelope_id", "type": "slash_commands" | "interactive" | "events_api", "payload",
"accepts_response_payload"}``; the client acknowledges each with ``{"envelope_id": ..., "payload"?}``;
``{"type": "disconnect", "reason": "refresh_requested"}`` asks the client to open a new connection
(the old one is left open until the client closes it, or ``close_after`` seconds).

The WebSocket side is a small RFC 6455 server on stdlib sockets and threads: the opening handshake,
text frames (fragmented ones too), ping/pong and close. ``refuse()`` answers the next handshakes with
HTTP 503 (a server that does not accept connections); ``stop_listening()`` closes the port (connection
refused) and ``listen()`` opens it again on the same port.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import itertools
import json
import socket
import struct
import threading
import time
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from tests.support.slack_api import APP_ID, Call, SlackWebAPI

WEBSOCKET_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
MAX_HANDSHAKE = 16 * 1024
MAX_FRAME = 16 * 1024 * 1024
OP_CONTINUATION, OP_TEXT, OP_BINARY, OP_CLOSE, OP_PING, OP_PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA


@dataclass(frozen=True)
class Ack:
    """A message the client sent back for an envelope: ``{"envelope_id": ..., "payload"?: ...}``."""

    envelope_id: str
    payload: dict[str, Any] | None
    connection: int
    time: float  # time.monotonic() when it arrived


@dataclass(frozen=True)
class Sent:
    """An envelope the server delivered."""

    envelope_id: str
    type: str
    connection: int
    time: float  # time.monotonic() just before it was written


class Connection:
    """One accepted WebSocket connection (after its handshake)."""

    def __init__(self, number: int, sock: socket.socket, path: str, server: SocketModeServer) -> None:
        self.number = number
        self.path = path
        self.opened = time.monotonic()
        self.closed_at: float | None = None
        self._sock = sock
        self._server = server
        self._send_lock = threading.Lock()
        self._buffer = b""

    @property
    def open(self) -> bool:
        return self.closed_at is None

    def send_json(self, message: Mapping[str, Any]) -> None:
        self._send_frame(OP_TEXT, json.dumps(message).encode("utf-8"))

    def close(self, code: int = 1000, reason: str = "") -> None:
        """Send a close frame and drop the connection (a client's close frame is not awaited)."""
        with contextlib.suppress(OSError):
            self._send_frame(OP_CLOSE, struct.pack("!H", code) + reason.encode("utf-8"))
        self._drop()

    def _send_frame(self, opcode: int, payload: bytes) -> None:
        # Server frames are never masked (RFC 6455 5.1).
        length = len(payload)
        if length < 126:
            header = struct.pack("!BB", 0x80 | opcode, length)
        elif length < 1 << 16:
            header = struct.pack("!BBH", 0x80 | opcode, 126, length)
        else:
            header = struct.pack("!BBQ", 0x80 | opcode, 127, length)
        with self._send_lock:
            self._sock.sendall(header + payload)

    def _drop(self) -> None:
        if self.closed_at is None:
            self.closed_at = time.monotonic()
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            self._sock.close()
        self._server._changed()

    def _read_exact(self, count: int) -> bytes:
        while len(self._buffer) < count:
            chunk = self._sock.recv(65536)
            if not chunk:
                raise ConnectionError("peer closed the connection")
            self._buffer += chunk
        data, self._buffer = self._buffer[:count], self._buffer[count:]
        return data

    def _read_frame(self) -> tuple[bool, int, bytes]:
        first, second = self._read_exact(2)
        length = second & 0x7F
        if length == 126:
            (length,) = struct.unpack("!H", self._read_exact(2))
        elif length == 127:
            (length,) = struct.unpack("!Q", self._read_exact(8))
        if length > MAX_FRAME:
            raise ConnectionError(f"frame of {length} bytes")
        if not second & 0x80:  # clients must mask every frame (RFC 6455 5.1)
            raise ConnectionError("unmasked client frame")
        mask = self._read_exact(4)
        data = self._read_exact(length)
        payload = bytes(byte ^ mask[index % 4] for index, byte in enumerate(data))
        return bool(first & 0x80), first & 0x0F, payload

    def _serve(self, leftover: bytes) -> None:
        self._buffer = leftover
        message: list[bytes] = []
        try:
            while True:
                final, opcode, payload = self._read_frame()
                if opcode == OP_PING:
                    self._send_frame(OP_PONG, payload)
                elif opcode == OP_PONG:
                    continue
                elif opcode == OP_CLOSE:
                    with contextlib.suppress(OSError):
                        self._send_frame(OP_CLOSE, payload[:2])
                    break
                elif opcode in (OP_TEXT, OP_BINARY, OP_CONTINUATION):
                    message.append(payload)
                    if final:
                        self._server._received(self, b"".join(message).decode("utf-8"))
                        message = []
        except (OSError, ConnectionError, ValueError):
            pass
        finally:
            self._drop()


class SocketModeServer:
    """Slack's Socket Mode endpoint on ``127.0.0.1`` (port chosen by the OS), recording acks."""

    def __init__(self, host: str = "127.0.0.1", *, app_id: str = APP_ID) -> None:
        self.host = host
        self.app_id = app_id
        self.accepting = True
        self.opened_urls: list[str] = []  # every URL apps.connections.open handed out
        self.refused = 0  # handshakes answered 503
        self.messages: list[dict[str, Any]] = []  # every non-ack message a client sent
        self._cond = threading.Condition()
        self._connections: list[Connection] = []
        self._acks: list[Ack] = []
        self._sent: list[Sent] = []
        self._numbers = itertools.count(1)
        self._listener: socket.socket | None = None
        self._port = 0
        self._stopped = False
        self.listen()

    # -- the listening socket ------------------------------------------------------------------------

    @property
    def port(self) -> int:
        return self._port

    def listen(self) -> None:
        """Open the port (again: the same port as before)."""
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((self.host, self._port))
        listener.listen(64)
        self._port = int(listener.getsockname()[1])
        self._listener = listener
        threading.Thread(
            target=self._accept, args=(listener,), name="socket-mode-accept", daemon=True
        ).start()

    def stop_listening(self, *, drop: bool = True) -> None:
        """Close the port: new connections are refused. ``drop``: also close the open connections."""
        listener, self._listener = self._listener, None
        if listener is not None:
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)
            listener.close()
        if drop:
            for connection in self.connections:
                connection.close(1001, "server going away")

    def refuse(self) -> None:
        """Answer handshakes with HTTP 503 until ``accept()``; the port stays open."""
        self.accepting = False

    def accept(self) -> None:
        self.accepting = True

    def stop(self) -> None:
        self._stopped = True
        self.stop_listening()

    def __enter__(self) -> SocketModeServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- apps.connections.open -----------------------------------------------------------------------

    def url(self) -> str:
        """A fresh WebSocket URL, shaped like Slack's (``/link/?ticket=...&app_id=...``)."""
        url = f"ws://{self.host}:{self._port}/link/?ticket={uuid.uuid4()}&app_id={self.app_id}"
        with self._cond:
            self.opened_urls.append(url)
        return url

    def connections_open(self, call: Call) -> dict[str, Any]:
        """The Web API's ``apps.connections.open``: it wants an app-level token, as Slack does."""
        if not (call.token or "").startswith("xapp-"):
            return {"ok": False, "error": "not_allowed_token_type"}
        return {"ok": True, "url": self.url()}

    def attach(self, api: SlackWebAPI) -> None:
        api.handle("apps.connections.open", self.connections_open)

    # -- what happened -------------------------------------------------------------------------------

    @property
    def connections(self) -> list[Connection]:
        with self._cond:
            return list(self._connections)

    @property
    def current(self) -> Connection | None:
        """The newest open connection."""
        return next((c for c in reversed(self.connections) if c.open), None)

    @property
    def acks(self) -> list[Ack]:
        with self._cond:
            return list(self._acks)

    def sent(self, envelope_id: str) -> Sent:
        with self._cond:
            return next(s for s in self._sent if s.envelope_id == envelope_id)

    def wait_connected(self, count: int = 1, timeout: float = 30.0) -> Connection:
        """Wait until ``count`` connections were opened in all (hello sent) and one is open; the newest."""

        def ready() -> Connection | None:
            current = self.current
            return current if len(self._connections) >= count and current is not None else None

        with self._cond:
            if not self._cond.wait_for(ready, timeout):
                raise AssertionError(
                    f"{len(self._connections)} Socket Mode connection(s) after {timeout} s, wanted {count}"
                )
            connection = ready()
            assert connection is not None
            return connection

    def wait_closed(self, connection: Connection, timeout: float = 30.0) -> None:
        with self._cond:
            if not self._cond.wait_for(lambda: not connection.open, timeout):
                raise AssertionError(f"connection {connection.number} still open after {timeout} s")

    def wait_ack(self, envelope_id: str, timeout: float = 30.0) -> Ack:
        def found() -> Ack | None:
            return next((a for a in self._acks if a.envelope_id == envelope_id), None)

        with self._cond:
            if not self._cond.wait_for(found, timeout):
                raise AssertionError(f"no ack for envelope {envelope_id} after {timeout} s")
            ack = found()
            assert ack is not None
            return ack

    # -- what the server sends -----------------------------------------------------------------------

    def send(
        self,
        kind: str,
        payload: Mapping[str, Any],
        *,
        accepts_response_payload: bool | None = None,
        envelope_id: str | None = None,
        connection: Connection | None = None,
        retry_attempt: int = 0,
    ) -> str:
        """Deliver an envelope on ``connection`` (default: the newest open one); its envelope id."""
        target = connection or self.current
        if target is None:
            raise AssertionError("no open Socket Mode connection to deliver an envelope on")
        envelope_id = envelope_id or str(uuid.uuid4())
        accepts = kind == "slash_commands" if accepts_response_payload is None else accepts_response_payload
        envelope: dict[str, Any] = {
            "envelope_id": envelope_id,
            "payload": dict(payload),
            "type": kind,
            "accepts_response_payload": accepts,
        }
        if kind == "events_api":
            envelope["retry_attempt"] = retry_attempt
            envelope["retry_reason"] = "timeout" if retry_attempt else ""
        with self._cond:
            self._sent.append(Sent(envelope_id, kind, target.number, time.monotonic()))
        target.send_json(envelope)
        return envelope_id

    def slash_command(self, fields: Mapping[str, Any], **options: Any) -> str:
        """A slash command: ``fields`` are the form fields Slack would POST, as a dict."""
        return self.send("slash_commands", fields, **options)

    def interactive(self, payload: Mapping[str, Any], **options: Any) -> str:
        """A button press, shortcut or view submission (the ``payload`` JSON of the HTTP form)."""
        return self.send("interactive", payload, **options)

    def event(self, callback: Mapping[str, Any], **options: Any) -> str:
        """An Events API delivery (the ``event_callback`` JSON)."""
        return self.send("events_api", callback, **options)

    def disconnect(
        self,
        reason: str = "refresh_requested",
        *,
        connection: Connection | None = None,
        close_after: float | None = None,
    ) -> Connection:
        """Ask the client to reconnect; ``close_after``: then close the old connection after that long."""
        target = connection or self.current
        if target is None:
            raise AssertionError("no open Socket Mode connection to disconnect")
        target.send_json(
            {"type": "disconnect", "reason": reason, "debug_info": {"host": f"applink-{target.number}"}}
        )
        if close_after is not None:
            timer = threading.Timer(close_after, target.close, args=(1000, reason))
            timer.daemon = True
            timer.start()
        return target

    # -- inside ---------------------------------------------------------------------------------------

    def _changed(self) -> None:
        with self._cond:
            self._cond.notify_all()

    def _received(self, connection: Connection, text: str) -> None:
        try:
            message = json.loads(text)
        except ValueError:
            message = {"_invalid_json": text}
        if not isinstance(message, dict):
            message = {"_json": message}
        with self._cond:
            envelope_id = message.get("envelope_id")
            if isinstance(envelope_id, str):
                payload = message.get("payload")
                self._acks.append(
                    Ack(
                        envelope_id,
                        payload if isinstance(payload, dict) else None,
                        connection.number,
                        time.monotonic(),
                    )
                )
            else:
                self.messages.append(message)
            self._cond.notify_all()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                sock, _ = listener.accept()
            except OSError:
                return
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(
                target=self._handshake, args=(sock,), name="socket-mode-conn", daemon=True
            ).start()

    def _handshake(self, sock: socket.socket) -> None:
        sock.settimeout(10)
        data = b""
        try:
            while b"\r\n\r\n" not in data:
                chunk = sock.recv(4096)
                if not chunk or len(data) > MAX_HANDSHAKE:
                    sock.close()
                    return
                data += chunk
        except OSError:
            sock.close()
            return
        head, leftover = data.split(b"\r\n\r\n", 1)
        request_line, *header_lines = head.decode("latin-1").split("\r\n")
        headers = {}
        for line in header_lines:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        parts = request_line.split(" ")
        path = parts[1] if len(parts) == 3 else ""
        key = headers.get("sec-websocket-key", "")
        upgrade = headers.get("upgrade", "").lower() == "websocket"
        if self._stopped or not self.accepting or not upgrade or not key or not path.startswith("/link"):
            status = "503 Service Unavailable" if upgrade and key else "400 Bad Request"
            with self._cond:
                self.refused += 1
            with contextlib.suppress(OSError):
                sock.sendall(f"HTTP/1.1 {status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".encode())
            sock.close()
            return
        accept = base64.b64encode(hashlib.sha1((key + WEBSOCKET_GUID).encode()).digest()).decode()
        sock.settimeout(None)
        try:
            sock.sendall(
                (
                    "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    f"Sec-WebSocket-Accept: {accept}\r\n\r\n"
                ).encode()
            )
        except OSError:
            sock.close()
            return
        with self._cond:
            connection = Connection(next(self._numbers), sock, path, self)
        try:
            connection.send_json(
                {
                    "type": "hello",
                    "num_connections": 1,
                    "debug_info": {
                        "host": f"applink-{connection.number}",
                        "build_number": 1,
                        "approximate_connection_time": 18060,
                    },
                    "connection_info": {"app_id": self.app_id},
                }
            )
        except OSError:
            sock.close()
            return
        with self._cond:
            self._connections.append(connection)
            self._cond.notify_all()
        connection._serve(leftover)


@contextlib.contextmanager
def serve_socket_mode(api: SlackWebAPI | None = None) -> Iterator[SocketModeServer]:
    """A running server; with ``api``, that stand-in's ``apps.connections.open`` hands out its URLs."""
    server = SocketModeServer()
    if api is not None:
        server.attach(api)
    try:
        yield server
    finally:
        server.stop()
