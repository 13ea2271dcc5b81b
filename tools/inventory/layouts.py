"""How each tool prints a message: the layouts the message inventory instantiates its entries in.

The inventory (``tests/inventory/<tool>.yaml``) holds each message as the tool composes it; a person
never pastes the bare message, they paste a ``kubectl get events`` row, a ``describe`` block, a klog
or zap line. Each layout here is a pure function of one ``Line`` (the message with its event reason
or log level, the source file it comes from, and the entry's values) to the text a person would
paste, so the coverage run measures raydiag on what it is really given. The layouts copy the tools'
own printers: kubectl's tabwriter padding (3 for ``get``, 2 for ``describe``), klog's header
(``Lmmdd hh:mm:ss.uuuuuu threadid file:line]``), zap's JSON and console encoders, Ray's logging
format and the raylet's glog-like prefix. The time is fixed so every case is deterministic.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

# One instant for every case: the cases must be the same on every run.
DATE = "2026-12-04"
TIME = "14:03:27"


@dataclass(frozen=True)
class Line:
    """One message to print: ``reason`` is the event reason (event layouts) or the level as the tool
    prints it (log layouts); ``source`` is the file the message comes from (its base name is the
    ``file:line`` of klog, Ray and raylet lines); ``values`` are the entry's values after defaults."""

    message: str
    reason: str
    source: str
    values: Mapping[str, str]


# Event reasons kubectl shows as ``Normal``; every other reason is a ``Warning``. An entry may set
# ``values.event_type`` where a tool uses one reason for both (rare).
NORMAL_REASONS = frozenset(
    {
        "Scheduled",
        "Pulling",
        "Pulled",
        "Created",
        "Started",
        "Killing",
        "SuccessfulCreate",
        "TriggeredScaleUp",
        "ScaledUpGroup",
        "ScaleDown",
        "Nominated",
        "NominatedPod",
        "Launched",
        "Registered",
        "Initialized",
        "Ready",
        "CreatedWorkerPod",
        "CreatedHeadPod",
        "CreatedService",
        "Provisioned",
    }
)


def _event_type(line: Line) -> str:
    explicit = line.values.get("event_type")
    if explicit:
        return explicit
    return "Normal" if line.reason in NORMAL_REASONS else "Warning"


def _tabwriter(rows: Sequence[Sequence[str]], padding: int, indent: str = "") -> str:
    """Go's text/tabwriter as kubectl uses it: every column but the last padded to its widest cell."""
    widths = [max(len(row[i]) for row in rows) + padding for i in range(len(rows[0]) - 1)]
    out = []
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        out.append(indent + "".join(cells) + row[-1])
    return "\n".join(out)


def _object(line: Line) -> str:
    return line.values.get("object") or f"pod/{line.values.get('pod', 'unknown')}"


def event_row(line: Line) -> str:
    """``kubectl get events`` (kubectl ≥ 1.20 columns): header and one row."""
    rows = [
        ("LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"),
        ("2m", _event_type(line), line.reason, _object(line), line.message),
    ]
    return _tabwriter(rows, padding=3)


def describe_events(line: Line) -> str:
    """The ``Events:`` block at the end of ``kubectl describe pod`` (or node, nodepool, ...)."""
    component = line.values.get("component", "")
    rows = [
        ("Type", "Reason", "Age", "From", "Message"),
        ("----", "------", "----", "----", "-------"),
        (_event_type(line), line.reason, "2m (x3 over 5m)", component, line.message),
    ]
    return "Events:\n" + _tabwriter(rows, padding=2, indent="  ")


def _file(line: Line, default: str) -> str:
    # ``values.file`` names the printer when it is not the composer: a raylet warning that a driver
    # relays is printed by worker.py, an instance update composed in reconciler.py by instance_manager.py.
    name = line.values.get("file") or (PurePosixPath(line.source).name if line.source else default)
    return f"{name}:{line.values.get('line', '123')}"


def klog(line: Line) -> str:
    """klog's text header: severity letter, mmdd, time with microseconds, thread id, file:line."""
    severity = (line.reason or "I")[0].upper()
    if severity not in "IWEF":
        severity = "I"
    month_day = DATE[5:7] + DATE[8:10]
    return f"{severity}{month_day} {TIME}.123456       1 {_file(line, 'main.go')}] {line.message}"


def _zap_fields(line: Line) -> dict[str, object]:
    raw = line.values.get("fields", "")
    if not raw:
        return {}
    loaded = json.loads(raw)
    return dict(loaded) if isinstance(loaded, dict) else {}


