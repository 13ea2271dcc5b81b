"""Ray 0.x/1.x output: the legacy autoscaler's status lines, the quick-start cluster summary,
``placement_group_table()`` dumps (whole and cut) and the Ray 1.x Helm chart's pod types."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.classify import classify
from bot.collect.paste import parse_paste
from bot.read.cluster_summary import FORMAT as SUMMARY_FORMAT
from bot.read.legacy_autoscaler import FORMAT as LEGACY_FORMAT
from bot.read.node_types import LEGACY_WORKER_TYPE
from bot.read.ray_state_tables import CUT_PRINTOUT_NOTE
from bot.snapshot.ray import RayState

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
RECORDED = Path(__file__).resolve().parent / "ray_recorded"


def _corpus(name: str) -> str:
    return (CORPUS / name).read_text(encoding="utf-8")


def _ray(text: str) -> RayState:
    snapshot = parse_paste(text)
    assert snapshot.ray is not None, snapshot.notes
    return snapshot.ray


# --- the legacy autoscaler (Ray 0.5 monitor.out, from ray-project/ray#2660) ----------------------

MONITOR_OUT = "found-autoscaling/ray-2660-gcp-gpu-worker-config-invalid-autoscaler-pending.txt"


def test_monitor_status_gives_connected_nodes_totals_and_the_pending_launch() -> None:
    snapshot = parse_paste(_corpus(MONITOR_OUT))
    assert LEGACY_FORMAT.label in snapshot.notes
    ray = snapshot.ray
    assert ray is not None
    assert ray.node_count == 1  # NumNodesConnected: the head alone
    assert ray.totals == {"CPU": 2.0, "GPU": 0.0}
    assert ray.used == {"CPU": 0.0, "GPU": 0.0}
    assert ray.pending_nodes == ["0/2 target nodes (2 pending)"]


def test_monitor_status_with_pending_launches_is_cause_9_quoting_the_status_line() -> None:
    diagnosis = classify(parse_paste(_corpus(MONITOR_OUT)))
    first = diagnosis.findings[0]
    assert (first.rule, first.cause, first.severity) == ("ray-autoscaler-launch-pending", 9, "warning")
    assert [e.text for e in first.evidence] == ["0/2 target nodes (2 pending)"]


LOAD_METRICS = "tests/cases/ray-autoscaler-launch-pending/quiet/ray-0.8-target-reached-load-metrics.txt"


def _case(path: str) -> str:
    return (CORPUS.parents[1] / path).read_text(encoding="utf-8")


def test_a_status_line_without_pending_launches_clears_the_earlier_one() -> None:
    # Two real logs in one paste: Ray 0.5's pending launch, then Ray 0.8's status with none pending.
    ray = _ray(_corpus(MONITOR_OUT) + "\n" + _case(LOAD_METRICS))
    assert ray.pending_nodes == []
    assert ray.node_count == 8


def test_load_metrics_line_of_ray_0_8_reads_its_comma_separated_usage() -> None:
    # ``LoadMetrics.info_string()``: sorted ``Key=value`` items joined by ", " (Ray 0.8 monitor.py),
    # as a user pasted it (ray-project/ray, March 2020).
    ray = _ray(_case(LOAD_METRICS))
    assert ray.node_count == 8
    assert ray.totals["CPU"] == 512.0 and ray.totals["GPU"] == 64.0
    assert ray.used["GPU"] == 0.0
    assert not any(name.startswith("node:") for name in ray.totals)
    assert ray.pending_nodes == []


def test_an_autoscaler_error_line_is_left_to_the_message_rules() -> None:
    text = "StandardAutoscaler: Error during autoscaling: Traceback (most recent call last):"
    snapshot = parse_paste(text)
    assert LEGACY_FORMAT.label not in snapshot.notes
    assert [t.text for t in snapshot.texts] == [text]


# --- the quick-start cluster summary (ray-project/ray#20265) ---------------------------------------


def test_cluster_summary_gives_node_count_and_totals() -> None:
    snapshot = parse_paste(_corpus("shared-corpus/ray-20265-k8s-pods-register-host-gpus-40-on-8.txt"))
    assert SUMMARY_FORMAT.label in snapshot.notes
    assert snapshot.ray is not None
    assert snapshot.ray.node_count == 5
    assert snapshot.ray.totals == {"CPU": 5.0, "GPU": 40.0}


def test_a_sentence_that_only_starts_like_the_summary_stays_prose() -> None:
    snapshot = parse_paste("This cluster consists of\ntwo machines under my desk")
    assert SUMMARY_FORMAT.label not in snapshot.notes
    assert snapshot.ray is None


# --- placement_group_table() -----------------------------------------------------------------------

TABLE = (RECORDED / "placement_group_table_2_60.txt").read_text(encoding="utf-8")


def test_placement_group_table_pending_group_is_a_demand_and_created_group_a_holder() -> None:
    ray = _ray(TABLE)
    [demand] = ray.demands
    assert demand.kind == "placement_group"
    assert demand.bundles == [{"GPU": 1.0, "CPU": 1.0}, {"CPU": 1.0}]
    assert demand.strategy == "STRICT_PACK"
    assert demand.infeasible  # stats.scheduling_state INFEASIBLE
    assert [(g.name, g.state) for g in ray.placement_groups] == [("holder", "CREATED")]


def test_placement_group_table_cut_inside_the_second_group_keeps_the_first() -> None:
    cut = TABLE[: TABLE.index("'bundles': {0: {'CPU'")]
    snapshot = parse_paste(cut)
    assert CUT_PRINTOUT_NOTE in snapshot.notes
    ray = snapshot.ray
    assert ray is not None
    assert [d.bundles for d in ray.demands] == [[{"GPU": 1.0, "CPU": 1.0}, {"CPU": 1.0}]]
    # The cut group printed neither its state nor its bundles: it says nothing of what it holds.
    assert ray.placement_groups == []


def test_placement_group_table_cut_after_the_bundles_keeps_the_state_unknown() -> None:
    cut = TABLE[: TABLE.index("'strategy': 'PACK'")]
    [group] = _ray(cut).placement_groups
    assert (group.name, group.state, group.bundles) == ("holder", "UNKNOWN", [{"CPU": 1.0}])


def test_placement_group_dump_wrapped_inside_a_string_is_read_across_the_wrap() -> None:
    # ray-project/ray#15211: a Tune group's dump, wrapped inside a key and cut further on.
    ray = _ray(_corpus("found-heldout-ray/ray-15211-tune-pack-pgs-take-gpu-head-cpus-pg-pending.txt"))
    [group] = ray.placement_groups
    assert group.name == "__tune_cdf05f32__19e2d42e"
    assert group.state == "UNKNOWN"
    assert group.bundles[0] == {"GPU": 1.0, "CPU": 1.0}
    assert len(group.bundles) > 47  # bundle 47's key was split by the wrap


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(min_value=1, max_value=len(TABLE)))
def test_a_placement_group_table_cut_anywhere_never_crashes(cut: int) -> None:
    snapshot = parse_paste(TABLE[:cut])
    if snapshot.ray is not None:
        for demand in snapshot.ray.demands:
            assert demand.bundles


# --- the Ray 1.x Helm chart (ray-project/ray#16549) and the pre-node-type launcher ------------------


def test_helm_pod_types_become_node_types_with_ray_resources_laid_over() -> None:
    ray = _ray(_corpus("found-heldout2/ray-16549-helm-rayresources-gpu-0-autoscaler-no-scale.txt"))
    types = {t.name: t for t in ray.node_types}
    head, worker = types["rayHeadType"], types["rayWorkerType"]
    assert head.resources["CPU"] == 0.0  # rayResources: { "CPU": 0 } over CPU: 1
    assert head.explicit and (head.min_workers, head.max_workers) == (0, 0)
    # The excerpt is cut before the worker's CPU: too little to count as a full declaration.
    assert not worker.explicit and (worker.min_workers, worker.max_workers) == (0, 3)
    assert worker.resources["memory"] == int(16 * 2**30 * 0.7)


HELM_GPU_TYPE = """\
headPodType: rayHeadType
podTypes:
  rayHeadType:
    minWorkers: 0
    maxWorkers: 0
    CPU: 1
    memory: 512Mi
  rayGPUWorkerType:
    minWorkers: 0
    maxWorkers: 4
    CPU: 7
    memory: 30Gi
    GPU: 1
    rayResources: {"GPU": 0}
