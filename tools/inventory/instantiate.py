"""The message inventory as cases: load ``tests/inventory/<tool>.yaml``, check it, print each message.

The inventory lists, per tool, the messages its source prints about scheduling, resources, GPUs,
connectivity, scaling and start-up, each with the cause (``CAUSES.md``) a diagnosis must give first,
or ``null`` where the text alone must raise no numbered warning. This module is the one reader of
those files: ``load`` checks every file and reports every problem with its file, entry id and field
(files another engineer is still writing fail loudly and precisely, never half-silently), and
``cases`` instantiates every entry in each of its layouts (``tools/inventory/layouts.py``), in a
fixed order, so ``benchmarks/coverage.py`` and ``tests/inventory/`` measure the same texts.

    .venv/bin/python tools/inventory/instantiate.py                 # count the cases per tool
    .venv/bin/python tools/inventory/instantiate.py --out /tmp/inv  # write each case to read it
    .venv/bin/python tools/inventory/instantiate.py --show kube-scheduler/noderesourcesfit-insufficient
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a script: the repo root holds the packages
    sys.path.insert(0, str(ROOT))

from tools.inventory.layouts import EVENT_LAYOUTS, LAYOUTS, Line, render  # noqa: E402

INVENTORY = ROOT / "tests" / "inventory"

# The tools an inventory file may describe, with the name their events carry in `describe`'s From
# column (the default of ``values.component``; an entry overrides it where another component speaks).
TOOLS: Mapping[str, str] = {
    "ray-core": "",
    "ray-autoscaler-v1": "",
    "ray-autoscaler-v2": "",
    "ray-serve": "",
    "kuberay": "raycluster-controller",
    "kube-scheduler": "default-scheduler",
    "kubelet": "kubelet",
    "cluster-autoscaler": "cluster-autoscaler",
    "karpenter": "karpenter",
    "nvidia-device-plugin": "",
    "gpu-operator": "",
}

_FILE_KEYS = {"tool", "repo", "versions", "layouts", "values", "messages"}
_FILE_REQUIRED = {"tool", "repo", "versions", "layouts", "messages"}
_ENTRY_KEYS = {"id", "source", "versions", "template", "values", "layouts", "reason", "cause", "note"}
_ENTRY_REQUIRED = {"id", "source", "versions", "template", "cause"}
_SLUG = re.compile(r"^[a-z0-9][a-z0-9.-]*$")
# "1.20-1.34", "1.19-", "v0.33-v0.37", "2.9", several ranges separated by commas.
_VERSION = r"v?\d+(?:\.\d+)*"
_VERSIONS = re.compile(rf"^{_VERSION}(?:-(?:{_VERSION})?)?(?:\s*,\s*{_VERSION}(?:-(?:{_VERSION})?)?)*$")
# A placeholder is an identifier in braces; every other brace is the tool's own text (a taint
# ``{nvidia.com/gpu: present}``, a Ray resource dict ``{'GPU': 1.0}``). ``{{``/``}}`` write one brace
# where an identifier in braces is the tool's own text (or touches a placeholder: ``[{{{group} 1->2}}]``).
TOKEN = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")


def placeholders(template: str) -> set[str]:
    return {m.group(1) for m in TOKEN.finditer(template) if m.group(1)}


@dataclass(frozen=True)
class Problem:
    """One thing wrong in an inventory file, located by file, entry id and field."""

    file: str
    id: str
    field: str
    what: str

    def __str__(self) -> str:
        where = f"{self.file}: {self.id}" if self.id else self.file
        return f"{where}: {self.field}: {self.what}"


@dataclass(frozen=True)
class Entry:
    tool: str
    id: str
    source: str
    versions: str
    template: str
    values: Mapping[str, str]  # the file's values overridden by the entry's
    layouts: tuple[str, ...]
    reason: str
    cause: int | None
    note: str

    @property
    def key(self) -> str:
        return f"{self.tool}/{self.id}"

    def message(self) -> str:
        """The template with its placeholders filled (single pass: values are inserted as they are)."""
        return TOKEN.sub(lambda m: self.values[m.group(1)] if m.group(1) else m.group(0)[0], self.template)


@dataclass(frozen=True)
class Inventory:
    tool: str
    repo: str
    versions: str
    file: Path
    entries: tuple[Entry, ...]


@dataclass(frozen=True)
class Case:
    """One entry printed in one layout: the text a person would paste."""

    entry: Entry
    layout: str
    text: str

    @property
    def key(self) -> str:
        return f"{self.entry.key}@{self.layout}"


def _strings(value: Any) -> dict[str, str] | None:
    """A YAML mapping of scalars as strings (``total: 4`` is the text ``4``), or None if it is not one."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        return None
    out: dict[str, str] = {}
    for key, item in value.items():
        if not isinstance(key, str) or isinstance(item, dict | list):
            return None
        out[key] = "" if item is None else str(item).lower() if isinstance(item, bool) else str(item)
    return out