def zap_json(line: Line) -> str:
    """A zap JSON line. KubeRay writes ``level``/``ts``/``logger``/``msg``; Karpenter (v0.32+)
    ``level``/``time``/``logger``/``message``: ``values.json_keys`` names the four keys in order."""
    keys = line.values.get("json_keys", "level,ts,logger,msg").split(",")
    level_key, time_key, logger_key, message_key = (k.strip() for k in keys)
    record: dict[str, object] = {
        level_key: line.reason or "info",
        time_key: f"{DATE}T{TIME}.123Z",
        logger_key: line.values.get("logger", "controller"),
        message_key: line.message,
    }
    record.update(_zap_fields(line))
    return json.dumps(record, separators=(",", ":"))


def zap_console(line: Line) -> str:
    """zap's console encoder: time, LEVEL, logger, message and the fields as JSON, tab-separated."""
    parts = [f"{DATE}T{TIME}.123Z", (line.reason or "INFO").upper(), line.values.get("logger", "controller")]
    parts.append(line.message)
    fields = _zap_fields(line)
    if fields:
        parts.append(json.dumps(fields, separators=(", ", ": ")))
    return "\t".join(parts)


def ray_log(line: Line) -> str:
    """Ray's Python logging format: ``%(asctime)s\\t%(levelname)s %(filename)s:%(lineno)s -- %(message)s``."""
    level = (line.reason or "INFO").upper()
    return f"{DATE} {TIME},123\t{level} {_file(line, 'worker.py')} -- {line.message}"


def ray_driver(line: Line) -> str:
    """What a driver's terminal shows. ``reason`` picks the prefix Ray's log monitor or event
    printer puts: ``autoscaler`` → ``(autoscaler +12s) message``, ``raylet`` (or any other process
    name) → ``(raylet) message``, a level (``WARNING``, ``ERROR``, ``INFO``) or nothing → the
    message as the driver prints it, with the level word first when one is given."""
    reason = line.reason
    if not reason:
        return line.message
    if reason == "autoscaler":
        return f"(autoscaler +12s) {line.message}"
    if reason.isupper():
        return f"{reason} {line.message}"
    ip = line.values.get("ip")
    where = f"{reason}, ip={ip}" if ip else reason
    return f"({where}) {line.message}"


def raylet_log(line: Line) -> str:
    """Ray's C++ log prefix: ``[time level pid tid] (process) file:line: message``."""
    level = (line.reason or "I")[0].upper()
    process = line.values.get("process", "raylet")
    return f"[{DATE} {TIME},123 {level} 123 456] ({process}) {_file(line, 'node_manager.cc')}: {line.message}"


def go_log(line: Line) -> str:
    """Go's standard ``log`` package (older NVIDIA device plugins): ``yyyy/mm/dd hh:mm:ss message``."""
    return f"{DATE.replace('-', '/')} {TIME} {line.message}"


def logrus(line: Line) -> str:
    """logrus's text formatter without a terminal (the GPU operator's validators):
    ``time="..." level=info msg="..."``, the message quoted as Go's %q does."""
    level = (line.reason or "info").lower()
    return f'time="{DATE}T{TIME}Z" level={level} msg={json.dumps(line.message)}'


def serve_log(line: Line) -> str:
    """Ray Serve's controller log (``logs/serve/controller_<pid>.log``) as a driver relays it:
    ``(ServeController pid=N) LEVEL date time,ms controller N -- message``. Serve 2.40+ writes
    ``component pid -- message``; 2.30 and older ``component pid file:line - message``
    (``values.serve_format: old``). ``values.actor`` empty gives the log file's line alone."""
    level = (line.reason or "INFO").upper()
    pid = line.values.get("pid", "4242")
    if line.values.get("serve_format") == "old":
        head = f"{level} {DATE} {TIME},123 controller {pid} {_file(line, 'deployment_state.py')} -"
    else:
        head = f"{level} {DATE} {TIME},123 controller {pid} --"
    actor = line.values.get("actor", f"ServeController pid={pid}")
    prefix = f"({actor}) " if actor else ""
    return f"{prefix}{head} {line.message}"


def logrus_tty(line: Line) -> str:
    """logrus's text formatter when it takes its output for a terminal: the level's first four
    letters and the seconds since start, ``WARN[0005] message`` (seen from the validator too)."""
    level = (line.reason or "info").upper()[:4]
    return f"{level}[0005] {line.message}"


def plain(line: Line) -> str:
    """The message alone: a CLI's stdout, a status field, a condition message."""
    return line.message


LAYOUTS: Mapping[str, Callable[[Line], str]] = {
    "event-row": event_row,
    "describe-events": describe_events,
    "klog": klog,
    "zap-json": zap_json,
    "zap-console": zap_console,
    "ray-log": ray_log,
    "ray-driver": ray_driver,
    "raylet-log": raylet_log,
    "serve-log": serve_log,
    "go-log": go_log,
    "logrus": logrus,
    "logrus-tty": logrus_tty,
    "plain": plain,
}

# The layouts that need an event reason (the others take a log level, or nothing).
EVENT_LAYOUTS = frozenset({"event-row", "describe-events"})


def render(layout: str, line: Line) -> str:
    return LAYOUTS[layout](line)
