"""parse_paste never raises and stays bounded, whatever is pasted."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.classify import classify
from bot.collect.paste import parse_paste
from bot.snapshot.model import Snapshot
from tests.support.corpus import CORPUS

# One short fragment of every format the collector reads, in its real shape.
FRAGMENTS = [
    "======== Autoscaler status: 2024-01-24 08:21:04.803420 ========\nNode status\n"
    "---------------------------------------------------------------\nActive:\n 1 node_9a8e4a65cdc3188\n"
    "Pending:\n (no pending nodes)\n\nResources\n------------------------\nUsage:\n 0.0/16.0 GPU\n"
    " 0B/3.56TiB memory\n\nDemands:\n {'GPU': 16.0}: 1+ pending tasks/actors\n"
    " {'GPU': 1.0} * 1 (PACK): 1+ pending placement groups\n",
    "NAME                 READY   STATUS             RESTARTS       AGE\n"
    "ray-head-7tvcr       0/1     CrashLoopBackOff   13 (68s ago)   65m\n"
    "ray-worker-k4fbs     0/1     Init:ImagePullBackOff   0          41m\n",
    "FailedScheduling   2m21s (x42 over 60m)  default-scheduler  1 node(s) had untolerated taint {nvidia.com/gpu: present}",
    "LAST SEEN   TYPE      REASON             OBJECT            MESSAGE\n"
    "12s         Warning   FailedScheduling   pod/ray-w-1       0/3 nodes are available: 3 Insufficient cpu.\n",
    "Name:         gpu-node\nTaints:       nvidia.com/gpu=present:NoSchedule\nCapacity:\n  cpu:  8\n"
    "  nvidia.com/gpu:  1\nAllocatable:\n  cpu:  8\n  nvidia.com/gpu:  1\n",
    "Name:         p-1\nNamespace:    ray\nNode:         <none>\nStatus:       Pending\nContainers:\n  c:\n"
    "    Image:  x\n    Limits:\n      nvidia.com/gpu:  2\nEvents:\n  Type     Reason            Age   From   Message\n"
    "  ----     ------            ----  ----   -------\n"
    "  Warning  FailedScheduling  1m    default-scheduler  0/1 nodes are available: 1 Insufficient nvidia.com/gpu.\n",
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: gpu-pod\nspec:\n  containers:\n    - name: c\n"
    "      resources:\n        limits:\n          nvidia.com/gpu: 2\n",
    "  gpu_worker_g5:\n    node_config:\n      BlockDeviceMappings: *mount\n    resources:\n"
    "      accelerator_type_a10: 1\n    min_workers: 0\n    max_workers: 4\n",
    "applications:\n  app:\n    status: DEPLOY_FAILED\n    message: boom\n    deployments:\n"
    "      D:\n        status: UNHEALTHY\n        replica_states:\n          STARTING: 1\n",
    '{\n    "apiVersion": "v1",\n    "kind": "List",\n    "items": [\n        {"kind": "Pod", '
    '"metadata": {"name": "w-1"}, "status": {"phase": "Pending"}}\n    ]\n}',
    "WARNING worker.py:1115 -- The actor or task with ID ffff cannot be scheduled right now. It requires "
    "{CPU: 1.000000}, {GPU: 1.000000} for placement, but this node only has remaining {11.000000/12.000000 CPU, "
    "0.000000/1.000000 GPU, 1.000000/1.000000 node:192.168.178.28}",
    "Error: No available node types can fulfill resource request \n"
    "defaultdict(<class 'float'>, {'CPU': 9.0, 'GPU': 1.0}). \nAdd suitable node types to this cluster.",
    "[2025-07-23 10:05:49,679 W 51000 51000] gcs_rpc_client.h:151: Failed to connect to GCS at address :6379",
    "RuntimeError: Version mismatch: The cluster was started with:\n    Ray: 2.9.0\nThis process on node x was "
    "started with:\n    Ray: 2.10.0",
    "$ kubectl get pods -n ray -o wide",
    "```yaml",
    "## 0/3 nodes are available: 3 insufficient nvidia.com/gpu",
]

REAL_SAMPLES = [path.read_text(encoding="utf-8") for path in sorted(CORPUS.glob("*/*.txt"))]

JUNK = st.text(
    alphabet=st.characters(codec="utf-8", categories=["L", "N", "P", "S", "Z", "Cc"])
    | st.sampled_from("{}[]:/*&-# \n\t"),
    max_size=300,
)


def _check(snapshot: Snapshot) -> None:
    assert isinstance(snapshot, Snapshot)
    assert snapshot.origin == "paste"
    assert snapshot.notes, "every snapshot says what was recognised, or that nothing was"
    assert len(snapshot.texts) <= 2000
    # The safety nets in the scanner must never be what kept parse_paste from raising.
    assert not [note for note in snapshot.notes if "parser error" in note], snapshot.notes
    if snapshot.kubernetes is None and snapshot.ray is None and not snapshot.texts:
        assert snapshot.notes[0] == "no known output format recognised"
    if snapshot.kubernetes is not None:
        k = snapshot.kubernetes
        assert (
            k.pods
            or k.nodes
            or k.events
            or k.rayclusters
            or k.rayjobs
            or k.rayservices
            or k.resource_quotas
            or k.workloads
        )
        assert k.nodes_complete is False
    snapshot.to_json()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=500))
def test_arbitrary_text_gives_a_snapshot(text: str) -> None:
    _check(parse_paste(text))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(FRAGMENTS) | JUNK, max_size=12), st.sampled_from(["\n", "\n\n", "", " "]))
def test_mixtures_of_real_fragments_and_junk_give_a_snapshot(parts: list[str], separator: str) -> None:
    _check(parse_paste(separator.join(parts)))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=6))
def test_fragments_separated_by_blank_lines_are_each_still_recognised(parts: list[str]) -> None:
    combined = parse_paste("\n\n".join(parts))

    for part in parts:
        alone = parse_paste(part)
        if alone.notes != ["no known output format recognised"]:
            recognised = [note for note in alone.notes if not note.startswith(("some ", "a ", "paste "))]
            assert set(recognised) <= set(combined.notes)


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=2000))
def test_binary_junk_gives_a_snapshot(data: bytes) -> None:
    _check(parse_paste(data.decode("latin-1")))


# Cut points per sample: about 30 per sample, at different offsets in each of the ~350 samples, so
# that across the corpus cuts land in every part of a line; ``RAYDIAG_FUZZ_SCALE=20`` (as for the
# hypothesis tests) cuts far more densely for a deeper hunt.
CUT_SPREAD = 16 * int(os.environ.get("RAYDIAG_FUZZ_SCALE", "1"))


def _cuts(sample: str, spread: int = CUT_SPREAD) -> list[int]:
    """Where to cut a sample: at line ends (at most ``spread`` of them, spread over the sample) and at
    as many points in between, so cuts fall in every part of a line (every character of the whole
    corpus would cost the suite minutes for no new shape)."""
    ends = [i for i, ch in enumerate(sample) if ch == "\n"]
    ends = ends[:: max(1, len(ends) // spread)]
    step = max(1, len(sample) // spread)
    return sorted({0, len(sample), *range(0, len(sample), step), *ends})


def test_every_truncation_of_every_real_sample_gives_a_snapshot() -> None:
    for sample in FRAGMENTS:
        for length in range(len(sample) + 1):
            _check(parse_paste(sample[:length]))
    for sample in REAL_SAMPLES:
        for length in _cuts(sample):
            _check(parse_paste(sample[:length]))


def test_five_megabytes_of_mixed_output_is_bounded() -> None:
    # How long it takes is measured by `make bench-startup` (an `explain` of a 5 MB paste).
    block = "\n\n".join(FRAGMENTS) + "\n"
    paste = (block * (5_000_000 // len(block) + 1))[:5_000_000]

    snapshot = parse_paste(paste)

    _check(snapshot)
    assert any(
        note.startswith("paste truncated to its first 2,000,000 characters") for note in snapshot.notes
    )
    assert snapshot.kubernetes is not None and len(snapshot.kubernetes.pods) <= 5000
    assert snapshot.ray is not None and len(snapshot.ray.demands) <= 500


def test_pathological_shapes_stay_fast() -> None:
    shapes = [
        " " * 100_000 + "a",
        "{" * 200_000,
        "[\n" * 100_000,
        '{"a": "' + "x" * 200_000,
        "a: [\n" * 50_000,
        "1/2 " * 100_000,
        "Name: x\n" * 50_000,
        "\x00\x1b[31m" * 50_000,
        "*a " * 100_000,
        "apiVersion: v1\n" + "  - &a [*a, *a, *a]\n" * 5000,
        "{'CPU': " * 50_000,
    ]
    # A guard against runaway backtracking (which takes minutes, not seconds), not a speed target:
    # the bound is loose enough for a loaded CI machine.
    for shape in shapes:
        started = time.monotonic()
        _check(parse_paste(shape))
        assert time.monotonic() - started < 30, repr(shape[:40])


def test_non_string_input_is_tolerated() -> None:
    _check(parse_paste(b"NAME READY STATUS RESTARTS AGE\nx 0/1 Pending 0 1m\n"))  # type: ignore[arg-type]
    _check(parse_paste(None))  # type: ignore[arg-type]


def test_hostile_numbers_are_capped_or_ignored() -> None:
    huge = "9" * 5000
    paste = (
        f"NAME READY STATUS RESTARTS AGE\nx-1 0/1 CrashLoopBackOff {huge} 5m\n\n"
        "LAST SEEN   TYPE      REASON             OBJECT   MESSAGE   COUNT\n"
        "1m          Warning   FailedScheduling   pod/x-1  nope      ²\n\n"
        f"Demands:\n {{'CPU': 1e999, 'GPU': 1.0}}: {huge}+ pending tasks/actors\n"
        f"Node status\n-----\nUsage:\n 0.0/{huge}TiB memory\n 1.0/2.0 CPU\n"
    )

    snapshot = parse_paste(paste)

    _check(snapshot)
    assert snapshot.kubernetes is not None
    assert snapshot.kubernetes.pods[0].container_statuses[0].restart_count == 10**12
    assert snapshot.kubernetes.events[0].count == 1
    assert snapshot.ray is not None
    assert snapshot.ray.totals == {"CPU": 2.0}


CASES = Path(__file__).resolve().parents[1] / "cases"
# Pastes that are healthy or unrelated to scheduling: whatever rule reads them, none may warn.
CALM_PASTES = [
    "pod-container-waiting/quiet/kubectl-get-pods-all-running.txt",
    "gpu-stack-nvidia-smi-failed/quiet/healthy-nvidia-smi-table.txt",
    "gpu-stack-nvidia-smi-failed/quiet/healthy-nvidia-smi-query.txt",
    "gpu-stack-nvidia-smi-failed/quiet/driver-container-nvidia-smi-works.txt",
    "gpu-stack-device-plugin-failed/quiet/bottlerocket-registered-with-kubelet.txt",
    "gcs-workers-wait-for-head/quiet/unrelated-json-traceback.txt",
    "gcs-head-name-unresolved/quiet/unrelated-dns-traceback.txt",
    "gcs-workers-wait-for-head/quiet/chat-message.txt",
    "kuberay-operator-log-error/quiet/operator-info-lines.txt",
]


@pytest.mark.parametrize("name", CALM_PASTES)
def test_healthy_and_unrelated_pastes_raise_no_warning(name: str) -> None:
    diagnosis = classify(parse_paste((CASES / name).read_text(encoding="utf-8")))

    assert [f.rule for f in diagnosis.findings if f.severity != "info"] == []
