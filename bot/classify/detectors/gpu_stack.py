"""The GPU software stack's own Pods failing: the driver, toolkit, device plugin and validators.

A Pod of the NVIDIA GPU operator, GKE's driver installer or the device plugin DaemonSet that
crash-loops or cannot pull its image looks like any other failing Pod, and the generic failure
rules would call it an application error (cause 10). It is not: while the driver or the plugin is
down the node advertises no ``nvidia.com/gpu`` and GPU Pods wait, so it is cause 3, and the rule
that reports it supersedes the generic ones for the same Pod.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from bot.catalogue import Rule
from bot.classify.context import Context
from bot.classify.detectors.kubernetes import failing_pods, gpu_wanted
from bot.classify.registry import Hit, detector
from bot.diagnosis import Evidence, Subject
from bot.snapshot.gpu import is_gpu_stack_pod
from bot.snapshot.kubernetes import Pod
from bot.terms import Severity


@detector("gpu_stack_pods", ("pod", "container", "reason", "message", "image", "restarts", "node"))
def gpu_stack_pods(ctx: Context, rule: Rule) -> Iterable[Hit]:
    for pod, failing in ctx.memo("pod_failures", lambda: failing_pods(ctx)):
        if not is_gpu_stack_pod(pod):
            continue
        status = failing[0][0]
        evidence = [
            Evidence(
                source=f"pod {pod.name} {'init container' if s.init else 'container'} {s.name}",
                text=" ".join(p for p in (s.reason or "", s.message or "") if p) or kind,
            )
            for s, kind in failing[:3]
        ]
        warnings = [e for e in ctx.events_for(pod.name, pod.namespace) if e.type == "Warning"]
        evidence += [Evidence(source=f"event {e.reason}", text=e.message) for e in warnings[-3:]]
        spec = next((c for c in pod.containers + pod.init_containers if c.name == status.name), None)
        yield Hit(
            Subject(kind="Pod", name=pod.name, namespace=pod.namespace),
            tuple(evidence),
            {
                "pod": pod.name,
                "namespace": pod.namespace,
                "container": status.name if status.name != "(unknown)" else "",
                "reason": status.reason or "",
                "message": status.message or "",
                "image": (spec.image if spec else None) or status.image or "",
                "restarts": str(status.restart_count),
                "node": pod.node_name or "",
            },
        )


_INIT_PROGRESS = re.compile(r"^Init:\d+/\d+$")


def _stuck_in_init(pod: Pod) -> bool:
    """A Pod whose init containers have not finished: ``Init:0/1`` in a table, or a running init
    container in a described or fetched Pod that is not Ready yet."""
    if pod.phase not in ("Pending", "Unknown") or pod.ready:
        return False
    if pod.display_status is not None:
        return bool(_INIT_PROGRESS.match(pod.display_status))
    return any(s.init and s.state in ("running", "waiting") and not s.reason for s in pod.container_statuses)


@detector("gpu_stack_pods_in_init", ("pod", "status", "node", "group"))
def gpu_stack_pods_in_init(ctx: Context, rule: Rule) -> Iterable[Hit]:
    """GPU-stack Pods held in their init containers: each waits for the one before it.

    The GPU operator's device plugin, DCGM exporter and feature discovery start only after the
    driver and toolkit validations pass (their init containers poll for them), and GKE's device
    plugin waits in its ``nvidia-driver-installer`` init container for the driver. A device plugin
    that stays in ``Init`` therefore means the driver or toolkit below it is not ready on that node,
    and until it starts the node advertises no ``nvidia.com/gpu``.
    """
    seen: set[tuple[str, str]] = set()
    stuck: list[Pod] = []
    # Only Pods not running can be stuck (the device-plugin Pods are read in whatever phase).
    for pod in (*ctx.kube.device_plugin_pods, *ctx.pods_not_running):
        if not _stuck_in_init(pod) or not is_gpu_stack_pod(pod) or pod.key in seen:
            continue
        seen.add(pod.key)
        stuck.append(pod)
    for pod in stuck:
        # ``Init:0/1`` as the table shows it, else an atom the renderer words per language.
        status = pod.display_status or "init-unfinished"
        shown = (
            Evidence(source=f"pod {pod.name}", text=f"{pod.name} {status}")
            if pod.display_status
            else Evidence(
                source=f"pod {pod.name}",
                text=f"{pod.name} init containers not finished",
                phrase="evidence.init_unfinished",
                values={"pod": pod.name},
            )
        )
        yield Hit(
            Subject(kind="Pod", name=pod.name, namespace=pod.namespace),
            (shown,),
            {
                "pod": pod.name,
                "namespace": pod.namespace,
                "status": status,
                "node": pod.node_name or "",
                "group": ", ".join(p.name for p in stuck[:5]),
            },
        )


# A ``kubectl get daemonsets`` row (NAME DESIRED CURRENT READY UP-TO-DATE AVAILABLE NODE SELECTOR AGE,
# NAMESPACE first with -A, ``daemonset.apps/`` before the name in ``kubectl get all``) of a GPU-stack
# DaemonSet whose counts are all 0, or the same told in a sentence ("the device plugin shows DESIRED 0").
_IDLE_ROW = re.compile(
    r"^\s*(?:(?P<namespace>[a-z0-9][-a-z0-9.]*)\s+)?(?:daemonset(?:\.apps)?/)?"
    r"(?P<daemonset>[\w.-]*(?:device-plugin|nvidia-driver|driver-installer|gpu-feature-discovery|"
    r"container-toolkit|operator-validator)[\w.-]*)\s+0\s+0\s+0\s+0\s+0(?:\s|$)"
)
_IDLE_TOLD = re.compile(r"\b(?:nvidia-)?device[- ]plugin\b[^\n]{0,100}?\bDESIRED\b[\s`:=→>-]{0,8}0\b")


@detector("gpu_stack_daemonsets_idle", ("daemonset", "namespace", "line", "gpu_signal"))
def gpu_stack_daemonsets_idle(ctx: Context, rule: Rule) -> Iterable[Hit]:
    """A GPU-stack DaemonSet placed on no node, in a paste that is about GPUs.

    On a cluster without GPU nodes a device plugin with DESIRED 0 is normal, so the row alone is no
    finding: the paste must also show GPU work or GPU nodes. The same told in a sentence is a
    retelling (the rule ``reads`` both): a warning at most.
    """
    idle: list[tuple[str, str, str]] = []
    for text in ctx.texts_that_may_match(_IDLE_ROW, _IDLE_TOLD):
        for line in text.text.splitlines()[:200]:
            if (row := _IDLE_ROW.match(line)) is not None:
                idle.append((row.group("daemonset"), row.group("namespace") or "", line.strip()))
            elif _IDLE_TOLD.search(line):
                idle.append(("", "", line.strip()))
    if not idle:
        return
    wanted = gpu_wanted(ctx)
    if wanted is None:
        return
    seen: set[str] = set()
    retold: Severity | None = "warning" if rule.severity == "critical" else None
    for name, namespace, line in idle:
        if line in seen:
            continue
        seen.add(line)
        subject = (
            Subject(kind="DaemonSet", name=name, namespace=namespace or None)
            if name
            else Subject(kind="Text", name=None)
        )
        yield Hit(
            subject,
            (Evidence(source="daemonsets", text=line[:600]), wanted),
            {"daemonset": name, "namespace": namespace, "line": line[:600], "gpu_signal": wanted.text[:300]},
            None if name else retold,
        )
