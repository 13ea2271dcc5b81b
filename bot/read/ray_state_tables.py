"""Ray's state, as people paste it: ``ray list``/``ray summary`` output and Python printouts.

``ray status`` gives cluster totals; the state API says who is there and who holds what. Users paste
it in these shapes (read off Ray's own code: ``ray/util/state/state_cli.py`` since 2.0, and
``ray.experimental.state`` before 2.7, which printed the same layouts):

* the table: ``======== List: <time> ========``, ``Stats:``, ``Total: N``, ``Table:``, a header of
  upper-case column names (the schema's field names: ``ACTOR_ID CLASS_NAME STATE ...``), then
  tabulate's ``plain`` rows led by an index. A dict value (``REQUIRED_RESOURCES``,
  ``RESOURCES_TOTAL``, ``LABELS``) is dumped as YAML inside its cell, so one row spans several
  lines whose other cells are blank; memory is humanised (``memory: 22.945 GiB``).
* YAML, the default of ``--detail`` and of ``--format yaml``: ``---``, then ``-   actor_id: ...``
  records (four-space indent), ending in ``...``. ``--format json`` is one JSON list of the same
  records (read here when the JSON reader hands it over).
* ``ray summary actors|tasks``: ``======== Actors Summary: <time> ========`` with a count table; it
  names states but no resources, so it only counts as recognised output.
* Python printouts: ``ray.nodes()`` (a list of dicts with ``NodeID``, ``Alive``,
  ``NodeManagerAddress``, ``Resources``, ``Labels``: the same keys since Ray 1.x),
  ``ray.cluster_resources()`` and ``ray.available_resources()`` (one dict each, told apart by the
  statement or label printed with them; ``available_resources`` leaves out what is used up), and
  the state API's Python calls (``list_actors()``: ``[ActorState(actor_id='...', ...)]`` since
  2.7, plain dicts before). They are read with ``ast``, never evaluated.

Records become the live collector's rows and go through :func:`bot.read.ray_json.ray_state`,
so a pasted actor and a collected one are one definition. ALIVE actors and CREATED placement groups
are holders; PENDING_NODE_ASSIGNMENT tasks, PENDING_CREATION actors and PENDING placement groups are
demands, marked ``listed``: the state API says they wait, not why.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from bot.read import cut_literal, loose_lines, ray_fields, ray_resource_figures, yaml_blocks
from bot.read.formats import Format, Tag
from bot.read.found import Found
from bot.read.protocol import Block, Paste, Reader
from bot.read.ray_json import ray_state
from bot.read.ray_notation import base_resource, parse_amount_text
from bot.read.ray_resource_figures import PRINTOUT_FORMAT
from bot.read.ray_status_text import placement_group_demand
from bot.snapshot.ray import Demand

STATE_FORMAT = Format("ray state API output", Tag.RAY_API_OUTPUT)

_LIST_HEADER = re.compile(r"^=+\s*List:\s*[^=]*=+\s*$")
_SUMMARY_HEADER = re.compile(r"^=+\s*(?:Actors|Tasks|Objects) Summary:\s*[^=]*=+\s*$")
_COLUMN = re.compile(r"[A-Z][A-Z0-9_]*")
_CELL = re.compile(r"\S+(?: \S+)*")
# Columns that mark a state table's header (a schema's first fields, in every version).
_KEY_COLUMNS = {"ACTOR_ID", "NODE_ID", "PLACEMENT_GROUP_ID", "TASK_ID", "JOB_ID", "CLASS_NAME", "NODE_IP"}
_ROW_INDEX = re.compile(r"^\s*\d+\s{2,}\S")
_YAML_RECORD = re.compile(
    r"^-\s+(?:actor_id|node_id|placement_group_id|task_id|job_id|submission_id|class_name|node_ip):"
)
_RECORD_KEYS = ("actor_id", "placement_group_id", "task_id", "node_id", "node_ip")
_STATE_CALL = re.compile(r"\b(?:ActorState|NodeState|PlacementGroupState|TaskState)\(")
_PRINTOUT_START = re.compile(
    r"^\s*(?:\[\s*)?(?:\{\s*'|\[?\s*(?:ActorState|NodeState|PlacementGroupState|TaskState)\()"
)
# ``Available resources: {'CPU': 30.0, ...}``: a printed dict after a label saying which call it is.
_LABELLED_PRINTOUT = re.compile(r"^\s*(?P<label>[A-Za-z][^:{}\[\]=\n]{0,60}?)\s*[:=]\s*\{\s*'")
_MAX_TABLE_LINES = 20_000
_MAX_PRINTOUT_CHARS = 1_000_000
# A terminal or chat wraps lines at least this long; a shorter line ending inside a string was cut.
_WRAP_WIDTH = 60
_MAX_RECORDS = 5_000
_MAX_QUOTE = 300
CUT_PRINTOUT_NOTE = "a Python printout that was cut short was read up to where it was cut"


# --- recognising where a block starts ------------------------------------------------------------


def _header_columns(line: str) -> list[tuple[str, int, int]] | None:
    """The columns of a state table's header line, with where each name starts and ends."""
    stripped = line.strip()
    if not stripped or len(stripped) > 2_000:
        return None
    columns = [(m.group(), m.start(), m.end()) for m in _COLUMN.finditer(line)]
    names = {name for name, _, _ in columns}
    if len(columns) < 2 or not names & _KEY_COLUMNS:
        return None
    if " ".join(name for name, _, _ in columns) != " ".join(stripped.split()):
        return None
    return columns


