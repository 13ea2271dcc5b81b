"""The GPUs of a diagnosis, layer by layer, per GPU model: as a table, a Slack comment, a headline.

The figures are the diagnosis's ``Capacity`` (computed by ``bot.classify.capacity`` from the same
snapshot as the findings); this module only words them. A stage of a layer that was not read is
shown as "not read", never as 0, and the headline infers no cause from a layer it did not see.
"""

from __future__ import annotations

import unicodedata

from bot.diagnosis import ANY_MODEL, UNKNOWN_MODEL, Capacity, GpuModelCapacity, Gpus
from bot.render.messages import Lang, known, say
from bot.render.slack import escape

__all__ = [
    "ANY_MODEL",
    "STAGES",
    "UNKNOWN_MODEL",
    "GpuModelCapacity",
    "capacity_comment",
    "capacity_table",
    "describe_row",
    "format_gpus",
    "gap_summary",
    "model_label",
    "unread_stages",
]

STAGES = ("allocatable", "given_to_ray_pods", "registered_in_ray", "in_use", "pending_demand")
# Which layer each stage is read from; the waiting demand comes from either.
KUBERNETES_STAGES = frozenset({"allocatable", "given_to_ray_pods"})
RAY_STAGES = frozenset({"registered_in_ray", "in_use"})


def format_gpus(value: Gpus, lang: Lang) -> str:
    """``8``, ``0.5``, or "not read" for a stage whose layer the snapshot does not hold."""
    return say("capacity.not_read", lang) if value is None else f"{value:g}"


def unread_stages(capacity: Capacity) -> frozenset[str]:
    """The stages whose layer was not read."""
    unread: set[str] = set()
    if not capacity.kubernetes_read:
        unread |= KUBERNETES_STAGES
    if not capacity.ray_read:
        unread |= RAY_STAGES
    return frozenset(unread)


def model_label(model: str, lang: Lang) -> str:
    if model in (UNKNOWN_MODEL, ANY_MODEL):
        return say(f"capacity.model.{model}", lang)
    return model


def gap_summary(capacity: Capacity, lang: Lang) -> str:
    """One sentence on the biggest drop between the layers, that there is none, or what was not read.

    A drop is only told between two stages that were both read: with the Ray layer unread, GPUs
    given to Ray Pods are not "missing from Ray" (causes 4 and 8), they are not known there.
    """
    figures = capacity.models
    worst: tuple[float, str] | None = None
    for row in figures:
        if row.given_to_ray_pods is None or row.registered_in_ray is None:
            continue
        label = model_label(row.model, lang)
        missing = row.given_to_ray_pods - row.registered_in_ray
        if missing > 0 and (worst is None or missing > worst[0]):
            text = say("capacity.gap.ray", lang, model=label, missing=missing, given=row.given_to_ray_pods)
            worst = (missing, text)
    if worst is not None:
        return worst[1]
    for row in figures:
        if row.allocatable is None or row.given_to_ray_pods is None or not row.pending_demand:
            continue
        offered = row.allocatable + row.given_to_ray_pods + (row.registered_in_ray or 0)
        if offered == 0 and row.model != ANY_MODEL:
            label = model_label(row.model, lang)
            return say("capacity.gap.kubernetes", lang, model=label, wanted=row.pending_demand)
    if not capacity.kubernetes_read and not capacity.ray_read:
        return say("capacity.gap.unread", lang)
    if not capacity.ray_read:
        return say("capacity.gap.ray_unread", lang)
    if not capacity.kubernetes_read:
        return say("capacity.gap.kubernetes_unread", lang)
    return say("capacity.gap.none", lang) if figures else say("capacity.none", lang)


def _width(text: str) -> int:
    """Columns a terminal gives ``text``: Chinese characters take two."""
    return sum(2 if unicodedata.east_asian_width(char) in ("W", "F") else 1 for char in text)


def _pad(text: str, width: int, right: bool) -> str:
    fill = " " * max(0, width - _width(text))
    return fill + text if right else text + fill


def capacity_table(capacity: Capacity, *, cluster: str, lang: Lang) -> str:
    """The figures as a small aligned table, with the title and the one-line verdict on the gaps."""
    header = [say("capacity.column.model", lang), *(say(f"capacity.column.{s}", lang) for s in STAGES)]
    rows = [
        [model_label(row.model, lang), *(format_gpus(value, lang) for value in row.stages)]
        for row in capacity.models
    ]
    widths = [max(_width(line[i]) for line in [header, *rows]) for i in range(len(header))]
    lines = [say("capacity.title", lang, cluster=cluster), ""]
    for line in [header, *rows]:
        cells = [_pad(cell, widths[i], right=i > 0) for i, cell in enumerate(line)]
        lines.append("  ".join(cells).rstrip())
    lines += ["", gap_summary(capacity, lang)]
    return "\n".join(lines) + "\n"


def _unread_key(key: str, row: GpuModelCapacity) -> str:
    """``key``, or its wording for a row with a layer not read (``key.ray_unread``...) if it has one."""
    if row.allocatable is None and row.registered_in_ray is None:
        suffix = "unread"
    elif row.allocatable is None:
        suffix = "kubernetes_unread"
    elif row.registered_in_ray is None:
        suffix = "ray_unread"
    else:
        return key
    return f"{key}.{suffix}" if known(f"{key}.{suffix}") else key


def describe_row(key: str, row: GpuModelCapacity, lang: Lang) -> str:
    """The message ``key`` filled with one model's figures, for Slack mrkdwn.

    Templates pick what they need among ``model``, ``allocatable``, ``given``, ``registered``,
    ``in_use`` and ``waiting``; a row with a layer not read is worded by ``key.ray_unread``,
    ``key.kubernetes_unread`` or ``key.unread``, which name no figure of that layer.
    """
    return say(
        _unread_key(key, row),
        lang,
        model=escape(model_label(row.model, lang)),
        allocatable=row.allocatable,
        given=row.given_to_ray_pods,
        registered=row.registered_in_ray,
        in_use=row.in_use,
        waiting=row.pending_demand,
    )


def capacity_comment(capacity: Capacity, *, cluster: str, lang: Lang) -> str:
    """The figures in Slack mrkdwn, one line per model, for the message that carries the chart."""
    lines = [f"*{say('capacity.title', lang, cluster=f'`{escape(cluster)}`')}*"]
    lines += [f"• {describe_row('capacity.line', row, lang)}" for row in capacity.models]
    lines.append(f"_{gap_summary(capacity, lang)}_")
    return "\n".join(lines)
