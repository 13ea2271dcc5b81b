"""What a re-verification concludes, as pure functions of a diagnosis and probe results.

Two questions, asked by ``bot.schedule.verify`` on the leader's schedule:

- **Does each GPU pool still take a GPU task?** A pool is one way of asking for a GPU: a plain
  one-GPU task (pool ``any``) and one per ``accelerator_type:*`` resource that Ray registers. A
  probe's result becomes a ``Verdict``: ``ran``; ``pending`` (its task waited for a GPU until the
  time limit and was stopped);
  ``wrong_node`` (it ran, on a node whose Kubernetes side disagrees: another GPU model than the
  pool names, or a Pod given no GPU); ``no_devices`` (it ran and saw no device:
  ``CUDA_VISIBLE_DEVICES`` empty, or a device count of 0); or the probe's own ``failed``,
  ``unreachable``, ``rejected``. The channel hears of a pool when its verdict changes, and of a new
  pool only when it does not run.
- **After an upgrade, does the chain still hold?** When a part read on two runs (Ray, the KubeRay
  operator, the NVIDIA driver, the device plugin) changed version, the verification order of
  CAUSES.md is replayed: Pods Ready → Ray nodes and GPUs → one-GPU probe → GPU-type probes → Serve
  healthy → no leftover holders. Each step is ``ok``, ``failed``, ``unknown`` (its layer was not
  read) or ``skipped`` (nothing to check: no GPU type, no Serve application).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from bot.classify.capacity import model_name
from bot.diagnosis import Diagnosis, RayGpuNode
from bot.probes.gpu import GpuProbeResult

ANY_POOL = "any"
Verdict = Literal["ran", "pending", "wrong_node", "no_devices", "failed", "unreachable", "rejected"]
VERDICTS: tuple[Verdict, ...] = (
    "ran",
    "pending",
    "wrong_node",
    "no_devices",
    "failed",
    "unreachable",
    "rejected",
)
Step = Literal["pods_ready", "ray_nodes", "gpu_probe", "gpu_type_probe", "serve", "holders"]
STEPS: tuple[Step, ...] = ("pods_ready", "ray_nodes", "gpu_probe", "gpu_type_probe", "serve", "holders")
StepStatus = Literal["ok", "failed", "unknown", "skipped"]
# Where a failed step points (CAUSES.md): the layer each step checks.
STEP_CAUSES: dict[Step, tuple[int, ...]] = {
    "pods_ready": (1, 2, 3),
    "ray_nodes": (4, 8),
    "gpu_probe": (4, 5, 6),
    # A typed probe that waits while a plain one runs: the type chain (7), or that pool held (5).
    "gpu_type_probe": (7, 5),
    "serve": (10,),
    "holders": (5,),
}
# The cause whose findings say that live actors or placement groups hold the GPUs.
HOLDERS_CAUSE = 5
_EMPTY_DEVICES = ("", "NoDevFiles", "void", "none")


@dataclass(frozen=True)
class PoolResult:
    """One probe of one pool, reduced to what is compared between runs and what a message shows."""

    pool: str
    verdict: Verdict
    elapsed_s: float
    node: str | None = None  # the IP (or id) of the Ray node it ran on
    detail: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Change:
    """A pool whose verdict is news: ``before`` None is a pool seen for the first time."""

    pool: str
    before: Verdict | None
    after: PoolResult


@dataclass(frozen=True)
class VersionChange:
    part: str  # ray, kuberay_operator, nvidia_driver, device_plugin
    before: str
    after: str


@dataclass(frozen=True)
class StepResult:
    step: Step
    status: StepStatus
    detail: Mapping[str, str] = field(default_factory=dict)


def gpu_type(pool: str) -> str | None:
    """The ``gpu_type`` the probe asks for in this pool (None: any GPU)."""
    return None if pool == ANY_POOL else pool


def pools_of(diagnosis: Diagnosis, kept: Iterable[str] = ()) -> list[str]:
    """The pools to probe: ``any`` and each accelerator type a Ray node registers, plus ``kept`` (pools
    that ran last time and are gone now: one more probe says whether they still take work). A
    cluster with no GPU in either layer has none."""
    capacity = diagnosis.capacity
    types = {t for node in capacity.ray_gpu_nodes for t in node.accelerator_types}
    has_gpus = bool(capacity.ray_gpu_nodes) or any(
        (row.allocatable or 0) > 0 or (row.given_to_ray_pods or 0) > 0 for row in capacity.models
    )
    wanted = types | {pool for pool in kept if pool != ANY_POOL}
    if not has_gpus and not wanted:
        return []
    return [ANY_POOL, *sorted(wanted)]


def _landing(result: GpuProbeResult, nodes: Sequence[RayGpuNode]) -> RayGpuNode | None:
    for node in nodes:
        if (result.node_id and node.node_id == result.node_id) or (
            result.node_ip and node.ip == result.node_ip
        ):
            return node
    return None


def verdict_of(result: GpuProbeResult, pool: str, nodes: Sequence[RayGpuNode]) -> PoolResult:
    """The verdict on one probe of ``pool``; ``nodes`` are the Ray GPU nodes of the same run."""
    node = result.node_ip or result.node_id
    detail = {
        key: value
        for key, value in (
            ("node", node),
            ("cuda_visible_devices", result.cuda_visible_devices),
            ("device_count", None if result.device_count is None else str(result.device_count)),
            ("submission_id", result.submission_id),
            ("error", result.error),
        )
        if value is not None
    }

    def made(verdict: Verdict, **more: str) -> PoolResult:
        return PoolResult(pool, verdict, result.elapsed_s, node, {**detail, **more})

    if result.outcome == "pending_timeout":
        if result.driver_started:
            return made("pending")
        # The job never got as far as asking for the GPU: that says nothing about the GPUs.
        return made("failed", error="the probe's driver did not connect to the cluster in time")
    if result.outcome != "ran":
        return made(result.outcome)
    devices = (result.cuda_visible_devices or "").strip()
    if devices in _EMPTY_DEVICES or result.device_count == 0:
        return made("no_devices")
    landed = _landing(result, nodes)
    if landed is not None:
        if landed.kubernetes_gpus is not None and landed.kubernetes_gpus <= 0:
            return made("wrong_node", pod=landed.pod or "?", pod_gpus="0")
        wanted = model_name(pool) if pool != ANY_POOL else None
        if wanted and landed.kubernetes_model and landed.kubernetes_model != wanted:
            return made("wrong_node", pod=landed.pod or "?", kubernetes_model=landed.kubernetes_model)
    return made("ran")


def changes(before: Mapping[str, Verdict], now: Sequence[PoolResult]) -> list[Change]:
    """The pools worth a message: a verdict unlike the last one, or a new pool that does not run."""
    found = []
    for result in now:
        last = before.get(result.pool)
        if (last is None and result.verdict != "ran") or (last is not None and last != result.verdict):
            found.append(Change(result.pool, last, result))
    return found


def version_changes(before: Mapping[str, str], now: Mapping[str, str]) -> list[VersionChange]:
    """The parts read on both runs whose version differs (a part not read now is not a change)."""
    return [
        VersionChange(part, before[part], value)
        for part, value in now.items()
        if part in before and before[part] != value
    ]


# --- the verification order ------------------------------------------------------------------------


def _pods_ready(diagnosis: Diagnosis) -> StepResult:
    capacity = diagnosis.capacity
    if not capacity.kubernetes_read or capacity.worker_pods is None:
        return StepResult("pods_ready", "unknown")
    ready = capacity.ready_worker_pods or 0
    detail = {"ready": str(ready), "workers": str(capacity.worker_pods)}
    if capacity.head_ready is None:
        return StepResult("pods_ready", "failed", {**detail, "head": "missing"})
    fine = capacity.head_ready and ready >= capacity.worker_pods
    return StepResult("pods_ready", "ok" if fine else "failed", {**detail, "head": str(capacity.head_ready)})


def _gpus(values: Iterable[float | None]) -> float:
    return sum(value or 0.0 for value in values)


def _ray_nodes(diagnosis: Diagnosis) -> StepResult:
    capacity = diagnosis.capacity
    if not capacity.ray_read or capacity.ray_nodes_alive is None:
        return StepResult("ray_nodes", "unknown")
    registered = _gpus(row.registered_in_ray for row in capacity.models)
    detail = {"alive": str(capacity.ray_nodes_alive), "registered": f"{registered:g}"}
    fine = True
    if capacity.kubernetes_read and capacity.ready_worker_pods is not None:
        # The head is a Ray node too, when its Pod is Ready.
        expected = capacity.ready_worker_pods + (1 if capacity.head_ready else 0)
        given = _gpus(row.given_to_ray_pods for row in capacity.models)
        detail |= {"expected": str(expected), "given": f"{given:g}"}
        fine = capacity.ray_nodes_alive >= expected and registered >= given
    return StepResult("ray_nodes", "ok" if fine else "failed", detail)


def _probe_step(step: Step, results: Sequence[PoolResult]) -> StepResult:
    if not results:
        return StepResult(step, "skipped")
    bad = [r for r in results if r.verdict != "ran"]
    detail = {"pools": ", ".join(f"{r.pool}: {r.verdict}" for r in results)}
    return StepResult(step, "failed" if bad else "ok", detail)


def _serve(diagnosis: Diagnosis) -> StepResult:
    apps = diagnosis.capacity.serve_applications
    if apps is None:
        return StepResult("serve", "unknown")
    if not apps:
        return StepResult("serve", "skipped")
    unwell = [f"{app.name}: {app.status}" for app in apps if app.status != "RUNNING"]
    if unwell:
        return StepResult("serve", "failed", {"apps": ", ".join(unwell)})
    return StepResult("serve", "ok", {"apps": ", ".join(app.name for app in apps)})


def _holders(diagnosis: Diagnosis) -> StepResult:
    if not diagnosis.capacity.ray_read:
        return StepResult("holders", "unknown")
    held = [f.subject.label() for f in diagnosis.findings if f.cause == HOLDERS_CAUSE]
    if held:
        return StepResult("holders", "failed", {"holders": ", ".join(dict.fromkeys(held))})
    return StepResult("holders", "ok")


def verification(diagnosis: Diagnosis, probes: Sequence[PoolResult]) -> list[StepResult]:
    """The verification order after an upgrade, step by step, from one diagnosis and its probes."""
    plain = [r for r in probes if r.pool == ANY_POOL]
    typed = [r for r in probes if r.pool != ANY_POOL]
    return [
        _pods_ready(diagnosis),
        _ray_nodes(diagnosis),
        _probe_step("gpu_probe", plain),
        _probe_step("gpu_type_probe", typed),
        _serve(diagnosis),
        _holders(diagnosis),
    ]


def passed(steps: Sequence[StepResult]) -> bool:
    return not any(step.status == "failed" for step in steps)


__all__ = [
    "ANY_POOL",
    "STEPS",
    "STEP_CAUSES",
    "VERDICTS",
    "Change",
    "PoolResult",
    "StepResult",
    "Verdict",
    "VersionChange",
    "changes",
    "gpu_type",
    "passed",
    "pools_of",
    "verdict_of",
    "verification",
    "version_changes",
]
