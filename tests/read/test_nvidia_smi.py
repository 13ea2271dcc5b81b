"""The nvidia-smi reader: the facts each layout gives, and its behaviour on cut, garbled and huge text.

The cases are the real outputs of ``tests/read/nvidia-smi/`` (its README says where each comes
from); tests/read/test_reader_cases.py checks which readers claim them, these check what was read.
"""

from __future__ import annotations

import time
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.collect.paste import parse_paste
from bot.read.cleaning import clean
from bot.read.found import MAX_DEMANDS
from bot.read.nvidia_smi import FORMAT, MAX_GPUS
from bot.snapshot.nvidia_smi import SmiOutput

CASES = Path(__file__).resolve().parent / "nvidia-smi"


def _outputs(name: str) -> list[SmiOutput]:
    return parse_paste((CASES / f"{name}.txt").read_text(encoding="utf-8")).nvidia_smi


def test_the_535_table_gives_each_gpu_its_memory_and_the_processes_that_hold_it() -> None:
    (output,) = _outputs("airflow-llamacpp-535-two-rtx3090-with-processes")
    assert (output.layout, output.driver_version, output.cuda_version) == ("table", "535.129.03", "12.2")
    assert output.gpu_count == 2
    assert [g.name for g in output.gpus] == ["NVIDIA GeForce RTX 3090"] * 2
    assert [(g.memory_used_mib, g.memory_total_mib) for g in output.gpus] == [(513, 24576), (12, 24576)]
    assert [g.bus_id for g in output.gpus] == ["00000000:01:00.0", "00000000:02:00.0"]
    assert output.processes_listed
    assert [(p.gpu, p.pid, p.kind) for p in output.processes][-1] == (1, 3494, "G")
    assert sum(p.memory_mib or 0 for p in output.processes if p.gpu == 0) == 152 + 144 + 141 + 57
    assert output.gpus[0].line.startswith("|   0  NVIDIA GeForce RTX 3090")


def test_two_tables_one_below_the_other_are_two_outputs() -> None:
    first, second = _outputs("cs259-515-and-530-tables-titan-v-rtx3070")
    assert (first.driver_version, first.gpus[0].name, first.processes) == ("515.65.01", "NVIDIA TITAN V", [])
    assert first.processes_listed  # "No running processes found": listed, and none
    assert (second.driver_version, second.gpus[0].memory_used_mib) == ("531.68", 1029)
    assert [(p.name, p.memory_mib) for p in second.processes] == [("/Xwayland", None)]


def test_the_390_table_prints_no_cuda_version_and_the_old_processes_columns() -> None:
    (output,) = _outputs("k8s-device-plugin-788-390-table-no-cuda-old-processes")
    assert (output.driver_version, output.cuda_version) == ("390.157", None)
    assert output.gpus[0].name == "Tesla V100-SXM2..."  # cut by nvidia-smi itself
    assert output.gpus[0].memory_total_mib == 32510


def test_the_580_table_lists_a_compute_process() -> None:
    (output,) = _outputs("recorded-h200-580-table-python-process")
    assert [(g.name, g.memory_used_mib, g.utilization_percent) for g in output.gpus] == [
        ("NVIDIA H200", 1551, 2)
    ]
    assert [(p.pid, p.kind, p.name, p.memory_mib) for p in output.processes] == [(502, "C", "python3", 1542)]


def test_a_table_cut_before_its_processes_box_gives_only_a_lower_bound() -> None:
    whole = (CASES / "airflow-llamacpp-535-two-rtx3090-with-processes.txt").read_text().splitlines()
    (cut,) = parse_paste("\n".join(whole[:13])).nvidia_smi  # up to the rule below GPU 0
    assert (cut.gpu_count, cut.complete) == (1, False)
    (header_only,) = parse_paste("\n".join(whole[:5])).nvidia_smi
    assert header_only.gpu_count is None  # no GPU row at all: not "no GPU"
    (full,) = parse_paste("\n".join(whole)).nvidia_smi
    assert (full.gpu_count, full.complete) == (2, True)


