"""Python code pasted with the cluster's output: what it asks Ray for, read with ``ast``.

People paste the code that hangs next to what the cluster says: an ``@ray.remote(num_gpus=0.4)``
actor, a ``placement_group([{"GPU": 6, "CPU": 60}])``, a Train ``ScalingConfig``, a Serve
deployment. What the code declares is half of the diagnosis, and only the code says it. Regular
expressions cannot read it reliably (a call spans lines, a value is a constant named above), so it
is parsed with the standard ``ast`` module; nothing is ever executed or imported.

Pasted code is rarely a whole file. It is cut at the top or the bottom, indented as it was inside a
function, prefixed with interpreter prompts, interleaved with chat. So the reader recovers: prompts
(``>>> ``, ``... ``) are stripped, the block is dedented, and where a line does not parse the
largest parseable part before it is kept (closing the brackets a cut call left open), the line is
skipped and parsing resumes after it. The work is bounded: a block is capped in lines and
characters, the paste as a whole in characters parsed, and the retries per block in number.

Values count only when they are literal: constants, names assigned a constant in the paste, simple
arithmetic on those. A name the paste does not resolve (``num_gpus=args.gpus``) is reported as
unknown in the paste's notes and its request left out, never guessed.

How code reaches the reader: a block reader (``READER``) that starts at a line only code begins
with (``import ray``, ``@ray.remote``, ``def``, ``ray.init(``, a call of a construct read here) and
extends while lines look like code. A block rather than loose lines, because a declaration spans
lines (a decorator and its class, a call whose keywords wrap) and its names are assigned above it.
A one-line snippet quoted in prose starts a block of one line, so it is read as well. Lines the
parser could not use are handed back as loose lines, so a message pasted inside code is not lost.

What is read (the keywords of Ray's own APIs, ``ray/_private/ray_option_utils.py``,
``ray/util/placement_group.py``, ``ray/train/_internal/...ScalingConfig``, ``ray/tune``'s
``with_resources``/``resources_per_trial``, Serve's ``ray_actor_options``/``num_replicas``, vLLM's
``tensor_parallel_size`` × ``pipeline_parallel_size``, one GPU bundle per worker) is recorded in
:class:`~bot.read.code_facts.CodeFacts`; :func:`settle` joins it with the cluster facts found
anywhere in the paste once the paste is read. A Tune trial's or a Train run's request becomes a
demand only when the paste shows trials waiting (:mod:`bot.read.tune_status`). A Serve config
pasted as YAML is read by :mod:`bot.read.serve_config` into the same record, with the same
meaning of Ray's options (:func:`resource_options`, :func:`with_defaults`). The same walk records
the classes and the calls that construct them (:mod:`bot.read.constructor_calls`), whose arguments
are bound to the class's ``__init__`` once the paste is read.
"""

from __future__ import annotations

import ast
import math
import operator
import re
import textwrap
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace

from bot.read import constructor_calls, tune_status
from bot.read.code_facts import CodeFacts, LocalNode, Request, Template
from bot.read.formats import Format, Tag
from bot.read.found import Found
from bot.read.protocol import Block, Paste, Reader
from bot.snapshot.gpu import installed_gpus
from bot.snapshot.ray import Demand, PlacementGroup, RayActor, RayNode

FORMAT = Format("python code", Tag.PYTHON_CODE)
# What the evidence of a request read here says it came from.
CODE_SOURCE = "python code"

# A block stops after this many lines; the scan then asks again at the next line.
MAX_BLOCK_LINES = 2000
MAX_BLOCK_CHARS = 64_000
# Characters parsed in one paste, all blocks together: a 5 MB paste of code costs no more.
MAX_PASTE_CHARS = 256_000
# Lines skipped (and parses retried) per block before the rest of the block is left unread.
MAX_RETRIES = 24
MAX_REQUESTS = 200
MAX_DECLARED = 50
MAX_UNKNOWN = 8
# A literal loop of more than this many iterations is counted as "many" (unknown).
MAX_INSTANCES = 100_000
_QUOTE_CHARS = 200

# Lines only code begins with: where a block starts.
_START = re.compile(
    r"^\s*(?:>>>\s+)?(?:"
    r"(?:import|from)\s+(?:ray|vllm)\b|@(?:ray\.)?remote\b|@serve\.deployment\b|ray\.init\(|"
    r"(?:async\s+)?def\s+\w+\s*\(|class\s+\w+\s*[(:]|"
    r"(?:[\w.\[\]'\"]+\s*=\s*)?(?:(?:ray|tune|train|serve)\.[\w.]+\(|(?:[\w.]+\.)?(?:placement_group|"
    r"ScalingConfig|with_resources|PlacementGroupFactory|\w*Trainer|Tuner|LLM|EngineArgs|AsyncEngineArgs)\()|"
    r"[\w.]+(?:\.options\([^)]*\))?\.remote\(|"
    r"[\w.]+\s*=\s*[\w.]+\.options\("
    r")"
)
_PROMPT_START = re.compile(r"^\s*>>>(?:\s|$)")
# A line of code that is no start by itself (``actor_size = 0.7``, ``import os``) starts a block
# when a start follows within a few lines: the names a declaration uses are assigned above it.
_LEAD = re.compile(r"^\s*(?:import\s+[\w.]+|from\s+[\w.]+\s+import\b|[A-Za-z_]\w*\s*=\s*\S)")
_LOOKAHEAD = 4
# Keyword arguments read here, inside a call on a line of its own (``    resources_per_trial={...},``).
_KEYWORD_START = re.compile(
    r"^\s*(?:[\w.]+\s*=\s*[\w.]+\()?.*?\b(?:resources_per_trial|ray_actor_options|tensor_parallel_size|"
    r"scaling_config)\s*="
)
# What a line of code looks like, for the block's extent. Prose rarely matches: it has spaces
# between words and no ``name(`` / ``name =`` / keyword shape at its start.
_CODE_LINE = re.compile(
    r"""^(?:
        \s*\#
      | \s*(?:>>>|\.\.\.)(?:\s|$)
      | \s*@[\w.]+
      | \s*(?:import|from|def|class|for|while|if|elif|else|try|except|finally|with|return|yield|raise|
              assert|pass|break|continue|async|await|global|nonlocal|del|print)\b
      | \s*[\w.]+(?:\[[^\]\n]{0,80}\])*\s*(?:[-+*/%|&^]|//|\*\*)?=(?!=)
      | \s*[\w.]+(?:\[[^\]\n]{0,80}\])*\(
      | \s*[)\]}]
      | \s+\S
      | .*[(\[{,\\]\s*$
    )""",
    re.X,
)
_NOT_CODE = re.compile(r"^\s*(?:```|~~~|Traceback \(|File \"|={3,}|-{3,}|\$ |\+-)")
_PROMPT = re.compile(r"^(\s*)(?:>>>|\.\.\.)(?: |$)")


def _looks_like_code(line: str) -> bool:
    head = line[:300]
    return not _NOT_CODE.match(head) and bool(_CODE_LINE.match(head))