def is_start(lines: Sequence[str], i: int) -> bool:
    line = lines[i]
    stripped = line.strip()
    if _LIST_HEADER.match(stripped) or _SUMMARY_HEADER.match(stripped):
        return True
    if _YAML_RECORD.match(stripped) or (stripped == "---" and _next_is_record(lines, i)):
        return True
    if _header_columns(line) is not None and i + 1 < len(lines) and _ROW_INDEX.match(lines[i + 1]):
        return True
    if (labelled := _LABELLED_PRINTOUT.match(line)) is not None:
        says = ray_resource_figures.says_available([labelled.group("label")])
        return says is not None and _looks_like_printout(line)
    return bool(_PRINTOUT_START.match(line)) and _looks_like_printout(line)


def _next_is_record(lines: Sequence[str], i: int) -> bool:
    return i + 1 < len(lines) and bool(_YAML_RECORD.match(lines[i + 1].strip()))


def _looks_like_printout(line: str) -> bool:
    head = line[:400]
    return bool(
        _STATE_CALL.search(head)
        or "'NodeID'" in head
        or "'NodeManagerAddress'" in head
        or re.search(r"'(?:CPU|GPU|memory|object_store_memory|node:[^']*)':\s*[\d.]", head)
        or re.search(r"'(?:actor_id|placement_group_id|task_id|node_id)':", head)
    )


# --- the table ------------------------------------------------------------------------------------


def _table_rows(lines: Sequence[str], start: int) -> tuple[list[dict[str, str]], int]:
    """Rows of the table whose header is ``lines[start]``, cells keyed by lower-case column name."""
    columns = _header_columns(lines[start]) or []
    rows: list[dict[str, list[str]]] = []
    end = start + 1
    for index in range(start + 1, min(len(lines), start + 1 + _MAX_TABLE_LINES)):
        line = lines[index]
        if not line.strip():
            break
        new_row = bool(_ROW_INDEX.match(line))
        if not new_row and (not rows or not line[:1].isspace()):
            break
        end = index + 1
        if new_row:
            rows.append({})
        row = rows[-1]
        for match in _CELL.finditer(line):
            start_at, end_at = match.span()
            best, overlap = None, 0
            for name, begin, finish in columns:
                shared = min(end_at, finish) - max(start_at, begin)
                if shared > overlap:
                    best, overlap = name, shared
            if best is None:
                continue  # the row index, or a cell outside every column
            row.setdefault(best.lower(), []).append(match.group())
    return [{name: "\n".join(parts) for name, parts in row.items()} for row in rows[:_MAX_RECORDS]], end