"""


def test_helm_ray_resources_gpu_0_hides_the_gpu_limit_from_ray() -> None:
    types = {t.name: t for t in _ray(HELM_GPU_TYPE).node_types}
    assert types["rayGPUWorkerType"].resources["GPU"] == 0.0
    assert types["rayGPUWorkerType"].explicit
    assert types["rayHeadType"].resources["GPU"] == 0.0


def test_ray_1_3_num_cpu_and_num_gpu_keys_are_read() -> None:
    text = HELM_GPU_TYPE.replace("    CPU: 7", "    numCPU: 7").replace("    GPU: 1", "    numGPU: 2")
    worker = {
        t.name: t for t in _ray(text.replace('rayResources: {"GPU": 0}', "rayResources: {}")).node_types
    }
    assert worker["rayGPUWorkerType"].resources["GPU"] == 2.0
    assert worker["rayGPUWorkerType"].resources["CPU"] == 7.0


def test_operator_raycluster_pod_types_read_the_first_container_limits() -> None:
    text = """\
apiVersion: cluster.ray.io/v1
kind: RayCluster
metadata:
  name: example-cluster
spec:
  maxWorkers: 3
  headPodType: head-node
  podTypes:
  - name: worker-gpu
    minWorkers: 0
    maxWorkers: 3
    podConfig:
      apiVersion: v1
      kind: Pod
      spec:
        containers:
        - name: ray-node
          resources:
            limits:
              cpu: 4
              memory: 8Gi
              nvidia.com/gpu: 2
