"""Every detector module, imported so that its detectors register themselves."""

from bot.classify.detectors import (
    application,
    connectivity,
    kubernetes,
    ray_resources,
    scheduling,
    text,
)

__all__ = ["application", "connectivity", "kubernetes", "ray_resources", "scheduling", "text"]
