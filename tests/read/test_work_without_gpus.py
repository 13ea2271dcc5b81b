"""Remote work that CUDA-using code declares without GPUs (``python_code.work_without_gpus``): real
snippets from ray-project/ray#33798 (none asks for a GPU) and #22504 (one function does)."""

from __future__ import annotations

from pathlib import Path

from bot.collect.paste import parse_paste

CASES = Path(__file__).resolve().parents[1] / "cases" / "ray-task-asks-no-gpu"


def test_cuda_code_whose_remote_function_asks_for_no_gpu() -> None:
    text = (CASES / "fires" / "ray-33798-remote-function-without-num-gpus.txt").read_text()
    ray = parse_paste(text).ray
    assert ray is not None
    assert ray.work_without_gpus == ["@ray.remote … def f"]


def test_nothing_is_claimed_when_any_function_asks_for_a_gpu() -> None:
    text = (CASES / "quiet" / "ray-22504-cpu-task-and-gpu-task-code.txt").read_text()
    ray = parse_paste(text).ray
    assert ray is None or ray.work_without_gpus == []


def test_code_that_never_touches_cuda_expects_no_gpu() -> None:
    assert parse_paste("import ray\n@ray.remote\ndef f():\n    return 1\nray.get(f.remote())\n").ray is None