def _starts_here(line: str) -> bool:
    head = line[:300]
    return bool(_START.match(head) or _PROMPT_START.match(head) or _KEYWORD_START.match(head))


def _starts(lines: Sequence[str], i: int) -> bool:
    if _starts_here(lines[i]):
        return True
    if not (_LEAD.match(lines[i][:300]) and _looks_like_code(lines[i])):
        return False
    for j in range(i + 1, min(len(lines), i + 1 + _LOOKAHEAD)):
        if _starts_here(lines[j]):
            return True
        if lines[j].strip() and not _looks_like_code(lines[j]):
            return False
    return False


# --- values -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Unknown:
    """A value the paste does not give: the expression as written."""

    text: str


Value = object  # a literal (number, str, bool, None, dict, list, tuple) or an Unknown


def _as_unknown(value: Value) -> Unknown:
    """A value read but of no use where it stands (a string for a count, a number too large)."""
    return value if isinstance(value, Unknown) else Unknown(repr(value)[:80])


def _unparse(node: ast.AST) -> str:
    try:
        text = ast.unparse(node)
    except Exception:  # a recovered tree may hold nodes unparse does not expect
        text = type(node).__name__
    return text[:80]


_OPERATORS: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}
_MAX_MAGNITUDE = 1e15


def _number(value: Value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:  # an integer literal too large for a float
        return None
    return number if math.isfinite(number) and abs(number) <= _MAX_MAGNITUDE else None


class _Env:
    """Names the paste assigns a literal, in the order it assigns them; a name assigned twice with
    different values, or bound by a loop or a parameter, is unknown."""

    def __init__(self, constants: dict[str, Value]) -> None:
        self.constants = constants

    def value(self, node: ast.AST | None, depth: int = 0) -> Value:
        if node is None:
            return None
        if depth > 20:
            return Unknown(_unparse(node))
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return self.constants.get(node.id, Unknown(node.id))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
            operand = _number(self.value(node.operand, depth + 1))
            if operand is None:
                return Unknown(_unparse(node))
            return -operand if isinstance(node.op, ast.USub) else operand
        if isinstance(node, ast.BinOp):
            return self._arithmetic(node, depth)
        if isinstance(node, ast.Dict):
            items: dict[object, Value] = {}
            for key, item in zip(node.keys, node.values, strict=False):
                if key is None:
                    return Unknown(_unparse(node))
                k = self.value(key, depth + 1)
                if isinstance(k, Unknown) or not isinstance(k, str | int | float):
                    return Unknown(_unparse(node))
                items[k] = self.value(item, depth + 1)
            return items
        if isinstance(node, ast.List | ast.Tuple):
            return [self.value(e, depth + 1) for e in node.elts[:1000]]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            return self._builtin(node, depth)
        return Unknown(_unparse(node))

    def _arithmetic(self, node: ast.BinOp, depth: int) -> Value:
        if isinstance(node.op, ast.Mult):  # ``[{"GPU": 1}] * 4``: the same bundle four times
            items, times = self.value(node.left, depth + 1), self.value(node.right, depth + 1)
            if isinstance(times, list):
                items, times = times, items
            count = _number(times)
            if isinstance(items, list):
                if count is None or not count.is_integer() or not 0 <= count * len(items) <= 1000:
                    return Unknown(_unparse(node))
                return items * int(count)
        left = _number(self.value(node.left, depth + 1))
        right = _number(self.value(node.right, depth + 1))
        if left is None or right is None:
            return Unknown(_unparse(node))
        try:
            if isinstance(node.op, ast.Pow):
                result = left**right if abs(right) <= 64 and abs(left) <= 1e6 else None
            else:
                apply = _OPERATORS.get(type(node.op))
                result = apply(left, right) if apply else None
        except (ArithmeticError, ValueError):
            result = None
        if not isinstance(result, int | float) or not math.isfinite(result) or abs(result) > _MAX_MAGNITUDE:
            return Unknown(_unparse(node))
        return int(result) if float(result).is_integer() and isinstance(node.op, ast.FloorDiv) else result

    def _builtin(self, node: ast.Call, depth: int) -> Value:
        assert isinstance(node.func, ast.Name)
        name = node.func.id
        if name == "dict" and not node.args:
            return {k.arg: self.value(k.value, depth + 1) for k in node.keywords if k.arg}
        if name in ("int", "float") and len(node.args) == 1 and not node.keywords:
            number = _number(self.value(node.args[0], depth + 1))
            if number is None:
                return Unknown(_unparse(node))
            return int(number) if name == "int" else number
        return Unknown(_unparse(node))


# --- parsing with recovery ----------------------------------------------------------------------


def _clean(lines: Sequence[str]) -> list[str]:
    """Prompts stripped; in a prompt session, lines without a prompt are its output and dropped."""
    # ``...`` alone is also Python's Ellipsis (and a cut in prose): only ``>>>`` marks a session.
    prompted = any(_PROMPT_START.match(line) for line in lines[:50])
    cleaned = []
    for line in lines:
        match = _PROMPT.match(line)
        if match:
            cleaned.append(match.group(1) + line[match.end() :])
        else:
            cleaned.append("" if prompted and line.strip() else line.expandtabs(4))
    return cleaned


_OPEN = {"(": ")", "[": "]", "{": "}"}


def _closers(text: str) -> str | None:
    """The brackets a cut statement left open, closing it; None inside an unterminated string."""
    stack: list[str] = []
    quote = ""
    i = 0
    size = len(text)
    while i < size:
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if text.startswith(quote, i):
                i += len(quote)
                quote = ""
                continue
            if ch == "\n" and len(quote) == 1:
                quote = ""  # an unterminated one-line string ends with its line
        elif ch == "#":
            newline = text.find("\n", i)
            i = size if newline < 0 else newline
            continue
        elif ch in "'\"":
            quote = ch * 3 if text.startswith(ch * 3, i) else ch
            i += len(quote)
            continue
        elif ch in _OPEN:
            stack.append(_OPEN[ch])
        elif ch in ")]}" and stack and stack[-1] == ch:
            stack.pop()
        i += 1
    if quote:
        return None
    return "".join(reversed(stack))


def _try(text: str) -> tuple[ast.Module | None, int]:
    """The tree, or None and the (1-based) line of the error."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences in pasted strings
            return ast.parse(text), 0
    except SyntaxError as error:
        return None, error.lineno or 1
    except (ValueError, RecursionError, MemoryError):  # NUL bytes, absurd nesting
        return None, 1


@dataclass
class _Segment:
    tree: ast.Module
    text: str
    offset: int  # index in the block of the segment's first line


def _completed(text: str, whole: bool) -> ast.Module | None:
    """``text`` parsed as it is or completed the least that makes it parse: the brackets a cut
    call left open closed, and a compound statement cut after its header given an empty body.
    ``whole``: the text must parse only once completed (it is known not to parse as it is)."""
    tree = None if whole else _try(text)[0]
    if tree is not None:
        return tree
    closers = _closers(text)
    completed = text.rstrip().rstrip("=").rstrip() + closers if closers else text.rstrip()
    last = completed.rsplit("\n", 1)[-1]
    if last.rstrip().endswith(":"):
        indent = len(last) - len(last.lstrip())
        completed += "\n" + " " * (indent + 4) + "..."
    if completed == text.rstrip():
        return None
    return _try(completed)[0]


def _closed_prefix(chunk: list[str], bad: int) -> tuple[ast.Module, int, str] | None:
    """The largest parseable prefix of ``chunk`` ending before line ``bad`` (1-based), completed
    where it was cut, or without up to two trailing incomplete lines."""
    for drop in range(0, 3):
        end = min(bad, len(chunk)) - drop
        if end <= 0:
            break
        text = textwrap.dedent("\n".join(chunk[:end]))
        tree = _completed(text, whole=False)
        if tree is not None:
            return tree, end, text
    return None


def _close_cut_end(chunk: list[str]) -> tuple[ast.Module, str, int] | None:
    """(tree, text, lines used) of ``chunk`` completed where the paste cut it, dropping up to two
    trailing incomplete lines (``run_config=RunConfig(name=``)."""
    for drop in range(0, 3):
        end = len(chunk) - drop
        if end <= 0:
            return None
        text = textwrap.dedent("\n".join(chunk[:end]))
        tree = _completed(text, whole=drop == 0)
        if tree is not None:
            return tree, text, end
    return None


def parse(lines: Sequence[str], budget: int = MAX_BLOCK_CHARS) -> tuple[list[_Segment], list[int], int]:
    """Parse a block of pasted code as far as it goes: (segments, indexes of unread lines, cost)."""
    cleaned = _clean(lines)
    segments: list[_Segment] = []
    unread: list[int] = []
    cost = 0
    pos = 0
    retries = 0
    while pos < len(cleaned):
        chunk = cleaned[pos:]
        cost += sum(len(line) + 1 for line in chunk)
        if cost > budget or retries > MAX_RETRIES:
            unread.extend(range(pos, len(cleaned)))
            break
        text = textwrap.dedent("\n".join(chunk))
        tree, bad = _try(text)
        if tree is not None:
            segments.append(_Segment(tree, text, pos))
            break
        retries += 1
        bad = max(1, min(bad, len(chunk)))
        if retries == 1 and (closed := _close_cut_end(chunk)) is not None:
            # A paste cut inside its last statement: the brackets it left open are closed.
            segments.append(_Segment(closed[0], closed[1], pos))
            unread.extend(range(pos + closed[2], len(cleaned)))
            break
        prefix = _closed_prefix(chunk, bad - 1) if bad > 1 else None
        if prefix is not None:
            segments.append(_Segment(prefix[0], prefix[2], pos))
            cost += len(prefix[2])
            pos += prefix[1]
            if prefix[1] < bad - 1:
                unread.extend(range(pos, pos + bad - 1 - prefix[1]))
                pos += bad - 1 - prefix[1]
        else:
            unread.extend(range(pos, pos + bad - 1))
            pos += bad - 1
        if pos < len(cleaned):
            unread.append(pos)
            pos += 1
    return segments, sorted(set(unread)), cost


# --- what the code declares ---------------------------------------------------------------------

_RAY_NAMES = {"CPU": "CPU", "GPU": "GPU", "memory": "memory"}
_TUNE_NAMES = {"cpu": "CPU", "gpu": "GPU", "CPU": "CPU", "GPU": "GPU", "memory": "memory"}
_TRAINERS = re.compile(r"^(?:\w*Trainer|ScalingConfig)$")
_VLLM_CALLS = {"LLM", "EngineArgs", "AsyncEngineArgs", "dict", "LLMConfig"}
# ``accelerator_type="A100"`` asks for this much of ``accelerator_type:A100`` (Ray's constant).
_ACCELERATOR_AMOUNT = 0.001
_OPTION_KEYS = ("num_cpus", "num_gpus", "resources", "accelerator_type", "memory")


def _call_name(node: ast.AST) -> str:
    """``ray.util.placement_group`` → ``placement_group``; ``X.options`` → ``options``."""
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return ""


def _dotted(node: ast.AST) -> str:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


@dataclass
class _Reading:
    """One block's walk: the names it knows and what it found."""

    env: _Env
    facts: CodeFacts
    templates: dict[str, Template]
    lines: list[str]
    found: Found
    trial: Demand | None = None
    recognised: bool = False
    pending: list[Request] = field(default_factory=list)

    def quote(self, node: ast.AST, text: str) -> str:
        """What ``node`` was pasted as: its whole line when it fits on one, else its own source
        joined on one line (from the block's lines: ``ast.get_source_segment`` splits the whole
        text on every call, which a long block cannot afford)."""
        first, last = getattr(node, "lineno", 0) - 1, getattr(node, "end_lineno", 0) - 1
        if not 0 <= first <= last < len(self.lines):
            return _unparse(node)
        if first == last:
            return " ".join(self.lines[first].split())[:_QUOTE_CHARS]
        last = min(last, first + 20)
        parts = [line.encode("utf-8") for line in self.lines[first : last + 1]]
        start = getattr(node, "col_offset", 0) or 0
        end = getattr(node, "end_col_offset", None)
        if end is not None and last == getattr(node, "end_lineno", 0) - 1:
            parts[-1] = parts[-1][:end]
        parts[0] = parts[0][start:]
        segment = b" ".join(parts).decode("utf-8", errors="ignore")
        return " ".join(segment.split())[:_QUOTE_CHARS]

    def line(self, node: ast.AST) -> str:
        """The whole line ``node`` starts on, as pasted (dedented)."""
        index = getattr(node, "lineno", 1) - 1
        return self.lines[index].strip()[:_QUOTE_CHARS] if 0 <= index < len(self.lines) else _unparse(node)

    def unknown(self, what: str, value: Unknown) -> None:
        self.recognised = True
        entry = f"{what[:60]}={value.text[:80]}"
        if entry not in self.facts.unknown and len(self.facts.unknown) < MAX_UNKNOWN:
            self.facts.unknown.append(entry)


def _keywords(call: ast.Call) -> dict[str, ast.expr]:
    return {k.arg: k.value for k in call.keywords if k.arg}


def _resource_map(value: Value, names: dict[str, str]) -> dict[str, float] | Unknown:
    if isinstance(value, Unknown):
        return value
    if not isinstance(value, dict):
        return Unknown(repr(value)[:80])
    shape: dict[str, float] = {}
    for key, amount in value.items():
        if key == "custom_resources" and isinstance(amount, dict):
            inner = _resource_map(amount, {})
            if isinstance(inner, Unknown):
                return inner
            shape.update(inner)
            continue
        number = _number(amount)
        if number is None:
            return Unknown(f"{key}: {amount.text if isinstance(amount, Unknown) else amount!r}")
        if number > 0:
            shape[names.get(str(key), str(key))] = number
    return shape


def _options(reading: _Reading, keywords: dict[str, ast.expr], what: str) -> dict[str, float] | None:
    """The resources of ``@ray.remote(...)`` or ``.options(...)``: None when one is unknown."""
    return _option_values(reading, {k: reading.env.value(v) for k, v in keywords.items()}, what)


def _option_values(reading: _Reading, values: dict[str, Value], what: str) -> dict[str, float] | None:
    """Ray's resource options as a shape; None (and the value noted) when one is unknown."""
    shape = resource_options(values)
    if isinstance(shape, tuple):
        reading.unknown(f"{what} {shape[0]}", shape[1])
        return None
    return shape


def resource_options(values: Mapping[str, object]) -> dict[str, float] | tuple[str, Unknown]:
    """Ray's resource options (``num_cpus``, ``num_gpus``, ``resources``, ``accelerator_type``,
    ``memory``; ``ray/_common/ray_option_utils.py``) as a shape, before Ray's defaults; or the
    option and value that are no literal. Shared by the code reader and the Serve config reader."""
    shape: dict[str, float] = {}
    for key in _OPTION_KEYS:
        value = values.get(key)
        if value is None:
            continue
        if key == "resources":
            resources = _resource_map(value, {})
            if isinstance(resources, Unknown):
                return key, resources
            shape.update(resources)
        elif key == "accelerator_type":
            if not isinstance(value, str):
                return key, _as_unknown(value)
            shape[f"accelerator_type:{value}"] = _ACCELERATOR_AMOUNT
        else:
            number = _number(value)
            if number is None:
                return key, _as_unknown(value)
            # A zero is kept until Ray's defaults are applied: ``num_cpus=0`` says "no CPU".
            shape[{"num_cpus": "CPU", "num_gpus": "GPU", "memory": "memory"}[key]] = max(number, 0.0)
    return shape


def with_defaults(kind: str, shape: dict[str, float]) -> dict[str, float]:
    """What Ray reserves for a task or an actor, its defaults included (``ray/_common/
    ray_option_utils.py``: a task takes one CPU unless told; ``ray/actor.py``: an actor that names
    any resource other than memory holds one CPU for its lifetime unless told, one that names none
    holds no CPU)."""
    shape = dict(shape)
    if kind == "task" or set(shape) - {"memory", "object_store_memory"}:
        shape.setdefault("CPU", 1.0)
    return {k: v for k, v in shape.items() if v > 0}


def _merged(
    base: dict[str, float] | None, override: dict[str, float] | None, keys: set[str]
) -> dict[str, float] | None:
    """``.options(...)`` replaces the resources it names and keeps the rest."""
    if base is None or override is None:
        return None
    merged = {k: v for k, v in base.items() if not _named_by(k, keys)}
    merged.update(override)
    return merged


def _named_by(resource: str, keys: set[str]) -> bool:
    return (
        (resource == "CPU" and "num_cpus" in keys)
        or (resource == "GPU" and "num_gpus" in keys)
        or (resource == "memory" and "memory" in keys)
        or (resource.startswith("accelerator_type:") and "accelerator_type" in keys)
        or (
            resource not in ("CPU", "GPU", "memory")
            and not resource.startswith("accelerator_type:")
            and "resources" in keys
        )
    )


def _multiplier(node: ast.AST, env: _Env) -> int | None:
    """How many times a loop or comprehension runs, when it ranges over literal bounds."""
    if isinstance(node, ast.For | ast.AsyncFor):
        iterables = [node.iter]
    elif isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
        if any(g.ifs for g in node.generators):
            return None
        iterables = [g.iter for g in node.generators]
    elif isinstance(node, ast.While):
        return None
    else:
        return 1
    total = 1
    for iterable in iterables:
        count = _range_length(iterable, env)
        if count is None:
            return None
        total *= count
    return total if total <= MAX_INSTANCES else None


def _range_length(node: ast.expr, env: _Env) -> int | None:
    if isinstance(node, ast.Call) and _call_name(node.func) == "range" and 1 <= len(node.args) <= 3:
        bounds = [_number(env.value(a)) for a in node.args]
        if any(b is None or not float(b).is_integer() for b in bounds):
            return None
        values = [int(b) for b in bounds if b is not None]
        start, stop, step = (
            (0, values[0], 1) if len(values) == 1 else (*values[:2], values[2] if len(values) == 3 else 1)
        )
        if step == 0:
            return None
        return max(0, len(range(start, min(stop, start + step * MAX_INSTANCES * 2), step)))
    value = env.value(node)
    if isinstance(value, list):
        return len(value)
    return None


def _walk(node: ast.AST, count: int | None, env: _Env) -> Iterator[tuple[ast.AST, int | None]]:
    """Every node with how many times the code runs it (None: some number the paste does not give).

    Bodies of functions are counted once: pasted code calls its ``main`` once far more often than
    not, and a remote method's body runs on the worker, where what it creates is its own demand."""
    stack: list[tuple[ast.AST, int | None]] = [(node, count)]
    while stack:
        current, times = stack.pop()
        yield current, times
        inner = times
        if isinstance(
            current,
            ast.For | ast.AsyncFor | ast.While | ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp,
        ):
            factor = _multiplier(current, env)
            inner = None if factor is None or times is None else times * factor
            if inner is not None and inner > MAX_INSTANCES:
                inner = None  # "very many" is all a count that large says
        maybe: list[ast.AST] = []  # statements that run only under a condition: how often is unknown
        if isinstance(current, ast.If):
            maybe = [*current.orelse] if _is_main_guard(current.test) else [*current.body, *current.orelse]
        elif isinstance(current, ast.Try):
            maybe = list(current.handlers)
        elif isinstance(current, ast.IfExp):
            maybe = [current.body, current.orelse]
        children = list(ast.iter_child_nodes(current))
        for child in reversed(children):
            # A loop's iterable is evaluated once, its body as many times as it loops.
            once = isinstance(current, ast.For | ast.AsyncFor) and child is current.iter
            stack.append((child, None if any(child is m for m in maybe) else times if once else inner))


def _is_main_guard(test: ast.expr) -> bool:
    """``if __name__ == "__main__":``, under which a pasted script runs once."""
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and len(test.comparators) == 1
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == "__main__"
    )


def _constants(trees: Sequence[ast.Module], known: dict[str, Value]) -> dict[str, Value]:
    """Names assigned a literal, in code order; later blocks see earlier blocks' names."""
    constants = dict(known)
    env = _Env(constants)
    assigned: set[str] = set()
    for tree in trees:
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
            ):
                name = node.targets[0].id
                value = env.value(node.value)
                if name in assigned and constants.get(name) != value:
                    constants[name] = Unknown(name)
                else:
                    constants[name] = value
                assigned.add(name)
            elif isinstance(node, ast.AugAssign | ast.AnnAssign) and isinstance(node.target, ast.Name):
                constants[node.target.id] = Unknown(node.target.id)
            elif isinstance(node, ast.For | ast.AsyncFor | ast.comprehension):
                for bound in ast.walk(node.target):
                    if isinstance(bound, ast.Name):
                        constants[bound.id] = Unknown(bound.id)
            elif isinstance(node, ast.arguments):
                for arg in [*node.posonlyargs, *node.args, *node.kwonlyargs]:
                    constants[arg.arg] = Unknown(arg.arg)
    return constants


