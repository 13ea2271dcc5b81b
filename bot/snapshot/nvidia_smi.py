"""What ``nvidia-smi`` printed on one machine: its GPUs, their memory, and who holds them.

``nvidia-smi`` reports the hardware the NVIDIA driver sees on the machine (or in the container) it
ran in, not what Kubernetes advertises nor what Ray registered. That difference is the point: a
machine with 8 GPUs in ``nvidia-smi`` whose Ray node registers 0 is cause 4, and a task asking for
16 GPUs where one machine shows 8 is cause 6. So each pasted output is kept whole, as one
:class:`SmiOutput`, with the line it is quoted by, and is never merged with another machine's.

Figures the layout does not print stay ``None`` (``nvidia-smi -L`` prints no memory), distinct
from 0. An output that is only a failure message (``No devices were found``, ``Failed to
initialize NVML: …``) carries the message and no GPUs: it says nothing about how many GPUs there
are. The failure lines themselves stay message lines too, so the GPU-driver rules read them.
"""

from __future__ import annotations

from dataclasses import field
from typing import Literal

from bot.snapshot.base import Record
from bot.snapshot.redact import Redacted

# How the output was asked for: the default table, ``-L``, ``--query-gpu=… --format=csv``, or only
# a failure message (no layout printed).
SmiLayout = Literal["table", "list", "query", "failure"]


class SmiGpu(Record):
    """One GPU as ``nvidia-smi`` shows it; MIG devices listed under it are counted, not split."""

    index: int | None = None
    name: str | None = None
    # The line it was read from, as printed (the evidence a finding quotes).
    line: Redacted = ""
    bus_id: str | None = None
    uuid: str | None = None
    memory_used_mib: float | None = None
    memory_total_mib: float | None = None
    utilization_percent: float | None = None
    mig_devices: int = 0


class SmiProcess(Record):
    """A process holding GPU memory (the ``Processes:`` table): ``kind`` is ``C`` (compute), ``G``
    (graphics) or ``C+G``."""

    gpu: int | None
    name: str
    pid: int | None = None
    kind: str | None = None
    memory_mib: float | None = None


class SmiOutput(Record):
    """One pasted ``nvidia-smi`` output: one machine's view at one moment.

    ``processes_listed`` says whether the output had a ``Processes:`` table at all; without one,
    an empty ``processes`` says nothing about who holds the GPUs.
    """

    layout: SmiLayout
    quote: Redacted
    gpus: list[SmiGpu] = field(default_factory=list)
    processes: list[SmiProcess] = field(default_factory=list)
    processes_listed: bool = False
    driver_version: str | None = None
    cuda_version: str | None = None
    failure: Redacted | None = None
    # False for an output that lists no GPUs by design (``--query-compute-apps``): its empty
    # ``gpus`` is no count.
    lists_gpus: bool = True
    # Whether every GPU of the output is in the paste. A table cut after its first rows (people
    # paste the top of it) lists some GPUs: its count is only a lower bound.
    complete: bool = True

    @property
    def gpu_count(self) -> int | None:
        """How many GPUs the output lists; None when it does not say (only a failure message, a
        query of processes, or a table cut before its first GPU). Where ``complete`` is False,
        the machine has at least this many."""
        if not self.lists_gpus or not self.gpus:
            return None if not self.lists_gpus or self.failure is not None or not self.complete else 0
        return len(self.gpus)
