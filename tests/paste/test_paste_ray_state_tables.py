"""Ray's state API output and Python printouts, recorded from real clusters by tools/record_corpus.py."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.classify import classify
from bot.collect.paste import parse_paste
from bot.read.ray_state_tables import PRINTOUT_FORMAT, STATE_FORMAT
from bot.snapshot.ray import RayState

RECORDED = Path(__file__).resolve().parents[1] / "corpus" / "recorded"


def _ray(name: str) -> RayState:
    snapshot = parse_paste((RECORDED / name).read_text(encoding="utf-8"))
    assert snapshot.ray is not None
    return snapshot.ray


def _first_cause(name: str) -> int | None:
    diagnosis = classify(parse_paste((RECORDED / name).read_text(encoding="utf-8")))
    assert diagnosis.findings, f"{name}: nothing found"
    return diagnosis.findings[0].cause


def test_list_nodes_table_gives_each_node_its_totals_from_multi_line_cells() -> None:
    ray = _ray("v1-held-a100-status-and-list-nodes.txt")
    by_ip = {node.node_ip: node for node in ray.nodes}
    assert set(by_ip) == {"127.0.0.2", "127.0.0.3", "127.0.0.4"}
    a100 = by_ip["127.0.0.3"].resources_total
    assert a100["GPU"] == 1.0 and a100["accelerator_type:A100"] == 1.0
    assert 22 * 2**30 < a100["memory"] < 23 * 2**30  # "memory: 22.719 GiB", humanised by the CLI
    assert by_ip["127.0.0.2"].is_head and not by_ip["127.0.0.4"].is_head


def test_actor_table_with_detail_columns_reads_required_resources() -> None:
    ray = _ray("v1-held-gpus-status-and-list-actors-table.txt")
    alive = [a for a in ray.actors if a.state == "ALIVE"]
    assert {a.name for a in alive} == {"gpu-holder-0", "gpu-holder-1"}
    assert all(a.required_resources == {"CPU": 1.0, "GPU": 1.0} and not a.detached for a in alive)


def test_actor_yaml_reads_detached_flag_and_pending_actor_becomes_a_listed_demand() -> None:
    ray = _ray("v1-detached-leftover-status-and-list-actors-detail.txt")
    leftover = next(a for a in ray.actors if a.name == "leftover-trainer")
    assert leftover.state == "ALIVE" and leftover.detached
    assert leftover.required_resources["accelerator_type:A100"] == 1.0


def test_pending_task_rows_become_demands_with_a_verbatim_quote() -> None:
    ray = _ray("v1-held-gpus-status-and-list-tasks.txt")
    listed = [d for d in ray.demands if d.listed]
    assert [(d.kind, d.shape, d.name) for d in listed] == [("task", {"GPU": 1.0, "CPU": 1.0}, "eval-step")]
    text = (RECORDED / "v1-held-gpus-status-and-list-tasks.txt").read_text(encoding="utf-8")
    assert listed[0].source_text and listed[0].source_text in text


def test_a_task_inside_a_group_is_read_by_its_base_resources() -> None:
    ray = _ray("v1-pg-captured-status-and-list-tasks.txt")
    task = next(d for d in ray.demands if d.listed)
    assert task.shape == {"CPU": 1.0, "GPU": 1.0} and task.in_placement_group


def test_placement_group_listing_separates_holders_from_infeasible_demands() -> None:
    held = _ray("v1-pg-held-status-and-list-pgs.txt")
    created = [g for g in held.placement_groups if g.state == "CREATED"]
    assert [(g.name, g.bundles) for g in created] == [
        ("idle-pg", [{"GPU": 1.0, "CPU": 0.5}, {"GPU": 1.0, "CPU": 0.5}])
    ]
    pending = _ray("v1-strict-pack-status-and-list-pgs.txt")
    group = next(d for d in pending.demands if d.listed)
    assert group.kind == "placement_group" and group.infeasible and group.bundles == [{"CPU": 2.0}] * 2


def test_python_printouts_give_nodes_actors_and_cluster_wide_free_resources() -> None:
    ray = _ray("v1-held-gpus-status-and-python.txt")
    assert {n.node_ip for n in ray.nodes} == {"127.0.0.2", "127.0.0.3", "127.0.0.4"}
    assert ray.totals["GPU"] == 2.0 and ray.used["GPU"] == 2.0  # available_resources() has no GPU left
    held = _ray("v1-held-a100-status-and-python.txt")
    assert {a.name for a in held.actors if a.state == "ALIVE"} == {"a100-holder"}  # ActorState(...) reprs
    waiting = next(d for d in held.demands if d.listed)
    assert waiting.kind == "actor" and waiting.source_text == "name='a100-waiter'"


def test_formats_are_named_and_summaries_swallow_their_table() -> None:
    snapshot = parse_paste((RECORDED / "v1-gpu2-task-status-and-summary-tasks.txt").read_text())
    assert STATE_FORMAT.label in snapshot.notes and "log or error messages" not in snapshot.notes
    printout = parse_paste((RECORDED / "v1-held-gpus-status-and-python.txt").read_text())
    assert PRINTOUT_FORMAT.label in printout.notes


def test_usage_reserved_in_placement_groups_is_not_free_to_other_work() -> None:
    ray = _ray("v1-pg-held-ray-status.txt")
    assert ray.used["GPU"] == 0.0 and ray.reserved["GPU"] == 2.0 and ray.reserved_used["GPU"] == 0.0
    assert ray.accelerator_types_hidden
    assert _first_cause("v1-pg-held-ray-status.txt") == 5
    assert _first_cause("v1-pg-held-ray-status-v.txt") == 5


def test_work_inside_a_full_group_is_held_by_the_group() -> None:
    diagnosis = classify(parse_paste((RECORDED / "v1-pg-captured-ray-status.txt").read_text()))
    assert diagnosis.findings[0].rule == "ray-placement-group-full"


def test_listed_holders_settle_an_accelerator_type_that_plain_status_hides() -> None:
    # Plain status alone cannot tell a missing A100 from a busy one; the actor listing can.
    plain = classify(parse_paste((RECORDED / "v1-held-a100-ray-status.txt").read_text()))
    assert plain.findings[0].rule == "ray-gpu-type-unconfirmed"
    assert _first_cause("v1-held-a100-status-and-list-actors-detail.txt") == 5
    assert _first_cause("v1-held-a100-status-and-list-nodes.txt") == 5
    assert _first_cause("v1-h100-status-and-list-nodes.txt") == 7


def test_a_bare_resource_dict_without_a_label_is_not_guessed() -> None:
    snapshot = parse_paste("{'CPU': 6.0, 'GPU': 2.0, 'memory': 73171746048.0}")
    assert snapshot.ray is None or not snapshot.ray.totals


def test_a_task_listing_alone_is_not_judged() -> None:
    text = (RECORDED / "v1-held-gpus-status-and-list-tasks.txt").read_text(encoding="utf-8")
    listing = text[text.index("$ ray list tasks") :]
    diagnosis = classify(parse_paste(listing))
    assert not [f for f in diagnosis.findings if f.cause is not None]


_SAMPLES = sorted(RECORDED.glob("*-status-and-*.txt"))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(_SAMPLES), st.integers(min_value=0, max_value=20_000), st.integers(0, 40))
def test_cut_or_shifted_state_outputs_never_break_the_snapshot(path: Path, cut: int, shift: int) -> None:
    text = path.read_text(encoding="utf-8")[:cut]
    shifted = "\n".join(" " * (shift % 3) + line for line in text.splitlines())
    for sample in (text, shifted):
        snapshot = parse_paste(sample)
        classify(snapshot)