def _decorated(
    reading: _Reading, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, text: str
) -> None:
    for decorator in node.decorator_list:
        call = decorator if isinstance(decorator, ast.Call) else None
        name = _dotted(call.func if call else decorator)
        kind = "actor" if isinstance(node, ast.ClassDef) else "task"
        if name in ("ray.remote", "remote"):
            shape = _options(reading, _keywords(call), node.name) if call else {}
            reading.templates[node.name] = Template(kind, shape, reading.line(decorator))
            reading.recognised = True
        elif name in ("serve.deployment", "deployment") and isinstance(node, ast.ClassDef | ast.FunctionDef):
            keywords = _keywords(call) if call else {}
            _serve(reading, node.name, keywords, reading.line(decorator), 1)


def _serve(
    reading: _Reading, name: str, keywords: dict[str, ast.expr], quote: str, times: int | None
) -> None:
    """A Serve deployment: ``num_replicas`` actors of ``ray_actor_options`` each (one by default)."""
    reading.recognised = True
    options = reading.env.value(keywords["ray_actor_options"]) if "ray_actor_options" in keywords else {}
    shape: dict[str, float] | None = {}
    if isinstance(options, Unknown):
        reading.unknown(f"{name} ray_actor_options", options)
        shape = None
    elif isinstance(options, dict):
        shape = _option_values(reading, {str(k): v for k, v in options.items()}, f"{name} ray_actor_options")
    replicas_value = reading.env.value(keywords["num_replicas"]) if "num_replicas" in keywords else 1
    replicas = _number(replicas_value)
    count: int | None = int(replicas) if replicas is not None and replicas >= 0 else None
    if count is None and isinstance(replicas_value, Unknown):
        reading.unknown(f"{name} num_replicas", replicas_value)
    reading.templates[name] = Template("actor", shape, quote)
    if shape is not None:
        instances = None if count is None or times is None else count * times
        # Serve reserves one CPU per replica unless ``ray_actor_options`` says otherwise.
        shape = with_defaults("actor", {"CPU": 1.0, **shape})
        _request(reading, Request("actor", shape, quote, name=name, instances=instances))


