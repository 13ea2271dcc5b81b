"""The versions of the GPU chain's parts in a snapshot: Ray, the KubeRay operator, the NVIDIA driver
and the device plugin (``StackVersions`` of a diagnosis).

Each is read where the cluster itself says it: Ray from its dashboard (else the RayCluster's
``spec.rayVersion``, what KubeRay was asked to run), the operator and the device plugin from their
Pods' image tags, the driver from GPU feature discovery's node labels. A part the snapshot does not
hold stays unknown; the re-verification compares only parts read on both runs. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable

from bot.classify.context import Context
from bot.diagnosis import StackVersions
from bot.snapshot.gpu import driver_version
from bot.snapshot.kubernetes import Pod

__all__ = ["image_tag", "stack_versions"]

_DIGEST_CHARS = 12


def image_tag(image: str) -> str | None:
    """``nvcr.io/nvidia/k8s-device-plugin:v0.17.0`` → ``v0.17.0``; a digest-only reference gives
    ``sha256:`` and its first 12 hex digits; no tag is ``latest``, as the runtime reads it."""
    reference = image.strip()
    if not reference:
        return None
    name, _, digest = reference.partition("@")
    last = name.rsplit("/", 1)[-1]
    if ":" in last:
        return last.rsplit(":", 1)[1] or None
    if digest:
        algorithm, _, value = digest.partition(":")
        return f"{algorithm}:{value[:_DIGEST_CHARS]}" if value else digest
    return "latest"


def _pod_tags(pods: Iterable[Pod], wanted: str) -> list[str]:
    """The image tags of ``pods``' main containers: the one whose image names ``wanted``, else the
    first. Tags of Pods on their way out are left out (a rollout keeps the old one a while)."""
    tags: set[str] = set()
    for pod in pods:
        if pod.deleting or not pod.containers:
            continue
        images = [c.image for c in pod.containers if c.image]
        chosen = next((i for i in images if wanted in i), images[0] if images else None)
        if chosen and (tag := image_tag(chosen)):
            tags.add(tag)
    return sorted(tags)


def _ray_version(ctx: Context) -> str | None:
    if ctx.ray is not None and ctx.ray.version:
        return ctx.ray.version
    specs = sorted({rc.ray_version for rc in ctx.kube.rayclusters if rc.ray_version and _ours(ctx, rc.name)})
    return ", ".join(specs) or None


def _ours(ctx: Context, name: str) -> bool:
    return ctx.cluster is None or name == ctx.cluster


def stack_versions(ctx: Context) -> StackVersions:
    kube = ctx.kube
    operator = _pod_tags(kube.operator_pods, "operator")
    return StackVersions(
        ray=_ray_version(ctx),
        kuberay_operator=", ".join(operator) or None,
        nvidia_driver=sorted({v for node in ctx.gpu_nodes if (v := driver_version(node))}),
        device_plugin=_pod_tags(kube.device_plugin_pods, "device-plugin"),
    )
