"""The few numbers that go on a verdict line, side by side for both layers.

They are what an engineer checks first ("4 worker Pods run, 3 Ray nodes joined; 8 GPUs given to
Pods, 4 registered in Ray"), so the mismatch between the layers is visible before any finding is
read. Only figures the snapshot actually knows are shown.
"""

from __future__ import annotations

from bot.classify.context import Context


def headline_figures(ctx: Context) -> dict[str, str]:
    figures: dict[str, str] = {}
    # What ``nvidia-smi`` showed on the machine it ran on (the largest, when several were pasted).
    shown = [o.gpu_count for o in ctx.snapshot.nvidia_smi if o.gpu_count is not None]
    if ctx.has_kubernetes:
        if ctx.kube.nodes:
            figures["kubernetes_nodes"] = str(len(ctx.kube.nodes))
            figures["gpu_nodes"] = str(len(ctx.gpu_nodes))
        if ctx.kube.pods:
            figures["pods_pending"] = str(len(ctx.unscheduled_pods))
        if ctx.ray_pods:
            running = [p for p in ctx.ray_pods if p.phase == "Running"]
            figures["ray_pods_running"] = f"{len(running)}/{len(ctx.ray_pods)}"
            gpus = sum(p.gpu_limit() for p in running)
            if gpus:
                figures["gpus_given_to_ray_pods"] = f"{gpus:g}"
    ray = ctx.ray
    if ray is not None:
        if ctx.ray_nodes_known:
            figures["ray_nodes_alive"] = str(len(ctx.ray_nodes))
            gpus = sum(n.resources_total.get("GPU", 0.0) for n in ctx.ray_nodes)
        else:
            if ray.node_count is not None:
                figures["ray_nodes_alive"] = str(ray.node_count)
            gpus = ray.totals.get("GPU", 0.0)
        # A status of a cluster without any node says 0 GPUs as plainly as it says 0 nodes.
        # Beside a machine's count, Ray's own says how many of them it registered, 0 included.
        if gpus or "gpus_given_to_ray_pods" in figures or ray.node_count == 0 or (shown and ray.totals):
            figures["gpus_registered_in_ray"] = f"{gpus:g}"
        if ray.demands:
            figures["ray_pending_demands"] = str(sum(d.count for d in ray.demands))
    if shown:
        # A table cut after its first rows says "at least".
        cut = [o.gpu_count or 0 for o in ctx.snapshot.nvidia_smi if not o.complete]
        most = max(shown)
        figures["gpus_in_nvidia_smi"] = f"{most}+" if cut and max(cut) >= most else str(most)
    return figures