def _request(reading: _Reading, request: Request) -> None:
    if len(reading.pending) < MAX_REQUESTS:
        reading.pending.append(request)
    reading.recognised = True


def _instance(reading: _Reading, call: ast.Call, times: int | None, text: str) -> None:
    """``X.remote(...)`` or ``X.options(...).remote(...)``: one instance of a declared X."""
    target = call.func.value if isinstance(call.func, ast.Attribute) else None
    override: dict[str, float] | None = {}
    keys: set[str] = set()
    if isinstance(target, ast.Call) and _call_name(target.func) == "options":
        keywords = _keywords(target)
        keys = set(keywords) & set(_OPTION_KEYS)
        base = target.func.value if isinstance(target.func, ast.Attribute) else None
        name = _dotted(base) if base is not None else ""
        override = _options(reading, keywords, name)
    else:
        name = _dotted(target) if target is not None else ""
    template = reading.templates.get(name)
    if template is None:
        return
    shape = _merged(template.shape, override, keys)
    if shape is None:
        return
    line = reading.line(call)
    quote = line if line.startswith("@") or not template.quote else f"{template.quote} … {line}"
    shape = with_defaults(template.kind, shape)
    _request(reading, Request(template.kind, shape, quote[:_QUOTE_CHARS], name=name, instances=times))


