"""The capacity picture as a PNG: one group of five bars per GPU model.

The bars follow a GPU through the layers (allocatable → given to Ray Pods → registered in Ray →
in use → waiting), so a drop between two neighbours shows where GPUs go missing; the line under
the title says it in words for the biggest drop.

Drawn with matplotlib's Agg canvas directly (no pyplot): no GUI backend is ever selected and the
process-wide backend stays whatever the host application chose. Style settings are matplotlib's
defaults inside an ``rc_context`` held under a lock, so a user's matplotlibrc cannot change the
picture and two threads drawing at once cannot see each other's settings. Size, DPI and PNG
metadata are fixed, so the same figures give the same bytes (the committed docs image is checked
against a fresh rendering).

Chinese labels need a CJK font. One is looked for among the installed fonts; without one, the
chart falls back to English labels rather than drawing empty boxes (the Slack text and the CLI
table next to it stay in Chinese).
"""

from __future__ import annotations

import contextlib
import io
import threading
from collections.abc import Iterator
from functools import cache

import matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from bot.diagnosis import Capacity
from bot.render.capacity import (
    ANY_MODEL,
    STAGES,
    UNKNOWN_MODEL,
    format_gpus,
    gap_summary,
    model_label,
    unread_stages,
)
from bot.render.messages import Lang, say

DPI = 100
MIN_PX, MAX_PX = 200, 4000
MAX_MODELS = 12
STAGE_COLOURS = ("#4c72b0", "#55a868", "#8172b2", "#dd8452", "#c44e52")
STAGE_HATCHES = ("", "", "", "", "//")
GAP_COLOUR = "#b22222"
_CHART_KEYS = (
    "capacity.title",
    "capacity.axis",
    "capacity.none",
    "capacity.not_read",
    "capacity.stage_not_read",
    *(f"capacity.stage.{stage}" for stage in STAGES),
    *(f"capacity.model.{model}" for model in (UNKNOWN_MODEL, ANY_MODEL)),
    *(f"capacity.gap.{kind}" for kind in ("ray", "kubernetes", "none")),
    *(f"capacity.gap.{kind}" for kind in ("ray_unread", "kubernetes_unread", "unread")),
)
# Sentences under the title that tell no drop between the layers, drawn in grey rather than red.
_CALM_SUMMARIES = ("capacity.gap.none", "capacity.gap.ray_unread", "capacity.gap.kubernetes_unread")
_CJK_FAMILY_HINTS = (
    "cjk",
    "han sans",
    "han serif",
    "wenquanyi",
    "hei",
    "song",
    "ming",
    "kai",
    "yahei",
    "pingfang",
    "droid sans fallback",
    "noto sans sc",
    "noto sans tc",
)
_DRAWING = threading.Lock()


@cache
def _chinese_characters() -> frozenset[str]:
    """Every non-ASCII character the Chinese chart can draw; a font must cover them all."""
    return frozenset(char for key in _CHART_KEYS for char in say(key, "zh") if ord(char) > 0x7F)


@cache
def cjk_font_family() -> str | None:
    """The family name of an installed font that covers the Chinese labels, or None."""
    from matplotlib import font_manager  # noqa: PLC0415 - lazy: matplotlib only for a chart
    from matplotlib.ft2font import FT2Font  # noqa: PLC0415 - lazy: as above

    for entry in sorted(font_manager.fontManager.ttflist, key=lambda e: (e.name, e.fname)):
        name = entry.name.lower()
        if not any(hint in name for hint in _CJK_FAMILY_HINTS):
            continue
        try:
            charmap = FT2Font(entry.fname).get_charmap()
        except (OSError, RuntimeError, ValueError):
            continue
        if all(ord(char) in charmap for char in _chinese_characters()):
            return str(entry.name)
    return None


def chart_language(lang: Lang) -> Lang:
    """The language the chart can actually be drawn in on this machine."""
    return "zh" if lang == "zh" and cjk_font_family() is not None else "en"


