"""The capacity PNG: decodes, has the asked size, draws the five stages per model, never drifts."""

from __future__ import annotations

import io
import sys
from collections.abc import Iterator
from pathlib import Path

import matplotlib
import numpy as np
import pytest
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from PIL import Image

from bot.classify import classify
from bot.diagnosis import Capacity, GpuModelCapacity, ReadLayer
from bot.read.snapshot_file import parse_snapshot
from bot.render import capacity_chart
from bot.render.capacity_chart import capacity_figure, chart_style, render_capacity_png
from tests.support import scenarios

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
from render_capacity_example import example_figures, example_png  # noqa: E402

BOTH: list[ReadLayer] = ["kubernetes", "ray"]
NEVER_JOINED = classify(parse_snapshot(scenarios.gpu_worker_runs_but_never_joined().to_json())).capacity
TWO_MODELS = Capacity(
    layers_read=BOTH,
    models=[GpuModelCapacity("A100", 8, 8, 4, 1, 4), GpuModelCapacity("H100", 0, 0, 0, 0, 2)],
)


def decode(png: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(png))
    image.load()
    assert image.format == "PNG"
    return image


def bars(figure: Figure) -> dict[str, list[float]]:
    """Bar heights by stage, read back from the drawn figure."""
    [axes] = figure.axes
    heights: dict[str, list[float]] = {}
    for container in axes.containers:
        patches = [p for p in container if isinstance(p, Rectangle)]
        heights[str(patches[0].get_gid())] = [p.get_height() for p in patches]
    return heights


def texts(figure: Figure) -> list[str]:
    return [t.get_text() for t in figure.findobj(matplotlib.text.Text) if t.get_text()]