def _placement_group(reading: _Reading, call: ast.Call, times: int | None, text: str) -> None:
    keywords = _keywords(call)
    bundles_node = call.args[0] if call.args else keywords.get("bundles")
    strategy_node = call.args[1] if len(call.args) > 1 else keywords.get("strategy")
    bundles = reading.env.value(bundles_node)
    strategy = reading.env.value(strategy_node) if strategy_node is not None else "PACK"
    if isinstance(bundles, Unknown) or not isinstance(bundles, list) or not bundles:
        reading.unknown("placement_group bundles", _as_unknown(bundles))
        return
    shapes: list[dict[str, float]] = []
    for bundle in bundles:
        shape = _resource_map(bundle, _RAY_NAMES)
        if isinstance(shape, Unknown):
            reading.unknown("placement_group bundle", shape)
            return
        shapes.append(shape)
    if not isinstance(strategy, str):
        reading.unknown("placement_group strategy", _as_unknown(strategy))
        return
    whole: dict[str, float] = {}
    for shape in shapes:
        for key, value in shape.items():
            whole[key] = whole.get(key, 0.0) + value
    _request(
        reading,
        Request(
            "placement_group",
            whole,
            reading.quote(call, text),
            bundles=tuple(shapes),
            strategy=strategy.upper(),
            instances=times,
        ),
    )


def _init(reading: _Reading, call: ast.Call, text: str) -> None:
    keywords = _keywords(call)
    reading.recognised = True
    # ``redis_address`` is the same argument before Ray 1.0.
    address = call.args[0] if call.args else keywords.get("address", keywords.get("redis_address"))
    if address is not None and reading.env.value(address) is not None:
        reading.facts.joins_cluster = True  # ``ray.init("auto")``: resources are the cluster's
        return
    reading.facts.starts_local = True
    reading.facts.init_quote = reading.quote(call, text)
    declared: dict[str, float] = {}
    for key, name in (("num_cpus", "CPU"), ("num_gpus", "GPU")):
        if key in keywords:
            value = reading.env.value(keywords[key])
            number = _number(value)
            if number is None:
                reading.unknown(f"ray.init {key}", _as_unknown(value))
                return
            declared[name] = number
    if "resources" in keywords:
        resources = _resource_map(reading.env.value(keywords["resources"]), {})
        if isinstance(resources, Unknown):
            reading.unknown("ray.init resources", resources)
            return
        declared.update(resources)
    if declared:
        reading.facts.local_node = LocalNode(declared, reading.quote(call, text))