def _cell_map(text: str) -> dict[str, Any]:
    """A dict cell (YAML ``name: value`` lines); amounts keep Ray's units."""
    found: dict[str, Any] = {}
    for line in text.split("\n"):
        name, sep, value = line.rpartition(": ")
        if not sep:
            name, sep, value = line.rpartition(":")
        name, value = name.strip(), value.strip()
        if name:
            amount = parse_amount_text(value)
            found[name] = amount if amount is not None else value
    return found


def _cell_value(name: str, text: str) -> Any:
    if name in {"required_resources", "resources_total", "labels", "resources_available"}:
        return _cell_map(text)
    if name == "bundles":
        return _literal(text.replace("\n", " "))
    if text in {"True", "False"}:
        return text == "True"
    return text


def _table_records(rows: list[dict[str, str]]) -> list[dict[str, Any]]:
    return [{name: _cell_value(name, text) for name, text in row.items()} for row in rows]


# --- Python printouts -----------------------------------------------------------------------------


def _convert(node: ast.AST, depth: int = 0) -> Any:
    """A literal, or a dataclass repr (``ActorState(actor_id='...')``) as a dict; never evaluated."""
    if depth > 20:
        return None
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return [_convert(item, depth + 1) for item in node.elts[:_MAX_RECORDS]]
    if isinstance(node, ast.Dict):
        return {
            _convert(key, depth + 1): _convert(value, depth + 1)
            for key, value in zip(node.keys, node.values, strict=False)
            if key is not None and isinstance(_convert(key, depth + 1), str | int | float)
        }
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        record = {kw.arg: _convert(kw.value, depth + 1) for kw in node.keywords if kw.arg}
        record["__kind__"] = node.func.id
        return record
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        value = _convert(node.operand, depth + 1)
        return -value if isinstance(value, int | float) else None
    return None


def _literal(text: str) -> Any:
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return _convert(tree.body)


def _printout_extent(lines: Sequence[str], start: int) -> tuple[int, str]:
    """Where a printed value ends: its brackets close (``pprint`` spreads it over lines)."""
    depth, size = 0, 0
    parts: list[str] = []
    quote: str | None = None
    for index in range(start, len(lines)):
        line = lines[index]
        if quote is not None and depth > 0 and len(parts[-1]) >= _WRAP_WIDTH:
            parts[-1] += line  # a long line wrapped inside a string: a repr's strings never span lines
        elif index > start and not (line[:1].isspace() or line[:1] in "]})"):
            return index, "\n".join(parts)  # ``pprint`` indents what continues a value
        else:
            parts.append(line)
        size += len(line)
        escaped = False
        for ch in line:
            if quote:
                if escaped:
                    escaped = False
                elif ch == "\\":
                    escaped = True
                elif ch == quote:
                    quote = None
            elif ch in "'\"":
                quote = ch
            elif ch in "[{(":
                depth += 1
            elif ch in "]})":
                depth -= 1
        if len(parts[-1]) < _WRAP_WIDTH:
            quote = None  # not a wrapped line: its open string was cut, and the next line is new
        if depth <= 0 or size > _MAX_PRINTOUT_CHARS:
            return index + 1, "\n".join(parts)
    return len(lines), "\n".join(parts)


def _labels_before(lines: Sequence[str], start: int, begin: int) -> list[str]:
    """The statements or labels printed with a value, nearest first: on its own line before the
    value (which starts at ``begin``), then on each of the two lines above."""
    return [lines[start][: min(begin, 200)], *reversed(lines[max(0, start - 2) : start])]


# --- from records to the snapshot -----------------------------------------------------------------


def _node_row(record: Mapping[str, Any]) -> dict[str, Any] | None:
    """A ``ray.nodes()`` record (``NodeID``, ``Alive``...) as a state API node row."""
    if "NodeID" not in record and "NodeManagerAddress" not in record:
        return None
    alive = record.get("Alive", record.get("alive"))
    return {
        "node_id": record.get("NodeID"),
        "node_ip": record.get("NodeManagerAddress"),
        "state": "ALIVE" if alive is not False else "DEAD",
        "resources_total": record.get("Resources") or {},
        "labels": record.get("Labels") or {},
    }