"""
    [worker] = _ray(text).node_types
    assert worker.name == "worker-gpu"
    assert worker.resources["CPU"] == 4.0 and worker.resources["GPU"] == 2.0
    assert (worker.min_workers, worker.max_workers) == (0, 3)


def test_launcher_config_before_node_types_gives_one_worker_type_with_its_bounds() -> None:
    text = """\
cluster_name: default
min_workers: 0
max_workers: 2
provider:
    type: gcp
    region: us-west1
head_node:
    machineType: n1-standard-2
worker_nodes:
    machineType: n1-standard-4
    guestAccelerators:
      - acceleratorType: projects/p/zones/us-west1-b/acceleratorTypes/nvidia-tesla-k80
        acceleratorCount: 1
"""
    [worker] = _ray(text).node_types
    assert worker.name == LEGACY_WORKER_TYPE
    assert not worker.explicit  # the autoscaler detected resources itself
    assert (worker.min_workers, worker.max_workers) == (0, 2)


def test_a_gpu_demand_beside_a_helm_type_with_ray_resources_gpu_0_is_cause_4() -> None:
    # A recorded ``ray status`` with a pending {'CPU': 1.0, 'GPU': 2.0} task, pasted with the values.
    status = (CORPUS / "recorded" / "v1-gpu2-task-ray-status.txt").read_text(encoding="utf-8")
    values = HELM_GPU_TYPE.replace("    GPU: 1", "    GPU: 2")
    diagnosis = classify(parse_paste(f"{status}\n\n{values}"))
    rules = [f.rule for f in diagnosis.findings]
    assert rules[0] == "ray-node-type-omits-gpu", rules