def _trial(reading: _Reading, call: ast.Call, text: str) -> None:
    """Train's ``ScalingConfig``/``Trainer(num_workers=...)``: one bundle per worker, by default one
    GPU each when ``use_gpu`` is set (the trainer's own small bundle is left out, so the figure is a
    lower bound); Tune's ``resources_per_trial``/``with_resources``: one bundle, or a factory's."""
    keywords = _keywords(call)
    name = _call_name(call.func)
    if _TRAINERS.match(name) and "num_workers" in keywords:
        workers = _number(reading.env.value(keywords["num_workers"]))
        if workers is None or not 0 < workers <= 10_000 or not workers.is_integer():
            given = reading.env.value(keywords["num_workers"])
            reading.unknown("num_workers", _as_unknown(given))
            return
        per_worker: dict[str, float] = {}
        if "resources_per_worker" in keywords:
            mapped = _resource_map(reading.env.value(keywords["resources_per_worker"]), _TUNE_NAMES)
            if isinstance(mapped, Unknown):
                reading.unknown("resources_per_worker", mapped)
                return
            per_worker = mapped
        use_gpu = reading.env.value(keywords["use_gpu"]) if "use_gpu" in keywords else False
        if isinstance(use_gpu, Unknown):
            reading.unknown("use_gpu", use_gpu)
            return
        if use_gpu is True and "GPU" not in per_worker:
            per_worker["GPU"] = 1.0
        if not per_worker:
            per_worker = {"CPU": 1.0}
        strategy = reading.env.value(keywords.get("placement_strategy"))
        count = int(workers)
        reading.trial = Demand(
            shape={k: v * count for k, v in per_worker.items()},
            kind="placement_group",
            bundles=[dict(per_worker) for _ in range(min(count, 1000))],
            strategy=strategy.upper() if isinstance(strategy, str) else "PACK",
            listed=True,
            name="trial",
            code_source=CODE_SOURCE,
            source_text=reading.quote(call, text),
        )
        reading.recognised = True
        return
    value: ast.expr | None = None
    if "resources_per_trial" in keywords:
        value = keywords["resources_per_trial"]
    elif name == "with_resources":
        value = call.args[1] if len(call.args) > 1 else keywords.get("resources")
    if value is None:
        return
    reading.recognised = True
    bundles: list[dict[str, float]]
    strategy_name: str | None = None
    if isinstance(value, ast.Call) and _call_name(value.func) == "PlacementGroupFactory":
        factory = _keywords(value)
        raw = reading.env.value(value.args[0] if value.args else factory.get("bundles"))
        if isinstance(raw, Unknown):
            reading.unknown("PlacementGroupFactory", raw)
            return
        if not isinstance(raw, list) or not raw:
            reading.unknown("PlacementGroupFactory", _as_unknown(raw))
            return
        bundles = []
        for bundle in raw:
            mapped = _resource_map(bundle, _TUNE_NAMES)
            if isinstance(mapped, Unknown):
                reading.unknown("PlacementGroupFactory bundle", mapped)
                return
            bundles.append(mapped)
        strategy_value = reading.env.value(factory.get("strategy"))
        strategy_name = strategy_value.upper() if isinstance(strategy_value, str) else "PACK"
    else:
        mapped = _resource_map(reading.env.value(value), _TUNE_NAMES)
        if isinstance(mapped, Unknown):
            reading.unknown("resources_per_trial", mapped)
            return
        bundles = [mapped]
    shape: dict[str, float] = {}
    for bundle in bundles:
        for key, amount in bundle.items():
            shape[key] = shape.get(key, 0.0) + amount
    if not shape:
        return
    reading.trial = Demand(
        shape=shape,
        kind="placement_group",
        bundles=bundles,
        strategy=strategy_name,
        listed=True,
        name="trial",
        code_source=CODE_SOURCE,
        source_text=reading.quote(call, text),
    )


def _vllm(reading: _Reading, keywords: dict[str, ast.expr], quote: str, times: int | None) -> None:
    """vLLM on Ray reserves one ``{GPU: 1}`` bundle per worker, ``tensor_parallel_size`` ×
    ``pipeline_parallel_size`` of them, packed (``vllm/executor/ray_utils.py``)."""
    sizes = []
    for key in ("tensor_parallel_size", "pipeline_parallel_size"):
        value = reading.env.value(keywords[key]) if key in keywords else 1
        number = _number(value)
        if number is None or number < 1 or not number.is_integer():
            reading.unknown(key, _as_unknown(value))
            return
        sizes.append(int(number))
    workers = sizes[0] * sizes[1]
    reading.recognised = True
    if workers <= 1 or workers > 10_000:
        return  # one worker runs in the driver's process: no placement group
    bundles = tuple({"GPU": 1.0} for _ in range(min(workers, 1000)))
    _request(
        reading,
        Request(
            "placement_group",
            {"GPU": float(workers)},
            quote,
            bundles=bundles,
            strategy="PACK",
            instances=times,
        ),
    )


