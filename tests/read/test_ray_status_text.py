"""The one ``ray status`` reader, on text Ray printed: recorded clusters and pastes from threads."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.classify import classify
from bot.classify.context import Context
from bot.collect.paste import parse_paste
from bot.read.autoscaler_text import infeasible_requests
from bot.read.quantity import parse_byte_size
from bot.read.ray_json import ray_state
from bot.read.ray_notation import fold_resources, is_synthetic_node_type
from bot.read.ray_status_text import RayStatusText, find_demands, parse_status_text
from bot.snapshot.ray import Demand, RayState
from tests.support.corpus import CORPUS

GIB = 2**30
MIB = 2**20
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ray"
RECORDED = CORPUS / "recorded"


def dashboard_text(scenario: str) -> str:
    raw = json.loads((FIXTURES / scenario / "cluster_status_formatted.json").read_text())
    return str(raw["data"]["clusterStatus"])


def recorded(name: str) -> str:
    return (RECORDED / name).read_text(encoding="utf-8")


def thread(path: str) -> str:
    return (CORPUS / path).read_text(encoding="utf-8")


def read(text: str) -> RayStatusText:
    return parse_status_text(text.splitlines())


def demand_facts(demands: list[Demand]) -> list[tuple[object, ...]]:
    return [(d.kind, d.shape, d.bundles, d.strategy, d.count, d.source_text) for d in demands]


# --- units: what Ray means by its suffixes -------------------------------------------------------


def test_binary_suffixes_are_powers_of_1024_and_decimal_ones_powers_of_1000() -> None:
    assert parse_byte_size("1.50", "GiB") == 1.5 * GIB
    assert parse_byte_size("381.47", "MiB") == round(381.47 * MIB)
    assert parse_byte_size("214.59", "KiB") == round(214.59 * 1024)
    assert parse_byte_size("2.00", "GB") == 2_000_000_000
    assert parse_byte_size("0", "B") == 0.0
    assert parse_byte_size("2", "XB") is None


def test_memory_lines_of_every_layout_are_read_in_bytes() -> None:
    # Ray 2.x formats memory with format_memory (binary units, two decimals) ...
    live = read(dashboard_text("broken"))
    assert live.totals["memory"] == round(89.22 * GIB)
    assert live.used["object_store_memory"] == round(214.59 * 1024)
    assert live.totals["object_store_memory"] == round(381.47 * MIB)
    # ... and Ray 1.x as "0.00/30.544 GiB", one unit after both numbers.
    old = read(thread("found-ray-resources-2/modin-5245-tune-trials-reserve-cpus-modin-tasks-pending.txt"))
    assert old.totals["memory"] == round(30.544 * GIB) and old.used["memory"] == 0.0


def test_a_float_repr_in_the_usage_is_still_a_number() -> None:
    status = read(dashboard_text("healthy"))  # " 0.5999999999999996/7.0 CPU"
    assert status.used["CPU"] == pytest.approx(0.6) and status.totals["CPU"] == 7.0


# --- one reader for both paths -------------------------------------------------------------------


@pytest.mark.parametrize("scenario", ["broken", "broken-autoscaler-v2", "healthy"])
def test_a_pasted_status_and_the_dashboards_text_give_the_same_figures(scenario: str) -> None:
    text = dashboard_text(scenario)
    pasted = parse_paste(text).ray
    live = ray_state({"cluster_status_formatted": {"data": {"clusterStatus": text}}})

    assert pasted is not None
    assert pasted.totals == live.totals and pasted.used == live.used
    assert demand_facts(pasted.demands) == demand_facts(live.demands)
    assert pasted.node_groups == live.node_groups
    assert pasted.pending_nodes == live.pending_nodes
    assert pasted.recent_failures == live.recent_failures
    assert pasted.node_count == live.node_count == 4


def test_a_placement_group_demand_asks_the_sum_of_its_bundles_whichever_way_it_was_read() -> None:
    text = dashboard_text("broken-autoscaler-v2")
    structured = {
        "load_metrics_report": {"pg_demand": [[{"strategy": "PACK", "bundles": [[{"GPU": 1.0}, 2]]}, 1]]}
    }
    readings = [
        parse_paste(text).ray,
        ray_state({"cluster_status_formatted": {"data": {"clusterStatus": text}}}),
        ray_state({"cluster_status": structured}),
    ]
    shapes = [[d.shape for d in ray.demands if d.kind == "placement_group"] for ray in readings if ray]
    assert shapes == [[{"GPU": 2.0, "CPU": 2.0}], [{"GPU": 2.0, "CPU": 2.0}], [{"GPU": 2.0}]]


# --- sections of every layout --------------------------------------------------------------------


def test_from_request_resources_does_not_stop_the_demands_below_it() -> None:
    status = read(recorded("v1-request-resources-ray-status.txt"))
    [constraint] = status.constraints
    assert constraint.shape == {"GPU": 2.0} and constraint.count == 1
    assert constraint.source_text == "{'GPU': 2}: 1 from request_resources()"
    assert [(d.kind, d.shape) for d in status.demands] == [("task_or_actor", {"CPU": 1.0, "GPU": 2.0})]
    assert status.leftover == []


def test_node_status_counts_nodes_and_keeps_only_named_groups() -> None:
    status = read(recorded("v1-healthy-ray-status.txt"))
    assert status.node_count == 3
    assert status.node_groups == {}  # a plain `ray start` cluster: one node_<id> "type" per node
    assert status.demands == [] and status.recent_failures == [] and status.pending_nodes == []
    assert not status.verbose


def test_plain_status_hides_accelerator_types_and_verbose_shows_them() -> None:
    plain = read(recorded("v1-held-a100-ray-status.txt"))
    verbose = read(recorded("v1-held-a100-ray-status-v.txt"))
    assert "accelerator_type:A100" not in plain.totals
    assert verbose.totals["accelerator_type:A100"] == 1.0 and verbose.used["accelerator_type:A100"] == 1.0
    (a100,) = [n for n in verbose.nodes if "accelerator_type:A100" in n.resources_total]
    assert a100.resources_available is not None
    assert a100.resources_available["GPU"] == 0.0 and a100.resources_available["accelerator_type:A100"] == 0.0


def test_verbose_node_count_comes_from_node_status_not_from_the_blocks() -> None:
    text = recorded("v1-healthy-ray-status-v.txt")
    status = read(text)
    assert status.node_count == 3 and len(status.nodes) == 3
    assert all(n.node_id and n.node_type is None for n in status.nodes)
    # Cut after the first node block: the count is still the cluster's.
    cut = text[: text.index("Node:", text.index("Node:") + 1)]
    assert read(cut).node_count == 3 and len(read(cut).nodes) == 1
    ray = parse_paste(cut).ray
    assert ray is not None and ray.node_count == 3


def test_autoscaler_v2_verbose_blocks_take_their_node_id_from_the_id_line() -> None:
    status = read(recorded("v2-healthy-ray-status-v.txt"))
    assert status.node_count == 3 and len(status.nodes) == 3
    for node in status.nodes:
        assert node.node_id is not None and len(node.node_id) == 56
        assert node.resources_total["CPU"] == 2.0


def test_tasks_inside_placement_groups_and_reserved_usage() -> None:
    status = read(thread("found-ray-resources-2/modin-5245-tune-trials-reserve-cpus-modin-tasks-pending.txt"))
    assert status.used["CPU"] == 3.0 and status.totals["CPU"] == 4.0
    (demand,) = status.demands
    assert demand.shape == {"CPU": 1.0} and demand.count == 16
    assert status.node_count == 1


def test_strict_pack_placement_group_line() -> None:
    (demand,) = read(recorded("v1-strict-pack-ray-status.txt")).demands
    assert demand.kind == "placement_group" and demand.strategy == "STRICT_PACK"
    assert demand.bundles == [{"CPU": 2.0}, {"CPU": 2.0}]
    assert demand.largest_single_request == {"CPU": 4.0}


def test_ray_1_x_without_node_types_lists_node_totals() -> None:
    # Ray 1.x's format_info_string_no_node_types; no Ray that prints it can be installed here.
    line = " 1 node(s) with resources: {'CPU': 4.0, 'GPU': 1.0, 'node:10.0.0.5': 1.0}"
    status = read("\n".join(["======== Cluster status: 2021-01-05 10:00:00 ========", "Node status", line]))
    assert status.node_count == 1
    (node,) = status.nodes
    assert node.node_ip == "10.0.0.5" and node.resources_total["GPU"] == 1.0


def recorded_python(name: str, call: str) -> object:
    """What a recorded ``>>> print(<call>)`` printed, as the Python value it is."""
    lines = recorded(name).splitlines()
    return ast.literal_eval(lines[lines.index(f">>> print({call})") + 1])


def test_placement_group_resources_count_once_under_their_base_resource() -> None:
    # Ray names each bundle's resources twice, CPU_group_<pg> and CPU_group_<index>_<pg>, both
    # carved out of the node's CPU. Ray 1.x printed a node's raw totals in this layout; no Ray that
    # prints it installs here, so the map is the one a recorded cluster holding a placement group
    # gave (ray.cluster_resources()), and its own `ray status` says what the totals are.
    name = "v1-pg-held-status-and-python.txt"
    resources = recorded_python(name, "ray.cluster_resources()")
    assert isinstance(resources, dict)
    assert any("_group_0_" in key for key in resources) and any("bundle_group_" in key for key in resources)
    line = f" 1 node(s) with resources: {resources}"
    (node,) = read(
        "\n".join(["======== Cluster status: 2021-01-05 10:00:00 ========", "Node status", line])
    ).nodes

    printed = read(recorded(name))
    assert printed.totals["CPU"] == 6.0 and printed.totals["GPU"] == 2.0
    assert node.resources_total["CPU"] == printed.totals["CPU"]
    assert node.resources_total["GPU"] == printed.totals["GPU"]
    assert not [key for key in node.resources_total if "_group_" in key]
    assert node.resources_total == fold_resources(resources.items())  # what the JSON readers take


def test_a_demand_of_placement_group_names_is_what_ray_prints_for_it() -> None:
    # The recorded task waits inside a group and asks CPU_group_<pg> and GPU_group_<pg>; Ray's own
    # `ray status` of the same moment prints that demand with the base names.
    text = recorded("v1-pg-captured-status-and-list-tasks.txt")
    asked = text[text.index("required_resources:") : text.index("runtime_env_info:")].splitlines()[1:]
    rows = (row.partition(":") for row in asked if row.strip())
    required = {key.strip(): float(value) for key, _, value in rows}
    assert any(key.startswith("CPU_group_") for key in required)
    (printed,) = read(text).demands
    assert printed.in_placement_group and printed.shape == {"CPU": 1.0, "GPU": 1.0}

    (demand,) = find_demands(f"{required}: 1+ pending tasks/actors (1+ using placement groups)")
    assert demand.shape == printed.shape
    # A task pinned to bundle 0 asks the indexed name too, with the same amount: still one CPU.
    pg = next(key for key in required if key.startswith("CPU_group_")).removeprefix("CPU_group_")
    (pinned,) = find_demands(f"{{'CPU_group_0_{pg}': 1.0, 'CPU_group_{pg}': 1.0}}: 1+ pending tasks/actors")
    assert pinned.shape == {"CPU": 1.0}


def test_node_types_named_after_their_node_are_not_worker_groups() -> None:
    # Without node types in a cluster config, both autoscalers name each node's type node_<node id>.
    status = read(recorded("v2-healthy-ray-status-v.txt"))
    text = recorded("v2-healthy-ray-status-v.txt")
    for node in status.nodes:
        assert node.node_id is not None and f"(node_{node.node_id})" in text
        assert is_synthetic_node_type(f"node_{node.node_id}") and node.node_type is None
    assert status.node_groups == {}
    assert not is_synthetic_node_type("gpu_workers") and not is_synthetic_node_type("node_pool_a")


# --- robustness ----------------------------------------------------------------------------------


def test_a_line_it_does_not_understand_costs_only_that_line() -> None:
    text = dashboard_text("broken")
    marker = " {'CPU': 1.0, 'GPU': 4.0}"
    broken = text.replace(marker, " ~~ something pasted in the middle ~~\n" + marker)
    whole, spoiled = read(text), read(broken)
    assert demand_facts(spoiled.demands) == demand_facts(whole.demands)
    assert spoiled.totals == whole.totals
    assert spoiled.leftover == [" ~~ something pasted in the middle ~~"]


def test_a_status_run_onto_one_line_is_cut_back_into_its_lines() -> None:
    text = recorded("v1-request-resources-ray-status.txt")
    flat = "Ray status output shows no issues: " + " ".join(text.split())
    whole, flattened = read(text), read(flat)
    assert flattened.node_count == whole.node_count == 3
    assert flattened.totals == whole.totals and flattened.used == whole.used
    assert [(d.kind, d.shape, d.count) for d in flattened.demands] == [
        (d.kind, d.shape, d.count) for d in whole.demands
    ]
    assert [c.shape for c in flattened.constraints] == [c.shape for c in whole.constraints] == [{"GPU": 2.0}]
    ray = parse_paste(flat).ray
    assert ray is not None and len(ray.demands) == 1 and len(ray.constraints) == 1


@pytest.mark.parametrize("prefix", ["0: ", "> ", "(head) "])
def test_a_prefix_on_every_line_is_taken_off(prefix: str) -> None:
    text = recorded("v1-gpu2-task-ray-status.txt")
    prefixed = "\n".join(prefix + line for line in text.splitlines())
    whole = read(text)
    assert read(prefixed).demands == whole.demands and read(prefixed).totals == whole.totals
    ray = parse_paste(prefixed).ray
    assert ray is not None and ray.node_count == 3 and ray.totals == whole.totals


def test_every_recorded_status_is_read_without_leftovers() -> None:
    files = sorted(RECORDED.glob("*-ray-status*.txt"))
    assert len(files) >= 12
    for path in files:
        status = read(path.read_text(encoding="utf-8"))
        assert status.leftover == [], path.name
        assert status.node_count == 3, path.name
        assert status.verbose == path.name.endswith("-v.txt"), path.name


@given(st.lists(st.text(max_size=60), max_size=30))
def test_any_lines_give_a_status(lines: list[str]) -> None:
    assert isinstance(parse_status_text(lines), RayStatusText)


def test_parse_status_text_is_what_the_live_path_uses() -> None:
    state = ray_state({"cluster_status_formatted": dashboard_text("broken")})
    assert isinstance(state, RayState) and len(state.demands) == len(read(dashboard_text("broken")).demands)


def test_a_markdown_quote_with_bare_quote_lines_is_one_block() -> None:
    text = recorded("v1-gpu2-task-ray-status.txt")
    quoted = "\n".join(f"> {line}" if line.strip() else ">" for line in text.splitlines())
    ray = parse_paste(quoted).ray
    assert ray is not None and ray.node_count == 3 and len(ray.demands) == 1


# --- figures the layouts make easy to misread (format cases of tests/read/ray-status/) -------------

CASES = Path(__file__).resolve().parent / "ray-status"


def case(name: str) -> str:
    return (CASES / name).read_text(encoding="utf-8")


def test_nodes_counted_beyond_the_printed_blocks_stay_the_clusters_count() -> None:
    # Ray's own v1 output quoted in ray-project/ray#36894: 22 healthy nodes, one `Node:` block.
    text = case("v1-22-healthy-one-node-block-ray-status-v.txt")
    status = read(text)
    assert status.node_count == 22 and len(status.nodes) == 1
    assert status.node_groups == {"p3.2xlarge": 2, "m4.4xlarge": 20}
    snapshot = parse_paste(text)
    ray = snapshot.ray
    assert ray is not None and ray.node_count == 22 and len(ray.nodes) == 1
    assert not ray.nodes_complete
    ctx = Context(snapshot)
    # The one block is a sample: nothing is judged node by node, the counts and totals speak.
    assert ctx.ray_node_count == (22, 21) and not ctx.ray_nodes_known and ctx.ray_nodes == []
    assert ctx.ray_gpus_registered == 2.0
    diagnosis = classify(snapshot)
    assert diagnosis.figures["ray_nodes_alive"] == "22"
    assert diagnosis.figures["gpus_registered_in_ray"] == "2"
    assert diagnosis.capacity.ray_nodes_alive == 22


def test_a_status_cut_inside_its_node_blocks_is_judged_as_the_whole_one() -> None:
    text = recorded("v1-request-resources-ray-status-v.txt")
    cut = text[: text.index("Node:", text.index("Node:") + 1)]  # only the CPU-only head's block
    whole, part = classify(parse_paste(text)), classify(parse_paste(cut))
    assert part.figures == whole.figures
    assert part.figures["ray_nodes_alive"] == "3" and part.figures["gpus_registered_in_ray"] == "2"
    assert [(f.rule, f.cause) for f in part.findings] == [(f.rule, f.cause) for f in whole.findings]


@pytest.mark.parametrize("autoscaler", ["v1", "v2"])
@pytest.mark.parametrize("verbose", ["", "-v"])
def test_request_resources_bundles_are_constraints_not_demands(autoscaler: str, verbose: str) -> None:
    text = case(f"{autoscaler}-request-resources-gpu1x4-ray-status{verbose}.txt")
    status = read(text)
    assert [(c.shape, c.count) for c in status.constraints] == [({"GPU": 1.0}, 4)]
    assert status.demands == [] and status.leftover == [] and status.node_count == 3
    snapshot = parse_paste(text)
    assert snapshot.ray is not None and snapshot.ray.demands == []
    assert [c.count for c in snapshot.ray.constraints] == [4]
    # Four one-GPU bundles on a two-GPU cluster that cannot grow: a floor asked for, no work waiting.
    diagnosis = classify(snapshot)
    assert diagnosis.findings == [] and "ray_pending_demands" not in diagnosis.figures
    live = ray_state({"cluster_status_formatted": {"data": {"clusterStatus": text}}})
    assert live.demands == [] and [c.shape for c in live.constraints] == [{"GPU": 1.0}]


@pytest.mark.parametrize("title", ["Constraints:", "Total Constraints:", "From request_resources:"])
def test_every_title_of_the_constraint_section_keeps_constraints_apart(title: str) -> None:
    text = recorded("v1-request-resources-ray-status.txt").replace("From request_resources:", title)
    status = read(text)
    assert [(c.shape, c.count) for c in status.constraints] == [({"GPU": 2.0}, 1)]
    assert [d.shape for d in status.demands] == [{"CPU": 1.0, "GPU": 2.0}]
    assert status.leftover == []


def test_a_constraint_printed_among_the_demands_of_older_releases_is_still_a_constraint() -> None:
    status = read(case("v1-22-healthy-one-node-block-ray-status-v.txt"))
    assert [(c.shape, c.count) for c in status.constraints] == [({"CPU": 16.0}, 100)]
    assert [d.kind for d in status.demands] == ["task_or_actor", "placement_group"]
    assert find_demands(" {'CPU': 16}: 100+ from request_resources()") == []


@pytest.mark.parametrize("autoscaler", ["v1", "v2"])
def test_a_status_without_any_node_reads_as_zero_nodes_and_zero_gpus(autoscaler: str) -> None:
    text = case(f"{autoscaler}-no-nodes-ray-status-v.txt")
    status = read(text)
    assert status.node_count == 0 and status.recognised
    assert status.totals == {} and status.nodes == [] and status.leftover == []
    snapshot = parse_paste(text)
    assert snapshot.ray is not None and snapshot.ray.node_count == 0
    ctx = Context(snapshot)
    assert ctx.ray_node_count == (0, 0) and ctx.ray_gpus_registered == 0.0
    diagnosis = classify(snapshot)
    assert diagnosis.figures["ray_nodes_alive"] == "0" and diagnosis.figures["gpus_registered_in_ray"] == "0"
    assert diagnosis.capacity.ray_nodes_alive == 0
    live = ray_state({"cluster_status_formatted": {"data": {"clusterStatus": text}}})
    assert live.node_count == 0 and live.totals == {}


def test_no_active_nodes_then_idle_ones_count_the_idle_ones() -> None:
    # Autoscaler v2 lists a node that runs nothing under `Idle:`, after `Active: (no active nodes)`.
    status = read(case("v2-request-resources-gpu1x4-ray-status.txt"))
    assert status.node_count == 3


def test_no_cluster_status_is_not_a_status_of_zero_nodes() -> None:
    # What `ray status` prints before the autoscaler reported anything (commands.py debug_status).
    status = read("No cluster status. It may take a few seconds for the Ray internal services to start up.")
    assert status.node_count is None and not status.recognised


LOOSE = Path(__file__).resolve().parent / "loose-lines"


def test_autoscaler_v2_saying_a_constraint_fits_no_node_type_is_still_no_demand() -> None:
    # The driver of the recorded v2 cluster: v2 echoes `... cluster constraint: {'GPU': 1.0}*4`.
    text = (LOOSE / "v2-request-resources-gpu1x4-driver-output.txt").read_text(encoding="utf-8")
    snapshot = parse_paste(text)
    ray = snapshot.ray
    assert ray is not None and ray.demands == []
    assert [(c.shape, c.count, c.infeasible) for c in ray.constraints] == [({"GPU": 1.0}, 4, True)]
    assert not any(f.cause == 6 for f in classify(snapshot).findings if f.severity != "info")
    # On the live path the same event marks the status's constraint, and no task of its shape.
    line = next(line for line in text.splitlines() if "cluster constraint" in line)
    message = line[line.index("No available") :]  # the event's message: the line without its prefix
    assert infeasible_requests(message).constraint
    status = case("v2-request-resources-gpu1x4-ray-status.txt")
    live = ray_state(
        {
            "cluster_status_formatted": {"data": {"clusterStatus": status}},
            "cluster_events": [{"message": message, "source_type": "AUTOSCALER"}],
        }
    )
    assert [(c.shape, c.infeasible) for c in live.constraints] == [({"GPU": 1.0}, True)]
    assert live.demands == []
