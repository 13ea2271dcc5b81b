"""The GPU software stack's own Pods failing: the driver, toolkit, device plugin and validators.

A Pod of the NVIDIA GPU operator, GKE's driver installer or the device plugin DaemonSet that
crash-loops or cannot pull its image looks like any other failing Pod, and the generic failure
rules would call it an application error (cause 10). It is not: while the driver or the plugin is
down the node advertises no ``nvidia.com/gpu`` and GPU Pods wait, so it is cause 3, and the rule
that reports it supersedes the generic ones for the same Pod.
"""

from __future__ import annotations

from collections.abc import Iterable

from bot.catalogue import Rule
from bot.classify.context import Context
from bot.classify.detectors.kubernetes import _failing_pods
from bot.classify.registry import Hit, detector
from bot.diagnosis import Evidence, Subject
from bot.snapshot.kubernetes import Pod

# Name prefixes of the Pods that make a node's GPUs visible to Kubernetes, from the GPU operator's
# DaemonSets, GKE's installer, and the device plugin's static manifest and Helm chart.
GPU_STACK_POD_PREFIXES = (
    "nvidia-driver-daemonset",
    "nvidia-driver-installer",
    "nvidia-gpu-device-plugin",
    "nvidia-container-toolkit",
    "nvidia-device-plugin",
    "nvidia-operator-validator",
    "nvidia-cuda-validator",
    "nvidia-device-plugin-validator",
    "nvidia-mig-manager",
    "gpu-feature-discovery",
    "gpu-operator-",
)
_APP_LABELS = ("app", "app.kubernetes.io/name", "k8s-app", "name")


def is_gpu_stack_pod(pod: Pod) -> bool:
    names = [pod.name, *(pod.labels.get(key, "") for key in _APP_LABELS)]
    return any(name.startswith(GPU_STACK_POD_PREFIXES) for name in names if name)


@detector("gpu_stack_pods", ("pod", "container", "reason", "message", "image", "restarts", "node"))
def gpu_stack_pods(ctx: Context, rule: Rule) -> Iterable[Hit]:
    for pod, failing in ctx.memo("pod_failures", lambda: _failing_pods(ctx)):
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
