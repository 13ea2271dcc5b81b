"""Splitting a paste into blocks and handing each to the parser that recognises it.

A real paste mixes formats without separators: a ``kubectl get pod`` table, then an event row,
then a manifest, then a ``describe node`` fragment, with shell prompts and markdown around them.
The scanner walks the lines once. At each line it asks the block parsers, most specific first,
whether a block of theirs starts here; the first that says yes reads to the end of its block and
hands back any lines it did not understand. Lines no block claims accumulate in runs of adjacent
lines for the loose-line reader. Every recogniser decides from the current line (and at most a
few after it), so the scan stays linear in the size of the paste.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.collect.paste import (
    cluster_summary,
    json_blocks,
    kubectl_describe,
    kubectl_events,
    kubectl_tables,
    kueue_tables,
    legacy_autoscaler,
    loose_lines,
    manifests,
    ray_state_tables,
    ray_status,
    shell,
    yaml_blocks,
)
from bot.collect.paste.found import Found

MAX_LINES = 100_000

JSON_FORMAT = "kubectl -o json"
YAML_REPAIRED_NOTE = "some YAML lines could not be read and were skipped"
JSON_REPAIRED_NOTE = "a truncated JSON document was read up to where it was cut"


class _Scanner:
    def __init__(self, lines: Sequence[str], found: Found) -> None:
        self.lines = lines
        self.found = found
        self.namespace: str | None = None
        self.run: list[str] = []

    def flush(self) -> None:
        if self.run:
            run, self.run = self.run, []
            try:
                loose_lines.read_run(run, self.found, self.namespace)
            except Exception as error:  # a parser bug must cost one run of lines, not the diagnosis
                self.found.note(f"some lines were skipped after a parser error ({type(error).__name__})")

    def loose(self, lines: Sequence[str]) -> None:
        """Lines a block parser gave back are read as a run of their own."""
        self.flush()
        if lines:
            loose_lines.read_run(lines, self.found, self.namespace)

    def block_at(self, i: int) -> int | None:
        """Read the block starting at line ``i``, if any; return the index after it."""
        lines, found = self.lines, self.found
        command = shell.parse(lines[i])
        if command is not None:
            self.flush()
            if command.tool in {"kubectl", "oc"}:
                self.namespace = None if command.all_namespaces else command.namespace
            if command.keep_as_text:
                loose_lines.read_run([command.text], found, self.namespace)
            return i + 1
        if json_blocks.is_start(lines, i):
            block = json_blocks.read(lines, i)
            if block.parsed and (
                manifests.read_document(block.value, found)
                or ray_state_tables.read_json_records(block.value, found)
            ):
                self.flush()
                found.recognise(JSON_FORMAT)
                if block.repaired:
                    found.note(JSON_REPAIRED_NOTE)
            else:
                self.run.extend(lines[i : block.end])
            return block.end
        if cluster_summary.is_start(lines, i):
            self.flush()
            return cluster_summary.read(lines, i, found)
        if legacy_autoscaler.is_start(lines, i):
            self.flush()
            return legacy_autoscaler.read(lines, i, found)
        if ray_status.is_start(lines, i):
            end = ray_status.extent(lines, i)
            self.flush()
            self.loose(ray_status.parse(lines[i:end], found))
            return end
        if ray_state_tables.is_start(lines, i):
            self.flush()
            return max(i + 1, ray_state_tables.read(lines, i, found))
        if yaml_blocks.start_kind(lines, i) is not None:
            end = yaml_blocks.extent(lines, i)
            documents, repaired = yaml_blocks.load(lines[i:end])
            results = [manifests.read_document(doc, found) for doc in documents]
            if any(results):
                self.flush()
                if repaired:
                    found.note(YAML_REPAIRED_NOTE)
            else:
                self.run.extend(lines[i:end])
            return end
        if kubectl_describe.is_start(lines, i):
            end = kubectl_describe.extent(lines, i)
            self.flush()
            self.loose(kubectl_describe.parse(lines[i:end], found, self.namespace))
            return end
        if kubectl_tables.is_pods_start(lines, i):
            self.flush()
            return max(i + 1, kubectl_tables.parse_pods(lines, i, found, self.namespace))
        if kubectl_events.is_table_start(lines, i):
            self.flush()
            return max(i + 1, kubectl_events.parse_table(lines, i, found, self.namespace))
        if kueue_tables.is_workloads_start(lines, i):
            self.flush()
            return max(i + 1, kueue_tables.parse_workloads(lines, i, found, self.namespace))
        if kubectl_tables.is_ray_resources_start(lines, i):
            self.flush()
            return max(i + 1, kubectl_tables.parse_ray_resources(lines, i, found, self.namespace))
        return None

    def scan(self) -> None:
        i = 0
        count = len(self.lines)
        while i < count:
            if not self.lines[i].strip():
                self.flush()
                i += 1
                continue
            try:
                end = self.block_at(i)
            except Exception as error:  # a parser bug must cost one block, not the diagnosis
                name = type(error).__name__
                self.found.note(f"a block at line {i + 1} was skipped after a parser error ({name})")
                end = None
            if end is None:
                self.run.append(self.lines[i])
                i += 1
            else:
                i = end
        self.flush()


def scan(lines: Sequence[str], found: Found) -> None:
    if len(lines) > MAX_LINES:
        found.note(f"only the first {MAX_LINES:,} lines were read (the paste had {len(lines):,})")
        lines = lines[:MAX_LINES]
    _Scanner(lines, found).scan()