def _read_tree(reading: _Reading, segment: _Segment) -> None:
    text = segment.text
    # Declarations first, so an instance created above its class's definition still counts.
    for node in ast.walk(segment.tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            _decorated(reading, node, text)
        elif (
            isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
        ):
            _assigned(reading, node.targets[0].id, node.value, text)
    for node, times in _walk(segment.tree, 1, reading.env):
        if isinstance(node, ast.Call):
            _call(reading, node, times, text)
        elif isinstance(node, ast.Dict) and any(
            isinstance(k, ast.Constant) and k.value == "tensor_parallel_size" for k in node.keys
        ):
            pairs = {
                k.value: v
                for k, v in zip(node.keys, node.values, strict=False)
                if isinstance(k, ast.Constant) and isinstance(k.value, str)
            }
            _vllm(reading, pairs, reading.quote(node, text), times)
    constructor_calls.read_tree(segment.tree, reading.lines, reading.facts)


def _assigned(reading: _Reading, name: str, value: ast.expr, text: str) -> None:
    """``f = ray.remote(num_gpus=1)(g)``, ``f = ray.remote(g)``, ``A2 = A.options(num_gpus=2)``."""
    if not isinstance(value, ast.Call):
        return
    func = value.func
    if isinstance(func, ast.Call) and _dotted(func.func) in ("ray.remote", "remote"):
        kind = (
            "actor"
            if value.args and isinstance(value.args[0], ast.Name) and value.args[0].id[:1].isupper()
            else "task"
        )
        shape = _options(reading, _keywords(func), name)
        reading.templates[name] = Template(kind, shape, reading.quote(value, text))
        reading.recognised = True
    elif _dotted(func) in ("ray.remote", "remote") and value.args and isinstance(value.args[0], ast.Name):
        source = reading.templates.get(value.args[0].id)
        kind = "actor" if value.args[0].id[:1].isupper() else "task"
        reading.templates[name] = source or Template(kind, {}, reading.quote(value, text))
        reading.recognised = True
    elif isinstance(func, ast.Attribute) and func.attr == "options":
        base = reading.templates.get(_dotted(func.value))
        if base is not None:
            keywords = _keywords(value)
            override = _options(reading, keywords, name)
            shape = _merged(base.shape, override, set(keywords) & set(_OPTION_KEYS))
            reading.templates[name] = Template(base.kind, shape, reading.quote(value, text))


def _call(reading: _Reading, call: ast.Call, times: int | None, text: str) -> None:
    name = _call_name(call.func)
    dotted = _dotted(call.func)
    keywords = _keywords(call)
    if name == "remote" and isinstance(call.func, ast.Attribute):
        _instance(reading, call, times, text)
    elif name == "placement_group" and dotted in (
        "placement_group",
        "ray.util.placement_group",
        "util.placement_group",
        "ray.util.placement_group.placement_group",
    ):
        _placement_group(reading, call, times, text)
    elif dotted == "ray.init":
        _init(reading, call, text)
    elif _TRAINERS.match(name) or name == "with_resources" or "resources_per_trial" in keywords:
        _trial(reading, call, text)
    parallel = "tensor_parallel_size" in keywords or "pipeline_parallel_size" in keywords
    if parallel and (name in _VLLM_CALLS or name.endswith(("Args", "LLM", "Config"))):
        _vllm(reading, keywords, reading.quote(call, text), times)
    if name == "options" and "ray_actor_options" in keywords and isinstance(call.func, ast.Attribute):
        _serve(reading, _dotted(call.func.value), keywords, reading.quote(call, text), times)
    elif (
        name == "deployment"
        and dotted in ("serve.deployment",)
        and call.args
        and isinstance(call.args[0], ast.Name)
    ):
        _serve(reading, call.args[0].id, keywords, reading.quote(call, text), times)


# --- the reader ---------------------------------------------------------------------------------


def _extent(lines: Sequence[str], i: int) -> int:
    """The index after the block starting at ``i``: lines that look like code, blank lines inside."""
    end = i + 1
    last = min(len(lines), i + MAX_BLOCK_LINES)
    chars = len(lines[i])
    j = i + 1
    while j < last and chars < MAX_BLOCK_CHARS:
        line = lines[j]
        if not line.strip():
            k = j + 1
            while k < last and not lines[k].strip():
                k += 1
            if (
                k < last
                and _looks_like_code(lines[k])
                and (lines[k][:1].isspace() or _starts_here(lines[k]) or _CODE_LINE.match(lines[k][:300]))
            ):
                j = k
                continue
            break
        if not _looks_like_code(line):
            break
        chars += len(line)
        j += 1
        end = j
    return end


def _uses_cuda(tree: ast.AST) -> bool:
    """``torch.cuda...``, ``x.cuda()``, ``cupy.cuda``, or a ``"cuda"``/``"cuda:0"`` device string."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "cuda":
            return True
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("cuda"):
            return True
    return False


def read_block(lines: Sequence[str], found: Found) -> list[int]:
    """Read one block of code into ``found``; the indexes of the lines it could not read."""
    facts = found.code
    left = MAX_PASTE_CHARS - facts.chars_parsed
    if left <= 0:
        found.note("further Python code was not parsed, to keep the work on this paste bounded")
        return list(range(len(lines)))
    segments, unread, cost = parse(lines, min(MAX_BLOCK_CHARS, left))
    facts.chars_parsed += cost
    trees = [s.tree for s in segments]
    reading = _Reading(
        env=_Env(_constants(trees, facts.constants)),
        facts=facts,
        templates=facts.templates,
        lines=list(lines),
        found=found,
    )
    for segment in segments:
        reading.lines = segment.text.splitlines()
        _read_tree(reading, segment)
    facts.constants.update(reading.env.constants)
    facts.uses_cuda = facts.uses_cuda or any(_uses_cuda(tree) for tree in trees)
    if reading.recognised:
        found.recognise(FORMAT)
    for request in reading.pending:
        if len(facts.requests) < MAX_REQUESTS:
            facts.requests.append(request)
    if reading.trial is not None:
        tune_status.set_request(found, reading.trial)
    return unread


def _read(lines: Sequence[str], i: int, paste: Paste) -> Block:
    end = _extent(lines, i)
    block = lines[i:end]
    unread = read_block(block, paste.found)
    return Block(end, leftover=[block[k] for k in unread if block[k].strip()])


READER = Reader("python-code", starts=_starts, read=_read)


# --- joining the code with the cluster ----------------------------------------------------------


def _demand(request: Request, **flags: bool) -> Demand:
    count = request.instances if request.instances and request.instances > 0 else 1
    return Demand(
        shape=dict(request.shape),
        count=count,
        kind=request.kind,
        bundles=[dict(b) for b in request.bundles],
        strategy=request.strategy,
        name=request.name,
        source_text=request.quote,
        code_source=request.source,
        **flags,
    )


def _shows_cluster(found: Found) -> bool:
    return bool(
        (found.ray_status and found.ray_status.totals)
        or found.ray_nodes
        or found.node_types
        or found.objects.get("rayclusters")
    )


def settle(found: Found) -> None:
    """Join what the code asks with the cluster facts of the whole paste; called once, at the end.

    Where the paste shows the cluster (``ray status``, Ray nodes, node types, a RayCluster), each
    request becomes a *declared* demand: nothing shows it waiting, so only what can never fit is
    judged (:mod:`bot.classify.detectors.ray_resources`). Where it shows none but the code starts
    its own one-node cluster (``ray.init(num_gpus=2)``), the code's own instances are placed on
    that node in order, as Ray would: the first that does not fit waits, held by those before it.
    A ``ray status`` of one node beside such code is that node's: its totals complete what
    ``ray.init`` declared, and the code's instances are placed on them the same way (a plain
    status shows only totals, so four 0.4-GPU actors on two GPUs look like 0.4 GPU free). Where
    ``ray.init`` leaves the GPUs to Ray's detection and the paste's only capacity is one machine's
    ``nvidia-smi``, that count is the node's GPUs. Where the paste shows only hardware (``nvidia-smi``,
    a Kubernetes node's GPUs) and the code joins a cluster, the requests are declared and judged
    against the largest machine shown (:mod:`bot.classify.detectors.machine_gpus`).
    """
    facts = found.code
    if facts.settled:
        return
    facts.settled = True
    for entry in facts.unknown:
        found.note(f"python code: {entry} is no literal value in the paste, so that request is not judged")
    requests = [r for r in facts.requests if r.shape or r.bundles]
    if not requests:
        return
    local = facts.local_node if not facts.joins_cluster else None
    if local is not None and (status_node := _status_of_local_node(found, local)) is not None:
        _place_on_local_node(found, status_node, requests)
        return
    if _shows_cluster(found):
        facts.declared = [_demand(request, declared=True) for request in requests[:MAX_DECLARED]]
        return
    if not facts.joins_cluster and (facts.starts_local or local is not None):
        local = _with_machine_gpus(found, local)
    if local is not None:
        _place_on_local_node(found, local, requests)
    elif _shows_machine(found):
        # Only hardware figures (``nvidia-smi``, a Kubernetes node's GPUs): nothing shows what Ray
        # registers, so the requests are declared and judged against one machine's GPUs alone
        # (:mod:`bot.classify.detectors.machine_gpus`).
        facts.declared = [_demand(request, declared=True) for request in requests[:MAX_DECLARED]]


def work_without_gpus(facts: CodeFacts) -> list[str]:
    """The remote functions and actor classes CUDA-using code declares with no GPU, when nothing
    else in it asks for one; each as its decorator and name (``@ray.remote … def f``).

    Ray hides the GPUs from a worker whose task or actor requests none: it sets
    ``CUDA_VISIBLE_DEVICES`` to an empty string there (``RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES``
    turns that off), so CUDA inside it finds no device, however many the node registered. Nothing
    is claimed when any declaration asks for a GPU, or leaves its value to a name the paste does
    not resolve: the failing code may then be that one, and its error another reading's.
    """
    templates = facts.templates
    if not facts.uses_cuda or not templates or any(t.shape is None for t in templates.values()):
        return []
    shapes = [t.shape or {} for t in templates.values()] + [r.shape for r in facts.requests]
    shapes += [bundle for r in facts.requests for bundle in r.bundles]
    if any(shape.get("GPU", 0.0) > 0 for shape in shapes) or any("gpu" in u.lower() for u in facts.unknown):
        return []
    return [
        f"{t.quote} … {'class' if t.kind == 'actor' else 'def'} {name}"
        for name, t in templates.items()
        if t.quote.startswith("@")
    ][:MAX_DECLARED]


def _shows_machine(found: Found) -> bool:
    """Whether the paste shows some machine's GPUs: ``nvidia-smi`` or a Kubernetes node's capacity."""
    return any(output.gpu_count for output in found.nvidia_smi) or any(
        installed_gpus(node) > 0 for node in found.nodes
    )


def _with_machine_gpus(found: Found, local: LocalNode | None) -> LocalNode | None:
    """The node ``ray.init()`` starts, with the GPUs Ray detects on it when ``ray.init`` does not
    say: the count ``nvidia-smi`` shows, when the paste holds one machine's count and no other
    figure of the cluster (Ray detects the GPUs NVML lists, unless ``CUDA_VISIBLE_DEVICES`` hides
    some). Several machines' counts that differ cannot say which one ran the code."""
    if local is not None and "GPU" in local.resources:
        return local
    counts = {output.gpu_count for output in found.nvidia_smi if output.gpu_count}
    if len(counts) != 1 or not all(output.complete for output in found.nvidia_smi):
        return local  # several machines, or a table cut off: the node's GPUs are not known
    resources = {**(local.resources if local else {}), "GPU": float(counts.pop())}
    return LocalNode(resources, local.quote if local else found.code.init_quote or "ray.init()")