@pytest.fixture
def no_cjk_font(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(capacity_chart, "cjk_font_family", lambda: None)
    yield


def test_png_decodes_at_the_asked_size() -> None:
    assert decode(render_capacity_png(NEVER_JOINED, cluster="raycluster-gpu", lang="en")).size == (1200, 600)
    small = render_capacity_png(TWO_MODELS, cluster="gpu-prod", lang="en", width_px=801, height_px=433)
    assert decode(small).size == (801, 433)


@pytest.mark.parametrize(("width", "height"), [(0, 600), (1200, 10), (100_000, 600), (1200, -5)])
def test_unreasonable_sizes_are_refused(width: int, height: int) -> None:
    with pytest.raises(ValueError, match="between 200 and 4000 pixels"):
        render_capacity_png(TWO_MODELS, cluster="c", lang="en", width_px=width, height_px=height)


def test_five_bars_per_model_carry_the_figures() -> None:
    with chart_style("en"):
        figure = capacity_figure(TWO_MODELS, cluster="gpu-prod", lang="en")
    assert bars(figure) == {
        "allocatable": [8, 0],
        "given_to_ray_pods": [8, 0],
        "registered_in_ray": [4, 0],
        "in_use": [1, 0],
        "pending_demand": [4, 2],
    }
    [axes] = figure.axes
    assert [t.get_text() for t in axes.get_xticklabels()] == ["A100", "H100"]
    assert [t.get_text() for t in axes.get_legend().get_texts()] == [
        "Allocatable on Kubernetes nodes",
        "Given to Ray Pods",
        "Registered in Ray",
        "In use by actors/tasks",
        "Waiting to be placed",
    ]
    shown = texts(figure)
    assert "GPUs of gpu-prod, layer by layer" in shown
    assert "A100: 4 of the 8 GPUs given to Ray Pods are not registered in Ray (causes 4 and 8)" in shown
    # Every bar is labelled with its number.
    labels = [t.get_text() for t in axes.texts]
    assert sorted(labels) == sorted(["8", "0", "8", "0", "4", "0", "1", "0", "4", "2"])


def test_a_healthy_cluster_says_every_gpu_arrived() -> None:
    healthy = classify(parse_snapshot(scenarios.healthy().to_json())).capacity
    with chart_style("en"):
        figure = capacity_figure(healthy, cluster="raycluster-gpu", lang="en")
    assert bars(figure)["registered_in_ray"] == [8]
    assert "Every GPU given to a Ray Pod is registered in Ray." in texts(figure)


def test_no_gpu_anywhere_is_drawn_as_a_sentence_not_an_empty_axis() -> None:
    with chart_style("en"):
        figure = capacity_figure(Capacity(layers_read=BOTH), cluster="cpu-only", lang="en")
    assert bars(figure) == {}
    assert any(t.startswith("Neither layer shows a GPU") for t in texts(figure))
    png = render_capacity_png(Capacity(layers_read=BOTH), cluster="cpu-only", lang="en")
    assert decode(png).size == (1200, 600)


def test_many_models_are_capped() -> None:
    many = Capacity(layers_read=BOTH, models=[GpuModelCapacity(f"M{i}", i, i, i, 0, 0) for i in range(1, 20)])
    with chart_style("en"):
        figure = capacity_figure(many, cluster="c", lang="en")
    assert len(bars(figure)["allocatable"]) == capacity_chart.MAX_MODELS


def test_same_figures_give_the_same_bytes_without_a_software_stamp() -> None:
    first = render_capacity_png(TWO_MODELS, cluster="gpu-prod", lang="en")
    assert first == render_capacity_png(TWO_MODELS, cluster="gpu-prod", lang="en")
    assert "Software" not in decode(first).info


def test_drawing_leaves_the_backend_and_settings_of_the_host_alone() -> None:
    backend = matplotlib.get_backend()
    plain = render_capacity_png(TWO_MODELS, cluster="gpu-prod", lang="en")
    with matplotlib.rc_context({"font.size": 22, "axes.facecolor": "black", "figure.dpi": 300}):
        # A host application's style does not leak into the picture...
        assert render_capacity_png(TWO_MODELS, cluster="gpu-prod", lang="en") == plain
        # ...and the picture's style does not leak out.
        assert matplotlib.rcParams["font.size"] == 22
        assert matplotlib.rcParams["axes.facecolor"] == "black"
    assert matplotlib.get_backend() == backend


def test_chinese_chart_falls_back_to_english_labels_without_a_cjk_font(no_cjk_font: None) -> None:
    with chart_style("zh"):
        figure = capacity_figure(TWO_MODELS, cluster="gpu-prod", lang="zh")
    shown = " ".join(texts(figure))
    assert "Registered in Ray" in shown
    assert not any("\u4e00" <= char <= "\u9fff" for char in shown)
    assert decode(render_capacity_png(TWO_MODELS, cluster="gpu-prod", lang="zh")).size == (1200, 600)


def test_chinese_chart_uses_chinese_labels_when_a_cjk_font_exists(monkeypatch: pytest.MonkeyPatch) -> None:
    # Stand-in family: only the choice of labels is checked here, not the glyphs.
    monkeypatch.setattr(capacity_chart, "cjk_font_family", lambda: "DejaVu Sans")
    figure = capacity_figure(TWO_MODELS, cluster="gpu-prod", lang="zh")
    [axes] = figure.axes
    assert [t.get_text() for t in axes.get_legend().get_texts()][2] == "已在 Ray 中登记"
    assert "gpu-prod 的 GPU，逐层看" in texts(figure)


def test_the_font_search_only_accepts_fonts_that_cover_the_chinese_labels() -> None:
    family = capacity_chart.cjk_font_family()
    if family is None:
        assert capacity_chart.chart_language("zh") == "en"
        return
    from matplotlib import font_manager
    from matplotlib.ft2font import FT2Font

    path = font_manager.findfont(font_manager.FontProperties(family=family), fallback_to_default=False)
    charmap = FT2Font(path).get_charmap()
    assert all(ord(c) in charmap for c in capacity_chart._chinese_characters())


def test_docs_image_is_what_the_tool_draws() -> None:
    committed = decode((ROOT / "docs" / "capacity.png").read_bytes())
    fresh = decode(example_png())
    assert committed.size == fresh.size == (1200, 600)
    assert np.array_equal(np.asarray(committed), np.asarray(fresh)), (
        "run `.venv/bin/python tools/render_capacity_example.py`"
    )


def test_docs_example_shows_the_gap_it_is_meant_to_show() -> None:
    rows = {row.model: row for row in example_figures().models}
    assert (rows["A100"].given_to_ray_pods, rows["A100"].registered_in_ray) == (8, 4)
    assert rows["H100"].pending_demand == 2