def _layouts(value: Any) -> tuple[str, ...] | None:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        return None
    return tuple(value)


def _check_entry(
    name: str, raw: Any, index: int, defaults: Mapping[str, str], file_layouts: tuple[str, ...], tool: str
) -> tuple[Entry | None, list[Problem]]:
    if not isinstance(raw, dict):
        return None, [Problem(name, f"messages[{index}]", "entry", "not a mapping")]
    ident = str(raw.get("id") or f"messages[{index}]")
    problems: list[Problem] = []

    def bad(field: str, what: str) -> None:
        problems.append(Problem(name, ident, field, what))

    for key in sorted(_ENTRY_REQUIRED - raw.keys()):
        bad(key, "missing")
    for key in sorted(set(raw) - _ENTRY_KEYS):
        bad(key, "unknown field")
    if "id" in raw and not (isinstance(raw["id"], str) and _SLUG.match(raw["id"])):
        bad("id", f"{raw['id']!r} is not a slug (lower-case letters, digits, '-', '.')")
    for key in ("source", "template"):
        if key in raw and not (isinstance(raw[key], str) and raw[key].strip()):
            bad(key, "must be a non-empty string")
    if "versions" in raw and not (isinstance(raw["versions"], str) and _VERSIONS.match(raw["versions"])):
        bad("versions", f"{raw['versions']!r} is not a range like '1.20-1.34' or '1.19-' (quote it)")
    cause = raw.get("cause")
    if "cause" in raw and cause is not None and (not isinstance(cause, int) or not 1 <= cause <= 10):
        bad("cause", f"{cause!r} is not a cause number 1..10 or null")
    values = _strings(raw.get("values"))
    if values is None:
        bad("values", "must map names to scalar values")
        values = {}
    layouts = file_layouts
    if "layouts" in raw:
        layouts = _layouts(raw["layouts"]) or ()
        if not layouts:
            bad("layouts", "must be a non-empty list of layout names")
    for layout in layouts:
        if layout not in LAYOUTS:
            bad("layouts", f"unknown layout {layout!r} (known: {', '.join(LAYOUTS)})")
    reason = raw.get("reason", "")
    if not isinstance(reason, str):
        bad("reason", f"{reason!r} is not a string")
        reason = ""
    if not reason and any(layout in EVENT_LAYOUTS for layout in layouts):
        bad("reason", "an event layout needs the event reason")
    merged = {**defaults, **values}
    template = raw.get("template")
    if isinstance(template, str):
        for placeholder in sorted(placeholders(template) - merged.keys()):
            bad("template", f"placeholder {{{placeholder}}} has no value")
    note = raw.get("note", "")
    if not isinstance(note, str):
        bad("note", "must be a string")
    if problems:
        return None, problems
    return (
        Entry(
            tool=tool,
            id=raw["id"],
            source=raw["source"],
            versions=raw["versions"],
            template=template if isinstance(template, str) else "",
            values=merged,
            layouts=layouts,
            reason=reason,
            cause=cause,
            note=note if isinstance(note, str) else "",
        ),
        [],
    )