def _resource_dict(value: Any) -> dict[str, float] | None:
    if not isinstance(value, dict) or not value:
        return None
    amounts = {k: v for k, v in value.items() if isinstance(k, str) and isinstance(v, int | float)}
    if len(amounts) != len(value) or (
        not any(k in amounts for k in ("CPU", "GPU", "memory"))
        and not any(k.startswith("node:") for k in amounts)
    ):
        return None
    return {k: float(v) for k, v in amounts.items()}


class _Records:
    def __init__(self) -> None:
        self.nodes: list[dict[str, Any]] = []
        self.actors: list[dict[str, Any]] = []
        self.tasks: list[dict[str, Any]] = []
        self.groups: list[dict[str, Any]] = []
        self.quotes: dict[int, str] = {}

    def add(self, record: Mapping[str, Any], quote: str) -> bool:
        row = dict(record)
        kind = str(row.pop("__kind__", ""))
        node = _node_row(row)
        if node is not None:
            self.nodes.append(node)
            return True
        target: list[dict[str, Any]] | None = None
        if kind == "ActorState" or ("actor_id" in row and "class_name" in row):
            target = self.actors
        elif kind == "TaskState" or "task_id" in row:
            target = self.tasks
        elif kind == "PlacementGroupState" or ("placement_group_id" in row and "bundles" in row):
            target = self.groups
        elif kind == "NodeState" or ("node_id" in row and ("resources_total" in row or "node_ip" in row)):
            target = self.nodes
        if target is None or len(target) >= _MAX_RECORDS:
            return False
        target.append(row)
        self.quotes[id(row)] = quote
        return True


def _quote(record: Mapping[str, Any], block: Sequence[str]) -> str:
    """A line of the paste that names this record, for the demand's evidence."""
    for key in ("name", "func_or_class_name", "task_id", "actor_id", "placement_group_id"):
        value = record.get(key)
        if not isinstance(value, str) or not value:
            continue
        for line in block:
            if value not in line:
                continue
            if len(line) <= _MAX_QUOTE:
                return line.strip()
            # A printout on one long line: quote the field itself, as printed.
            for field_text in (f"{key}='{value}'", f"'{key}': '{value}'", f"{key}: {value}"):
                if field_text in line:
                    return field_text
    return ""


def _demands(records: _Records) -> list[Demand]:
    """Tasks waiting for a node and actors waiting to be created, as the state API lists them."""
    waiting = (
        (records.tasks, "task", "PENDING_NODE_ASSIGNMENT", "func_or_class_name"),
        (records.actors, "actor", "PENDING_CREATION", "class_name"),
    )
    demands: list[Demand] = []
    for rows, kind, pending, other_name in waiting:
        for row in rows:
            shape, in_group = _shape(row.get("required_resources"))
            if str(row.get("state") or "").upper() != pending or not shape:
                continue
            demands.append(
                Demand(
                    shape=shape,
                    kind=kind,
                    name=str(row.get("name") or row.get(other_name) or "") or None,
                    listed=True,
                    in_placement_group=in_group or bool(row.get("placement_group_id")),
                    source_text=records.quotes.get(id(row)) or None,
                )
            )
    return demands


def _amounts(raw: Any) -> dict[str, float]:
    if not isinstance(raw, Mapping):
        return {}
    found: dict[str, float] = {}
    for key, value in raw.items():
        amount = parse_amount_text(value) if isinstance(value, str) else value
        if isinstance(key, str) and isinstance(amount, int | float) and not isinstance(amount, bool):
            found[key] = float(amount)
    return found


def _shape(raw: Any) -> tuple[dict[str, float], bool]:
    """What a task or actor asks for, by base resource, and whether it asks inside a group
    (``CPU_group_<id>``: Ray rewrites the names of work scheduled into a placement group)."""
    shape: dict[str, float] = {}
    in_group = False
    for key, value in _amounts(raw).items():
        base = base_resource(key)
        in_group = in_group or base != key
        if base is not None and value > 0:
            shape[base] = shape.get(base, 0.0) + value
    return shape, in_group