def test_the_list_counts_gpus_and_their_mig_devices() -> None:
    (output,) = _outputs("telegraf-5812-list-a100-with-mig-devices")
    assert output.layout == "list"
    assert output.gpu_count == 4
    assert [g.mig_devices for g in output.gpus] == [4, 0, 0, 0]
    assert output.gpus[0].uuid == "GPU-513536b6-7d19-9063-b049-1e69664bb298"
    assert not output.processes_listed


def test_csv_queries_read_gpus_or_processes_by_their_header() -> None:
    (gpus,) = _outputs("recorded-h200-580-query-gpu-csv")
    assert (gpus.layout, gpus.gpu_count) == ("query", 1)
    assert (gpus.gpus[0].name, gpus.gpus[0].memory_total_mib, gpus.gpus[0].bus_id) == (
        "NVIDIA H200",
        143771,
        "00000000:00:06.0",
    )
    (apps,) = _outputs("recorded-h200-580-query-compute-apps-csv")
    assert apps.gpu_count is None  # a query of processes says nothing of how many GPUs there are
    assert [(p.pid, p.name, p.memory_mib) for p in apps.processes] == [(502, "python3", 1542)]


def test_a_failure_is_an_output_without_a_count_and_its_line_stays_a_message() -> None:
    snapshot = parse_paste((CASES / "shine-cluster-30-nvml-driver-library-mismatch.txt").read_text())
    (output,) = snapshot.nvidia_smi
    assert (output.layout, output.gpu_count) == ("failure", None)
    assert output.failure == "Failed to initialize NVML: Driver/library version mismatch"
    assert output.failure in [t.text for t in snapshot.texts]  # the GPU-driver rules read it


def test_output_printed_by_a_ray_task_is_read_through_its_prefix() -> None:
    table = (CASES / "recorded-h200-580-table-python-process.txt").read_text().splitlines()
    prefixed = "\n".join(f"(probe pid=4242, ip=10.0.0.7) {line}" for line in table)
    (output,) = parse_paste(prefixed).nvidia_smi
    assert [(g.name, g.memory_total_mib) for g in output.gpus] == [("NVIDIA H200", 143771)]


_SAMPLES = [path.read_text(encoding="utf-8") for path in sorted(CASES.glob("*.txt"))]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sample=st.sampled_from(_SAMPLES),
    start=st.integers(0, 3000),
    stop=st.integers(0, 3000),
    junk=st.text(alphabet="|+-=: 0123456789MiB%/.,()GPUNAxz\n\t", max_size=40),
    at=st.integers(0, 3000),
)
def test_cut_and_garbled_output_never_raises(sample: str, start: int, stop: int, junk: str, at: int) -> None:
    text = sample[min(start, len(sample)) : max(start, len(sample) - stop)]
    text = text[:at] + junk + text[at:]
    snapshot = parse_paste(text)
    assert not [note for note in snapshot.notes if "parser error" in note]
    cleaned = "\n".join(clean(text).lines)  # tabs expanded, as every reader sees the paste
    for output in snapshot.nvidia_smi:
        assert output.gpu_count is None or output.gpu_count >= 0
        assert all(g.line in cleaned for g in output.gpus)  # a quote is always from the input


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=500))
def test_arbitrary_text_never_raises(text: str) -> None:
    snapshot = parse_paste(text)
    assert not [note for note in snapshot.notes if "parser error" in note]


def test_a_5_mb_paste_stays_bounded() -> None:
    table = (CASES / "airflow-llamacpp-535-two-rtx3090-with-processes.txt").read_text()
    listing = (CASES / "telegraf-5812-list-a100-with-mig-devices.txt").read_text()
    rows = "\n".join(f"GPU {n}: NVIDIA A100-SXM4-80GB (UUID: GPU-{n:08x})" for n in range(1000))
    text = "\n".join([table, listing, rows] * 1 + [table] * 2500)
    assert len(text) > 5_000_000
    started = time.perf_counter()
    snapshot = parse_paste(text)
    elapsed = time.perf_counter() - started
    assert FORMAT.label in snapshot.notes
    assert len(snapshot.nvidia_smi) <= MAX_DEMANDS
    assert all(len(output.gpus) <= MAX_GPUS for output in snapshot.nvidia_smi)
    assert elapsed < 30, f"{elapsed:.1f}s for a 5 MB paste"
