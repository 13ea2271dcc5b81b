"""``kubectl get workloads``: Kueue's admission tickets, one row per queued job.

A Kueue Workload's printer columns say whether the job has been let in: ``NAME QUEUE RESERVED IN
ADMITTED FINISHED AGE`` since Kueue 0.5 (RESERVED IN names the ClusterQueue whose quota the
workload holds; ADMITTED is the Admitted condition's status), ``NAME QUEUE ADMITTED BY AGE``
before it (ADMITTED BY names the ClusterQueue that admitted it, empty while it waits). The table
is read by header position, since the cells that matter are the ones left empty, with or without
a NAMESPACE column and with the ``workload.kueue.x-k8s.io/`` prefix of a several-kinds ``kubectl
get``. A row becomes a ``KueueWorkload``; one that is neither admitted nor finished is waiting for
quota, which the catalogue reports as an admission wait, not as a numbered cause.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from bot.read.columns import header_columns, slice_row
from bot.read.formats import Format, Tag
from bot.read.found import Found
from bot.read.kubectl_tables import object_name
from bot.read.protocol import Block, Paste, Reader
from bot.snapshot.kubernetes import KueueWorkload

WORKLOADS_FORMAT = Format("kubectl get workloads (Kueue)", Tag.KUEUE)

_HEADER = re.compile(r"^\s*(?:NAMESPACE\s+)?NAME\s+QUEUE\s+(?:RESERVED IN|ADMITTED BY|ADMITTED)\b")


def is_workloads_start(lines: Sequence[str], i: int) -> bool:
    return bool(_HEADER.match(lines[i]))


def _workload(values: dict[str, str], namespace: str | None) -> KueueWorkload | None:
    name = object_name(values.get("NAME", ""))
    if not name or " " in name:
        return None
    reserved = values.get("RESERVED IN") or values.get("ADMITTED BY") or ""
    admitted_cell = values.get("ADMITTED", "")
    finished = values.get("FINISHED", "") == "True"
    admitted = finished or (admitted_cell == "True" if admitted_cell else bool(reserved))
    if "ADMITTED BY" in values and not admitted_cell:
        admitted = finished or bool(reserved)
    if admitted:
        message = f"admitted by ClusterQueue {reserved}" if reserved else "admitted"
    elif reserved:
        message = f"quota reserved in ClusterQueue {reserved}, not admitted yet (admission checks pending)"
    else:
        message = "no quota reserved in any ClusterQueue: the workload is waiting for admission"
    return KueueWorkload(
        name=name,
        namespace=values.get("NAMESPACE") or namespace or "default",
        queue=values.get("QUEUE") or None,
        admitted=admitted,
        message=message,
    )


def parse_workloads(lines: Sequence[str], start: int, found: Found, namespace: str | None) -> int:
    """Read a workloads table at ``start``; return the index after its last row."""
    columns = header_columns(lines[start])
    i = start + 1
    while i < len(lines) and lines[i].strip():
        values = slice_row(lines[i], columns)
        workload = _workload(values, namespace) if values else None
        if workload is None:
            break
        found.add_object("workloads", workload)
        i += 1
    if i > start + 1:
        found.recognise(WORKLOADS_FORMAT)
    return i


def _read(lines: Sequence[str], i: int, paste: Paste) -> Block:
    return Block(max(i + 1, parse_workloads(lines, i, paste.found, paste.namespace)))


READER = Reader("kubectl-get-workloads", starts=is_workloads_start, read=_read)