def _normalised(row: dict[str, Any]) -> dict[str, Any]:
    """Humanised amounts (``22.945 GiB``) back in Ray's units, as the live rows carry them."""
    out = dict(row)
    for key in ("required_resources", "resources_total"):
        if key in out:
            out[key] = _amounts(out[key])
    if isinstance(out.get("bundles"), list):
        out["bundles"] = [
            {**b, "unit_resources": _amounts(b.get("unit_resources"))} if isinstance(b, Mapping) else b
            for b in out["bundles"]
        ]
    return out


def _store(records: _Records, found: Found) -> None:
    state = ray_state(
        {
            "nodes": [_normalised(r) for r in records.nodes],
            "actors": [_normalised(r) for r in records.actors],
            "placement_groups": [_normalised(r) for r in records.groups],
        }
    )
    for node in state.nodes:
        found.add_ray_node(node)
    for actor in state.actors:
        found.add_ray_actor(actor)
    for group, row in zip(state.placement_groups, records.groups, strict=False):
        if group.state == "PENDING" and group.bundles:
            strategy = str(row.get("strategy") or "") or None
            stats = row.get("stats")
            # The state API's own verdict (2.x): ``scheduling_state: INFEASIBLE`` fits no node.
            infeasible = (
                isinstance(stats, Mapping) and str(stats.get("scheduling_state")).upper() == "INFEASIBLE"
            )
            quote = records.quotes.get(id(row)) or None
            demand = placement_group_demand(group.bundles, strategy, 1, quote, infeasible=infeasible)
            found.add_demand(replace(demand, listed=True, name=group.name))
        else:
            found.add_placement_group(group)
    for demand in _demands(records):
        found.add_demand(demand)


# --- the block reader -----------------------------------------------------------------------------


def read(lines: Sequence[str], start: int, found: Found) -> int:
    """Read the block at ``lines[start]`` (``is_start`` said yes); return the index after it."""
    stripped = lines[start].strip()
    records = _Records()
    if _SUMMARY_HEADER.match(stripped):
        found.recognise(STATE_FORMAT)
        return _summary_end(lines, start)
    if _LIST_HEADER.match(stripped):
        found.recognise(STATE_FORMAT)
        end = start + 1
        while end < len(lines) and end - start < 12:  # Stats:, Total:, Table:, dashes, blank lines
            if _header_columns(lines[end]) is not None:
                return _read_table(lines, end, found, records)
            if _LIST_HEADER.match(lines[end].strip()) or _YAML_RECORD.match(lines[end].strip()):
                break
            end += 1
        return end
    if _YAML_RECORD.match(stripped) or stripped == "---":
        return _read_yaml(lines, start, found, records)
    if _header_columns(lines[start]) is not None:
        return _read_table(lines, start, found, records)
    return _read_printout(lines, start, found, records)


def _summary_end(lines: Sequence[str], start: int) -> int:
    """A summary says how many are in each state, never what they ask for: it is only taken whole."""
    end, in_table = start + 1, False
    while end < len(lines) and end - start < _MAX_TABLE_LINES:
        line = lines[end]
        if in_table and not line.strip():
            break
        if _LIST_HEADER.match(line.strip()) or _SUMMARY_HEADER.match(line.strip()):
            break
        in_table = in_table or line.strip().startswith("Table")
        end += 1
    return end


def _read_table(lines: Sequence[str], start: int, found: Found, records: _Records) -> int:
    rows, end = _table_rows(lines, start)
    block = lines[start:end]
    read_any = False
    for record in _table_records(rows):
        read_any = records.add(record, _quote(record, block)) or read_any
    found.recognise(STATE_FORMAT)
    if read_any:
        _store(records, found)
    return max(end, start + 1)


