"""``ray.cluster_resources()`` / ``ray.available_resources()`` as people print them: whole dicts
after a label, and single figures under labels of their own (``bot/read/ray_resource_figures.py``)."""

from __future__ import annotations

from pathlib import Path

from bot.collect.paste import parse_paste

READ = Path(__file__).resolve().parent
CORPUS = READ.parent / "corpus"
# Recorded by tools/record_resource_printouts.py: 4 logical GPUs, two one-GPU actors alive.
RECORDED = READ / "ray-state" / "recorded-2-60-labelled-totals-and-available-gpu-actors.txt"
# ray-project/ray#17720: a scheduler printing `Total GPUs:` / `Available GPUs:` beside its trials.
PAUSED_TRIALS = CORPUS / "found-heldout6" / "ray-17720-tune-paused-trials-still-hold-gpus.txt"


def _lines(path: Path, *keep: str) -> str:
    return "\n".join(line for line in path.read_text().splitlines() if line.startswith(keep))


def test_labelled_dicts_are_the_totals_and_what_is_free() -> None:
    ray = parse_paste(_lines(RECORDED, "Cluster resources:", "Available resources:")).ray
    assert ray is not None
    assert ray.totals["GPU"] == 4.0 and ray.totals["CPU"] == 8.0
    assert ray.used["GPU"] == 2.0 and ray.used["CPU"] == 2.0
    assert not any(key.startswith("node:") for key in ray.totals)


def test_single_labelled_figures_say_only_what_they_name() -> None:
    ray = parse_paste(_lines(RECORDED, "Total GPUs:", "Available GPUs:")).ray
    assert ray is not None
    assert ray.totals == {"GPU": 4.0}
    assert ray.used == {"GPU": 2.0}


def test_a_dict_is_told_apart_by_its_own_label_before_the_lines_above() -> None:
    """The figures above name `Available GPUs`; the dict on the next line is the cluster's totals."""
    ray = parse_paste(RECORDED.read_text()).ray
    assert ray is not None
    assert ray.totals["CPU"] == 8.0
    assert ray.used == {"CPU": 2.0, "GPU": 2.0, "object_store_memory": 0.0, "memory": 0.0}


def test_a_figure_typed_as_a_whole_number_is_not_taken_for_rays() -> None:
    """Ray returns floats; `Total GPUs: 4` is a count a person or another tool wrote."""
    assert parse_paste("Total GPUs: 4\nAvailable GPUs: 2\n").ray is None


def test_paused_trials_beside_printed_figures() -> None:
    ray = parse_paste(PAUSED_TRIALS.read_text()).ray
    assert ray is not None and ray.tune is not None
    assert ray.tune.counts == {"TERMINATED": 4, "PAUSED": 2}
    assert (ray.totals, ray.used) == ({"GPU": 4.0}, {"GPU": 2.0})


def test_a_label_about_something_else_is_not_a_figure_of_rays() -> None:
    """`Total CPU time` names the CPU and says total, but it is no resource figure."""
    assert parse_paste("Total CPU time: 12.5\n").ray is None
