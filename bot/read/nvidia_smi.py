"""``nvidia-smi`` output, in the layouts people paste: the default table, ``-L``, CSV queries, failures.

The layouts, from NVIDIA's ``nvidia-smi(1)`` page and the outputs of drivers 375 to 610 pasted in
public threads:

* **The default table.** An optional timestamp line, then a box whose header row names the tool's
  version and the driver's (``| NVIDIA-SMI 535.129.03   Driver Version: 535.129.03   CUDA
  Version: 12.2 |``; drivers from 610 print ``KMD Version`` and ``CUDA UMD Version``; drivers
  before 410 print no CUDA version). Below the column headings and a ``|===+===+===|`` rule, each
  GPU takes two rows (three from driver 530, the third for MIG mode): the first has the index,
  the name (cut with ``...`` when long), persistence or Windows driver mode, and the bus id; the
  second has the fan, temperature, power, memory used / total in MiB and the utilisation. A ``MIG
  devices:`` box may follow, then, after a blank line, the ``Processes:`` box: one row per process
  holding a GPU (``GPU GI CI PID Type Process name GPU Memory Usage`` from driver 450; before it
  ``GPU PID Type Process name``), or ``No running processes found``. The column widths changed
  with the drivers; the cells did not, so rows are read by their ``|`` cells, not by columns.
* **``nvidia-smi -L``.** ``GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-…)``, with ``MIG 1g.10gb Device
  0: (UUID: MIG-…)`` lines under a GPU split into MIG devices.
* **``--query-gpu=… --format=csv``.** A header of the fields asked for, with units in brackets
  (``index, name, memory.total [MiB]``), then one row per GPU; ``--query-compute-apps`` prints
  processes the same way. Without its header (``noheader``) a row cannot be told from any other
  comma-separated line, so it is left alone.
* **Failures**, printed instead of any layout: ``NVIDIA-SMI has failed because it couldn't
  communicate with the NVIDIA driver…``, ``Failed to initialize NVML: <reason>`` (with ``NVML
  library version: …`` below it on newer drivers), ``No devices were found``, ``NVIDIA-SMI couldn't
  find libnvidia-ml.so library…``. They are recorded as an output with no GPU count, and handed
  back as message lines: the GPU-driver rules own those lines (``rules/gpu-stack-nvidia-smi-failed``,
  ``rules/ray-gpu-driver-error``).

Each output becomes one :class:`~bot.snapshot.nvidia_smi.SmiOutput`: one machine's view.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import overload

from bot.read.formats import Format, Tag
from bot.read.protocol import Block, Paste, Reader
from bot.snapshot.nvidia_smi import SmiGpu, SmiLayout, SmiOutput, SmiProcess

FORMAT = Format("nvidia-smi", Tag.NVIDIA_SMI)

# A block is read this far at most; a table has about 4 lines per GPU and one per process.
MAX_BLOCK_LINES = 5000
MAX_GPUS = 256
MAX_PROCESSES = 200
_MAX_LINE = 400

_DAYS = "Mon|Tue|Wed|Thu|Fri|Sat|Sun"
_MONTHS = "Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec"
_TIMESTAMP = re.compile(rf"^\s*(?:{_DAYS}) (?:{_MONTHS}) [ \d]?\d \d\d:\d\d:\d\d \d{{4}}\s*$")
_BORDER = re.compile(r"^\s*[+|][-=+|]{10,}[+|]\s*$")
_HEADER = re.compile(
    r"^\s*\|\s*NVIDIA-SMI\s+(?P<smi>[\w.]+)\s+(?:Driver|KMD)\s+Version:\s*(?P<driver>[\w.]+)"
    r"(?:\s+CUDA(?:\s+UMD)?\s+Version:\s*(?P<cuda>[\w./]+))?"
)
# The column headings of the GPU box: a table whose top was cut off starts here.
_HEADINGS = re.compile(r"^\s*\|\s*GPU\s+Name\s+(?:Persistence-M|TCC/WDDM|Driver-Model)")
_BUS_ID = r"[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f]"
_GPU_ROW = re.compile(
    rf"^\s*\|\s*(?P<index>\d{{1,3}})\s+(?P<name>\S.*?)\s+(?:On|Off|WDDM|TCC|MCDM|N/A)\s*\|"
    rf"\s*(?P<bus>{_BUS_ID})\s"
)
_USAGE_ROW = re.compile(
    r"\|\s*(?P<used>\d+)\s*MiB\s*/\s*(?P<total>\d+)\s*MiB\s*\|\s*(?:(?P<util>\d+)\s*%|N/A)"
)
_MIG_HEADING = re.compile(r"^\s*\|\s*MIG devices:")
# A MIG device row: GPU, GI, CI and MIG device ids, then its memory cell.
_MIG_ROW = re.compile(r"^\s*\|\s*(?P<gpu>\d+)\s+(?:\d+|N/A)\s+(?:\d+|N/A)\s+\d+\s*\|")
_PROCESSES_HEADING = re.compile(r"^\s*\|\s*Processes:")
_PROCESS_ROW = re.compile(
    r"^\s*\|\s*(?P<gpu>\d+|N/A)\s+(?:(?:\d+|N/A)\s+(?:\d+|N/A)\s+)?(?P<pid>\d+)\s+"
    r"(?P<kind>C\+G|M\+C|C|G|M)\s+(?P<name>\S.*?)\s+(?P<memory>\d+\s*MiB|N/A)\s*\|"
)
_NO_PROCESSES = re.compile(r"^\s*\|\s*No running processes found")
# The Processes box's column headings, in the layouts before and after driver 450.
_PROCESS_HEADINGS = re.compile(r"Process name|^\s*\|\s*(?:ID\s+ID\s+)?Usage\s*\|\s*$")

_LIST_ROW = re.compile(
    r"^\s*GPU (?P<index>\d{1,3}): (?P<name>.+?) \(UUID: (?P<uuid>GPU-[0-9A-Fa-f-]+)\)?\s*$"
)
_LIST_MIG_ROW = re.compile(r"^\s+MIG\s+\S+\s+Device\s+\d+: \(UUID: MIG-")

_FIELD = re.compile(r"^[a-z][a-z0-9_.]*(?: \[[^\]]{1,12}\])?$")
# Query fields that name a GPU (``nvidia-smi --help-query-gpu``) or a process holding one
# (``--help-query-compute-apps``).
_GPU_FIELDS = frozenset(
    {"index", "name", "gpu_name", "uuid", "gpu_uuid", "pci.bus_id", "gpu_bus_id", "memory.total", "count"}
)
_APP_FIELDS = frozenset({"pid", "process_name", "used_gpu_memory", "used_memory"})

_FAILURE = re.compile(
    r"^\s*(?:NVIDIA-SMI has failed because it couldn.t communicate with the NVIDIA driver"
    r"|Failed to initialize NVML: \S"
    r"|No devices were found\s*$"
    r"|NVIDIA-SMI couldn.t find libnvidia-ml\.so library)",
    re.IGNORECASE,
)
_NVML_VERSION = re.compile(r"^\s*NVML library version: \S+\s*$")


def _number(text: str | None) -> float | None:
    if not text:
        return None
    match = re.match(r"\s*(\d+(?:\.\d+)?)", text)
    return float(match.group(1)) if match else None


def _int(text: str | None) -> int | None:
    return int(text) if text is not None and text.isdigit() else None


def _quoted(line: str) -> str:
    """A row as printed, without the indentation around it: how a finding quotes it."""
    return line.strip()[:_MAX_LINE]


# --- where a block starts -----------------------------------------------------------------------


def _table_starts(lines: Sequence[str], i: int) -> bool:
    line = lines[i]
    if _HEADER.match(line) or _HEADINGS.match(line):
        return True
    ahead = lines[i + 1 : i + 4]
    if _TIMESTAMP.match(line):
        return any(_HEADER.match(next_line) for next_line in ahead)
    if _BORDER.match(line):
        return bool(ahead) and bool(_HEADER.match(ahead[0]) or _HEADINGS.match(ahead[0]))
    return False


def _query_header(line: str) -> list[str] | None:
    if "," not in line or len(line) > _MAX_LINE:
        return None
    fields = [part.strip() for part in line.split(",")]
    if not all(_FIELD.match(name) for name in fields):
        return None
    names = {name.split(" [", 1)[0] for name in fields}
    if not names & (_GPU_FIELDS | _APP_FIELDS):
        return None
    return fields


def _query_starts(lines: Sequence[str], i: int) -> bool:
    fields = _query_header(lines[i])
    if fields is None or i + 1 >= len(lines):
        return False
    return lines[i + 1].count(",") == len(fields) - 1 and _query_header(lines[i + 1]) is None


# What Ray puts before each line a task or actor prints (``(pid=28612) ``, ``(train pid=16253,
# ip=10.0.2.120) ``): nvidia-smi run inside a Ray task comes back to the driver so.
_RAY_WORKER_PREFIX = re.compile(r"^\((?:[\w.:-]+ )?pid=\d+(?:, ip=[\d.]+)?\) ?")


def _unprefixed(line: str) -> str:
    return _RAY_WORKER_PREFIX.sub("", line, count=1) if line.startswith("(") else line


def _view(lines: Sequence[str], i: int, count: int) -> list[str]:
    return [_unprefixed(line) for line in lines[i : i + count]]


class _Unprefixed(Sequence[str]):
    """The paste's lines from ``start`` on, each read without a Ray worker's prefix when asked
    for: a block is read once, so only the lines it looks at are touched."""

    def __init__(self, lines: Sequence[str], start: int) -> None:
        self._lines, self._start = lines, start

    def __len__(self) -> int:
        return len(self._lines) - self._start

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...
    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            return [_unprefixed(self._lines[self._start + k]) for k in range(start, stop, step)]
        if index < 0:
            index += len(self)
        return _unprefixed(self._lines[self._start + index])


def starts(lines: Sequence[str], i: int) -> bool:
    if len(lines[i]) > _MAX_LINE:
        return False
    view = _view(lines, i, 4)
    line = view[0]
    return bool(
        _table_starts(view, 0) or _LIST_ROW.match(line) or _FAILURE.match(line) or _query_starts(view, 0)
    )


# --- reading ------------------------------------------------------------------------------------


@dataclass
class _Gpu:
    index: int | None
    name: str | None
    line: str
    bus_id: str | None = None
    uuid: str | None = None
    used: float | None = None
    total: float | None = None
    util: float | None = None
    mig: int = 0

    def record(self) -> SmiGpu:
        return SmiGpu(
            index=self.index,
            name=self.name,
            line=self.line,
            bus_id=self.bus_id,
            uuid=self.uuid,
            memory_used_mib=self.used,
            memory_total_mib=self.total,
            utilization_percent=self.util,
            mig_devices=self.mig,
        )


@dataclass
class _Output:
    layout: SmiLayout
    quote: str
    gpus: list[_Gpu] = field(default_factory=list)
    processes: list[SmiProcess] = field(default_factory=list)
    processes_listed: bool = False
    driver: str | None = None
    cuda: str | None = None
    failure: str | None = None
    lists_gpus: bool = True
    complete: bool = True

    def add_gpu(self, gpu: _Gpu) -> None:
        if len(self.gpus) < MAX_GPUS:
            self.gpus.append(gpu)

    def add_process(self, process: SmiProcess) -> None:
        if len(self.processes) < MAX_PROCESSES:
            self.processes.append(process)

    def record(self) -> SmiOutput:
        return SmiOutput(
            layout=self.layout,
            quote=self.quote,
            gpus=[gpu.record() for gpu in self.gpus],
            processes=list(self.processes),
            processes_listed=self.processes_listed,
            driver_version=self.driver,
            cuda_version=self.cuda,
            failure=self.failure,
            lists_gpus=self.lists_gpus,
            complete=self.complete,
        )


def _in_table(lines: Sequence[str], k: int) -> bool:
    """Whether line ``k`` still belongs to the table: a boxed row, or blank lines between the GPU
    box and the ``Processes:`` box."""
    stripped = lines[k].strip()
    if stripped.startswith(("|", "+")):
        return True
    if stripped:
        return False
    following = next((lines[j] for j in range(k + 1, min(k + 3, len(lines))) if lines[j].strip()), "")
    return following.strip().startswith(("+", "|"))


def _read_table(lines: Sequence[str], i: int) -> tuple[_Output, int, list[str]]:
    start = i
    leftover: list[str] = []
    if _TIMESTAMP.match(lines[i]):
        i += 1
        while i < len(lines) and not lines[i].strip():
            i += 1
    # The GPU box is whole once something that follows it is seen: the blank line before the
    # Processes box, or the MIG or Processes box itself. A box cut at a rule between two GPUs
    # looks the same as a whole one, so without that its count is a lower bound.
    output = _Output("table", quote="", complete=False)
    section = "gpus"
    end = i
    while end < len(lines) and end - start < MAX_BLOCK_LINES and _in_table(lines, end):
        line = lines[end][: _MAX_LINE * 2]
        end += 1
        if not line.strip():
            output.complete = output.complete or bool(output.gpus)
            continue
        if _BORDER.match(line):
            continue
        if (header := _HEADER.match(line)) and output.quote:
            # A second table right below the first: another run, often another machine.
            end -= 1
            if end - 1 > i and _BORDER.match(lines[end - 1]):
                end -= 1
            break
        if header:
            output.driver, output.cuda = header.group("driver"), header.group("cuda")
            output.quote = _quoted(line)
            section = "gpus"
        elif _MIG_HEADING.match(line):
            section, output.complete = "mig", output.complete or bool(output.gpus)
        elif _PROCESSES_HEADING.match(line):
            section, output.processes_listed = "processes", True
            output.complete = output.complete or bool(output.gpus)
        elif section == "gpus" and (row := _GPU_ROW.match(line)):
            name = row.group("name").strip()
            output.add_gpu(_Gpu(int(row.group("index")), name, _quoted(line), bus_id=row.group("bus")))
        elif section == "gpus" and (usage := _USAGE_ROW.search(line)) and output.gpus:
            gpu = output.gpus[-1]
            if gpu.total is None:
                gpu.used, gpu.total = _number(usage.group("used")), _number(usage.group("total"))
                gpu.util = _number(usage.group("util"))
        elif section == "mig" and (mig := _MIG_ROW.match(line)):
            index = int(mig.group("gpu"))
            owner = next((gpu for gpu in output.gpus if gpu.index == index), None)
            if owner is not None:
                owner.mig += 1
        elif section == "processes" and (process := _PROCESS_ROW.match(line)):
            output.add_process(
                SmiProcess(
                    gpu=_int(process.group("gpu")),
                    name=process.group("name").strip(),
                    pid=_int(process.group("pid")),
                    kind=process.group("kind"),
                    memory_mib=_number(process.group("memory")),
                )
            )
        elif section != "processes" or _NO_PROCESSES.match(line) or _PROCESS_HEADINGS.search(line):
            continue  # headings, MIG mode rows, the rest of a GPU's cells
        else:
            leftover.append(line)  # a row the table layout does not explain: a message, perhaps
    while end > i and not lines[end - 1].strip():
        end -= 1
    if not output.quote:
        output.quote = output.gpus[0].line if output.gpus else _quoted(lines[i])
    return output, max(end, start + 1), leftover


def _read_list(lines: Sequence[str], i: int) -> tuple[_Output, int]:
    output = _Output("list", quote=lines[i].strip()[:_MAX_LINE])
    end = i
    while end < len(lines) and end - i < MAX_BLOCK_LINES:
        line = lines[end]
        if row := _LIST_ROW.match(line):
            output.add_gpu(
                _Gpu(int(row.group("index")), row.group("name").strip(), line.strip(), uuid=row.group("uuid"))
            )
        elif _LIST_MIG_ROW.match(line) and output.gpus:
            output.gpus[-1].mig += 1
        else:
            break
        end += 1
    return output, end


def _read_query(lines: Sequence[str], i: int) -> tuple[_Output, int]:
    fields = _query_header(lines[i]) or []
    names = [name.split(" [", 1)[0] for name in fields]
    apps = bool(set(names) & _APP_FIELDS) and not {"index", "name", "gpu_name", "count"} & set(names)
    output = _Output("query", quote=lines[i].strip()[:_MAX_LINE], lists_gpus=not apps)
    output.processes_listed = apps
    end = i + 1
    while end < len(lines) and end - i < MAX_BLOCK_LINES:
        line = lines[end]
        if line.count(",") != len(fields) - 1 or not line.strip() or len(line) > _MAX_LINE:
            break
        row = dict(zip(names, (cell.strip() for cell in line.split(",")), strict=True))
        if apps:
            output.add_process(
                SmiProcess(
                    gpu=None,
                    name=row.get("process_name", ""),
                    pid=_int(row.get("pid")),
                    memory_mib=_number(row.get("used_gpu_memory") or row.get("used_memory")),
                )
            )
        else:
            output.add_gpu(
                _Gpu(
                    _int(row.get("index")),
                    row.get("name") or row.get("gpu_name"),
                    line.strip(),
                    bus_id=row.get("pci.bus_id") or row.get("gpu_bus_id"),
                    uuid=row.get("uuid") or row.get("gpu_uuid"),
                    used=_number(row.get("memory.used")),
                    total=_number(row.get("memory.total")),
                    util=_number(row.get("utilization.gpu")),
                )
            )
        end += 1
    return output, end


def _read_failure(lines: Sequence[str], i: int) -> tuple[_Output, int]:
    message = lines[i].strip()[:_MAX_LINE]
    end = i + 1
    if end < len(lines) and _NVML_VERSION.match(lines[end]):
        end += 1
    return _Output("failure", quote=message, failure=message), end


def _read(lines: Sequence[str], i: int, paste: Paste) -> Block:
    offset = i
    lines, i = _Unprefixed(lines, i), 0
    line = lines[i]
    leftover: list[str] = []
    if _table_starts(lines, i):
        output, end, leftover = _read_table(lines, i)
    elif _LIST_ROW.match(line):
        output, end = _read_list(lines, i)
    elif _FAILURE.match(line):
        output, end = _read_failure(lines, i)
        leftover = [text for text in lines[i:end] if text.strip()]  # the GPU-driver rules read them
    else:
        output, end = _read_query(lines, i)
    found = paste.found
    found.recognise(FORMAT)
    # The same failure repeated (a loop that retried nvidia-smi) says it once.
    repeated = output.failure is not None and any(o.failure == output.failure for o in found.nvidia_smi)
    if not repeated and not found.nvidia_smi_full():
        found.add_nvidia_smi(output.record())
    return Block(offset + end, leftover=leftover)


READER = Reader("nvidia-smi", starts=starts, read=_read)
