"""Every detector module, imported so that its detectors register themselves."""

from bot.classify.detectors import (
    application,
    autoscaling,
    connectivity,
    constraints,
    gpu_stack,
    group_lint,
    kubelet_admission,
    kubernetes,
    ray_resources,
    scheduling,
    stated,
    templates,
    text,
)

__all__ = [
    "application",
    "autoscaling",
    "connectivity",
    "constraints",
    "gpu_stack",
    "group_lint",
    "kubelet_admission",
    "kubernetes",
    "ray_resources",
    "scheduling",
    "stated",
    "templates",
    "text",
]