# What Ray registers besides the resources work asks for: no request is judged on them here.
_STORE = ("memory", "object_store_memory")


def _status_of_local_node(found: Found, local: LocalNode) -> LocalNode | None:
    """The node ``ray.init`` started, as a pasted one-node ``ray status`` reports it; None when the
    status shows more or other nodes, or totals that contradict what ``ray.init`` declared
    (``ray.init(num_gpus=...)`` always starts its own cluster: Ray refuses those arguments when
    joining one, so a status that agrees is that cluster's)."""
    status = found.ray_status
    if status is None or not status.totals or found.ray_nodes:
        return None
    count = status.node_count or sum(status.node_groups.values())
    if count != 1:
        return None
    if any(abs(status.totals.get(k, 0.0) - v) > 1e-6 for k, v in local.resources.items()):
        return None
    resources = {k: v for k, v in status.totals.items() if k not in _STORE and not k.startswith("node:")}
    return LocalNode(resources, local.quote)


# Ray tracks these per unit: a fractional request must fit inside one unit, a whole one takes whole
# units (``ResourceInstanceSet``; ``predefined_unit_instance_resources``).
_UNIT_RESOURCES = ("GPU",)
_MAX_UNITS = 1024


@dataclass
class _LocalNode:
    total: dict[str, float]
    free: dict[str, float]
    units: dict[str, list[float]]

    def take(self, need: dict[str, float]) -> bool:
        if any(self.free.get(k, 0.0) + 1e-9 < v for k, v in need.items()):
            return False
        taken_units: dict[str, list[float]] = {}
        for key, amount in need.items():
            units = self.units.get(key)
            if units is None:
                continue
            trial = list(units)
            if amount < 1:
                slot = next((n for n, free in enumerate(trial) if free + 1e-9 >= amount), None)
                if slot is None:
                    return False
                trial[slot] -= amount
            else:
                whole = [n for n, free in enumerate(trial) if free >= 1 - 1e-9]
                if len(whole) < amount or not float(amount).is_integer():
                    return False
                for n in whole[: int(amount)]:
                    trial[n] = 0.0
            taken_units[key] = trial
        for key, amount in need.items():
            self.free[key] = self.free.get(key, 0.0) - amount
        self.units.update(taken_units)
        return True


def _place_on_local_node(found: Found, local: LocalNode, requests: list[Request]) -> None:
    node = _LocalNode(
        total=dict(local.resources),
        free=dict(local.resources),
        units={
            k: [1.0] * int(local.resources[k])
            for k in _UNIT_RESOURCES
            if float(local.resources.get(k, 0.0)).is_integer()
            and 0 < local.resources.get(k, 0.0) <= _MAX_UNITS
        },
    )
    node_id = local.quote[:80]
    actors: list[RayActor] = []
    groups: list[PlacementGroup] = []
    steps = MAX_INSTANCES  # placements tried in all: the work stays bounded whatever the counts say
    for request in requests:
        if request.instances == 0:
            continue  # declared, never created in the paste
        shapes = (
            list(request.bundles)
            if request.kind == "placement_group" and request.bundles
            else [request.shape]
        )
        # What ray.init leaves out Ray detects: unknown here. Only the declared resources are
        # placed; a request that waits for them waits whatever the others are.
        shapes = [{k: v for k, v in shape.items() if k in node.total} for shape in shapes]
        if not any(shapes):
            continue
        if (request.strategy or "") == "STRICT_SPREAD" and len(shapes) > 1:
            return  # bundles on distinct nodes, on a one-node cluster: not a question of who holds what
        # A task that starts also ends and gives back, so one placement says whether all of them fit.
        tries = 1 if request.kind == "task" else (request.instances or 1)
        if tries > steps:
            return
        steps -= tries
        for done in range(tries):
            whole: dict[str, float] = {}
            for shape in shapes:
                for key, value in shape.items():
                    whole[key] = whole.get(key, 0.0) + value
            fits_total = all(node.total.get(k, 0.0) + 1e-9 >= v for k, v in whole.items())
            before = (dict(node.free), {k: list(v) for k, v in node.units.items()})
            placed = fits_total and all(node.take(shape) for shape in shapes)
            if not placed:
                node.free, node.units = before
                waiting = replace(
                    _demand(request),
                    shape={k: v for k, v in request.shape.items() if k in node.total},
                    bundles=[dict(s) for s in shapes] if request.bundles else [],
                )
                left = (request.instances - done) if request.instances else 1
                if not any(d.shape == waiting.shape for d in found.demands):  # a status lists it already
                    found.add_demand(replace(waiting, count=left))
                found.add_ray_node(
                    RayNode(
                        node_id=node_id,
                        resources_total=dict(node.total),
                        resources_available={k: round(max(v, 0.0), 6) for k, v in node.free.items()},
                        unit_available={k: [round(u, 6) for u in v] for k, v in node.units.items()},
                    )
                )
                for actor in actors:
                    found.add_ray_actor(replace(actor, node_id=node_id))
                for group in groups:
                    found.add_placement_group(group)
                return
            if request.kind == "actor":
                actors.append(RayActor(class_name=request.name, required_resources=dict(shapes[0])))
            elif request.kind == "placement_group":
                groups.append(
                    PlacementGroup(strategy=request.strategy or "PACK", bundles=[dict(s) for s in shapes])
                )
            else:
                node.free, node.units = before  # a task that starts also ends, and gives back
        if request.instances is None:
            return  # how many it creates is unknown: what follows cannot be placed
    return