def check_file(path: Path) -> tuple[Inventory | None, list[Problem]]:
    """Read one inventory file; every problem in it is returned, not only the first."""
    name = path.name
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as error:
        return None, [Problem(name, "", "file", f"cannot be read as YAML: {error}")]
    if not isinstance(raw, dict):
        return None, [Problem(name, "", "file", "is not a mapping")]
    problems = [Problem(name, "", key, "missing") for key in sorted(_FILE_REQUIRED - raw.keys())]
    problems += [Problem(name, "", key, "unknown field") for key in sorted(set(raw) - _FILE_KEYS)]
    tool = raw.get("tool")
    if tool not in TOOLS:
        problems.append(Problem(name, "", "tool", f"{tool!r} is not one of {', '.join(TOOLS)}"))
    elif path.stem != tool:
        problems.append(Problem(name, "", "tool", f"{tool!r} does not match the file name"))
    for key in ("repo", "versions"):
        if key in raw and not (isinstance(raw[key], str) and raw[key].strip()):
            problems.append(Problem(name, "", key, "must be a non-empty string"))
    layouts = _layouts(raw.get("layouts")) or ()
    if "layouts" in raw and not layouts:
        problems.append(Problem(name, "", "layouts", "must be a non-empty list of layout names"))
    defaults = _strings(raw.get("values"))
    if defaults is None:
        problems.append(Problem(name, "", "values", "must map names to scalar values"))
        defaults = {}
    component = TOOLS.get(tool, "") if isinstance(tool, str) else ""
    defaults = {"component": component, **defaults}
    messages = raw.get("messages")
    if "messages" in raw and not (isinstance(messages, list) and messages):
        problems.append(Problem(name, "", "messages", "must be a non-empty list"))
        messages = []
    entries: list[Entry] = []
    seen: set[str] = set()
    for index, item in enumerate(messages or []):
        entry, found = _check_entry(name, item, index, defaults, layouts, str(tool))
        ident = item.get("id") if isinstance(item, dict) else None
        if isinstance(ident, str):
            if ident in seen:
                found.append(Problem(name, ident, "id", "used by an earlier entry"))
            seen.add(ident)
        problems += found
        if entry is not None and not found:
            entries.append(entry)
    if problems:
        return None, problems
    return (
        Inventory(
            tool=str(tool), repo=raw["repo"], versions=raw["versions"], file=path, entries=tuple(entries)
        ),
        [],
    )


def load(root: Path = INVENTORY) -> tuple[list[Inventory], list[Problem]]:
    """Every ``*.yaml`` inventory under ``root`` (``floors.yaml`` excepted), and every problem found."""
    inventories: list[Inventory] = []
    problems: list[Problem] = []
    for path in sorted(root.glob("*.yaml")):
        if path.name == "floors.yaml":
            continue
        inventory, found = check_file(path)
        problems += found
        if inventory is not None:
            inventories.append(inventory)
    return inventories, problems


def instantiate(entry: Entry) -> Iterator[Case]:
    message = entry.message()
    line = Line(message=message, reason=entry.reason, source=entry.source, values=entry.values)
    for layout in entry.layouts:
        yield Case(entry=entry, layout=layout, text=render(layout, line) + "\n")


def cases(inventories: Sequence[Inventory]) -> list[Case]:
    """Every entry of every inventory in each of its layouts, in file and entry order."""
    return [case for inventory in inventories for entry in inventory.entries for case in instantiate(entry)]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--inventory", type=Path, default=INVENTORY, help="folder of <tool>.yaml files")
    parser.add_argument("--out", type=Path, help="write each case to OUT/<tool>/<id>.<layout>.txt")
    parser.add_argument("--show", help="print the cases of one entry (tool/id)")
    args = parser.parse_args(argv)
    inventories, problems = load(args.inventory)
    for problem in problems:
        print(f"inventory: {problem}", file=sys.stderr)
    every = cases(inventories)
    if args.show:
        for case in every:
            if case.entry.key == args.show:
                print(f"--- {case.key} (cause {case.entry.cause})\n{case.text}")
        return 0
    if args.out:
        for case in every:
            folder = args.out / case.entry.tool
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{case.entry.id}.{case.layout}.txt").write_text(case.text, encoding="utf-8")
    for inventory in inventories:
        count = sum(1 for case in every if case.entry.tool == inventory.tool)
        print(f"{inventory.tool}: {len(inventory.entries)} messages, {count} cases")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