def capacity_figure(
    capacity: Capacity,
    *,
    cluster: str,
    lang: Lang,
    width_px: int = 1200,
    height_px: int = 600,
) -> Figure:
    """The chart as a matplotlib ``Figure``, whose bars tests can read; drawn in ``chart_style``."""
    if not (MIN_PX <= width_px <= MAX_PX and MIN_PX <= height_px <= MAX_PX):
        raise ValueError(f"chart size must be between {MIN_PX} and {MAX_PX} pixels a side")
    lang = chart_language(lang)
    rows = capacity.models[:MAX_MODELS]
    figure = Figure(figsize=(width_px / DPI, height_px / DPI), dpi=DPI)
    FigureCanvasAgg(figure)
    # Margins in pixels, so the title, the summary line and the legend never overlap at any size.
    unread = unread_stages(capacity)
    # Stages marked "not read" make the legend longer than one line holds.
    legend_rows = 1 if width_px >= 1000 and not unread else 2
    top_px = 92 + 22 * legend_rows
    figure.subplots_adjust(
        left=70 / width_px, right=1 - 20 / width_px, top=1 - top_px / height_px, bottom=40 / height_px
    )
    axes = figure.add_subplot()
    figure.text(
        0.5,
        1 - 22 / height_px,
        say("capacity.title", lang, cluster=cluster),
        ha="center",
        va="center",
        fontsize=15,
        fontweight="bold",
    )
    axes.set_ylabel(say("capacity.axis", lang))
    axes.spines[["top", "right"]].set_visible(False)
    if not rows:
        axes.set_axis_off()
        summary = gap_summary(capacity, lang)
        axes.text(0.5, 0.5, summary, ha="center", va="center", transform=axes.transAxes)
        return figure
    summary = gap_summary(capacity, lang)
    figure.text(
        0.5,
        1 - 52 / height_px,
        summary,
        ha="center",
        va="center",
        fontsize=11,
        color="#333333" if summary in (say(key, lang) for key in _CALM_SUMMARIES) else GAP_COLOUR,
    )
    width = 0.8 / len(STAGES)
    positions = range(len(rows))
    for index, stage in enumerate(STAGES):
        offset = (index - (len(STAGES) - 1) / 2) * width
        values = [row.stages[index] for row in rows]
        heights = [value or 0 for value in values]
        label = say(f"capacity.stage.{stage}", lang)
        if stage in unread:  # an empty slot marked "not read", not a bar of 0
            label = say("capacity.stage_not_read", lang, stage=label)
        bars = axes.bar(
            [p + offset for p in positions],
            heights,
            width * 0.92,
            label=label,
            color=STAGE_COLOURS[index],
            hatch=STAGE_HATCHES[index],
            edgecolor="white" if not STAGE_HATCHES[index] else "#7a2e31",
            linewidth=0.6,
            gid=stage,
        )
        labels = [format_gpus(value, lang) for value in values]
        if stage in unread:
            axes.bar_label(bars, labels=labels, padding=2, fontsize=9, rotation=90, color="#666666")
        else:
            axes.bar_label(bars, labels=labels, padding=2, fontsize=9)
    axes.set_xticks(list(positions), [model_label(row.model, lang) for row in rows], fontsize=11)
    top = max((value for row in rows for value in row.stages if value is not None), default=0)
    axes.set_ylim(0, max(1.0, top) * 1.15)
    axes.yaxis.set_major_locator(MaxNLocator(integer=True))
    axes.grid(axis="y", color="#e5e5e5", linewidth=0.8)
    axes.set_axisbelow(True)
    axes.legend(
        loc="lower center",
        bbox_to_anchor=(0.5, 1.0),
        ncol=len(STAGES) if legend_rows == 1 else 3,
        frameon=False,
        fontsize=10,
    )
    return figure


@contextlib.contextmanager
def chart_style(lang: Lang) -> Iterator[None]:
    """matplotlib's default style and the font for ``lang``, one chart at a time, restored after."""
    family = cjk_font_family() if chart_language(lang) == "zh" else None
    with _DRAWING, matplotlib.rc_context():
        matplotlib.rcdefaults()
        matplotlib.rcParams["font.family"] = [family, "DejaVu Sans"] if family else ["DejaVu Sans"]
        yield


def render_capacity_png(
    capacity: Capacity,
    *,
    cluster: str,
    lang: Lang,
    width_px: int = 1200,
    height_px: int = 600,
) -> bytes:
    """The chart as PNG bytes of exactly ``width_px`` × ``height_px``; the same input, the same bytes."""
    buffer = io.BytesIO()
    with chart_style(lang):
        figure = capacity_figure(capacity, cluster=cluster, lang=lang, width_px=width_px, height_px=height_px)
        figure.savefig(buffer, format="png", dpi=DPI, metadata={"Software": None})
    return buffer.getvalue()
