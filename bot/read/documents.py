"""Whole documents in a paste: JSON (``kubectl get -o json``, ``ray list --format json``) and YAML.

Both are read tentatively. Text that looks like JSON or YAML is not always an object raydiag reads
(a dict printed by a program, a config file of another tool); such a block is handed back and its
lines are read as loose lines with the lines above them. Where the block is read, a truncated JSON
document or YAML with broken lines is read as far as it can be, and the paste's notes say so.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.read import json_blocks, manifests, ray_state_tables, yaml_blocks
from bot.read.formats import Format, Tag
from bot.read.protocol import Block, Paste, Reader

JSON_FORMAT = Format("kubectl -o json", Tag.K8S_OBJECT_YAML)
YAML_REPAIRED_NOTE = "some YAML lines could not be read and were skipped"
JSON_REPAIRED_NOTE = "a truncated JSON document was read up to where it was cut"


def _read_json(lines: Sequence[str], i: int, paste: Paste) -> Block:
    found = paste.found
    block = json_blocks.read(lines, i)
    if not (
        block.parsed
        and (
            manifests.read_document(block.value, found)
            or ray_state_tables.read_json_records(block.value, found)
        )
    ):
        return Block(block.end, claimed=False)
    found.recognise(JSON_FORMAT)
    if block.repaired:
        found.note(JSON_REPAIRED_NOTE)
    return Block(block.end)


def _starts_yaml(lines: Sequence[str], i: int) -> bool:
    return yaml_blocks.start_kind(lines, i) is not None


def _read_yaml(lines: Sequence[str], i: int, paste: Paste) -> Block:
    end = yaml_blocks.extent(lines, i)
    documents, repaired = yaml_blocks.load(lines[i:end])
    # Every document is read, even after one that was not understood.
    results = [manifests.read_document(document, paste.found) for document in documents]
    if not any(results):
        return Block(end, claimed=False)
    if repaired:
        paste.found.note(YAML_REPAIRED_NOTE)
    return Block(end)


JSON_READER = Reader("json", starts=json_blocks.is_start, read=_read_json, tentative=True)
YAML_READER = Reader("yaml", starts=_starts_yaml, read=_read_yaml, tentative=True)