def _read_yaml(lines: Sequence[str], start: int, found: Found, records: _Records) -> int:
    end = start + 1
    while end < len(lines) and end - start < _MAX_TABLE_LINES:
        line = lines[end]
        if line.strip() == "...":
            end += 1
            break
        if line.strip() and not (line[:1].isspace() or line.startswith("-")):
            break
        end += 1
    block = [line for line in lines[start:end] if line.strip() not in {"---", "..."}]
    documents, _ = yaml_blocks.load(block)
    items = documents[0] if len(documents) == 1 and isinstance(documents[0], list) else documents
    read_any = False
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict):
            read_any = records.add(item, _quote(item, block)) or read_any
    if read_any:
        found.recognise(STATE_FORMAT)
        _store(records, found)
    return end


def _read_printout(lines: Sequence[str], start: int, found: Found, records: _Records) -> int:
    end, text = _printout_extent(lines, start)
    # A printout after a label on its line (``available: {...}``) is read from its first bracket.
    begin = min((p for p in (text.find("["), text.find("{")) if p >= 0), default=0)
    value = _literal(text[begin:])
    repaired = False
    if value is None:
        # Cut short: what was printed before the cut is still read (records cut through lose
        # the fields after the cut, so a state they did not print stays unknown).
        value = next((v for c in cut_literal.closings(text[begin:]) if (v := _literal(c)) is not None), None)
        repaired = value is not None
    if value is None:
        # Not a whole value (not Python): its lines are read as loose lines, once.
        loose_lines.read_run(lines[start:end], found, None)
        return end
    resources = _resource_dict(value)
    if resources is not None:
        available = ray_resource_figures.says_available(_labels_before(lines, start, begin))
        if available is not None:
            ray_resource_figures.store(resources, available, found)
        else:
            loose_lines.read_run(lines[start:end], found, None)
            return end  # totals or what is free: the paste does not say which
        found.recognise(PRINTOUT_FORMAT)
        return end
    items = value if isinstance(value, list) else _keyed_records(value) or [value]
    block = lines[start:end]
    read_any = False
    for item in items:
        if isinstance(item, dict):
            if repaired:
                item.setdefault("state", "UNKNOWN")
            read_any = records.add(item, _quote(item, block)) or read_any
    if read_any and repaired:
        found.note(CUT_PRINTOUT_NOTE)
    if not read_any:
        loose_lines.read_run(lines[start:end], found, None)
        return end
    found.recognise(PRINTOUT_FORMAT)
    _store(records, found)
    return end


def _keyed_records(value: Any) -> list[dict[str, Any]]:
    """Records printed as a mapping from their id to the record (``placement_group_table()``,
    ``ray.actors()`` in 1.x): the records, or nothing when ``value`` is not such a mapping."""
    if not isinstance(value, dict) or not value or any(key in value for key in _RECORD_KEYS):
        return []
    records = [record for record in value.values() if isinstance(record, dict)]
    return records if len(records) == len(value) else []


def read_json_records(value: object, found: Found) -> bool:
    """State records as JSON; False when ``value`` holds none.

    ``ray list ... --format json`` prints a bare list; the dashboard's state API (``curl
    .../api/v0/actors``) wraps the same records in its envelope, which the live collector's reader
    of envelopes (:func:`bot.read.ray_fields.rows`) unwraps here too.
    """
    if isinstance(value, list):
        if not value or not all(isinstance(item, dict) for item in value[:50]):
            return False
        items: Sequence[Mapping[str, Any]] = value
    else:
        items = ray_fields.rows(value)
    records = _Records()
    read_any = False
    for item in items[:_MAX_RECORDS]:
        if isinstance(item, dict) and any(key in item for key in (*_RECORD_KEYS, "NodeID")):
            read_any = records.add(item, "") or read_any
    if read_any:
        found.recognise(STATE_FORMAT)
        _store(records, found)
    return read_any


def _read(lines: Sequence[str], i: int, paste: Paste) -> Block:
    return Block(max(i + 1, read(lines, i, paste.found)))


READER = Reader("ray-state", starts=is_start, read=_read)
