"""The autoscaler's "No available node types can fulfill ..." messages, as Ray recorded them.

One reader (:mod:`bot.read.autoscaler_text`) serves the live ``cluster_events`` and pasted
driver output; these tests hold both to the messages real clusters wrote.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.collect.paste import parse_paste
from bot.read.autoscaler_text import INFEASIBLE_EVENT, InfeasibleRequests, infeasible_requests
from bot.snapshot.ray import Demand
from tests.support.corpus import CORPUS

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ray"
RECORDED = CORPUS / "recorded"


def _messages(value: object) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "message" and isinstance(item, str):
                yield item
            else:
                yield from _messages(item)
    elif isinstance(value, list):
        for item in value:
            yield from _messages(item)


def recorded_events() -> list[tuple[str, str]]:
    """(folder, message) for every infeasible-request event of every recorded cluster."""
    found: dict[str, str] = {}
    for path in sorted(FIXTURES.glob("**/cluster_events.json")):
        for message in _messages(json.loads(path.read_text(encoding="utf-8"))):
            if INFEASIBLE_EVENT in message:
                found.setdefault(message, str(path.parent.relative_to(FIXTURES)))
    return [(folder, message) for message, folder in found.items()]


EVENTS = recorded_events()


def pasted_demands(text: str) -> list[Demand]:
    ray = parse_paste(text).ray
    assert ray is not None
    return ray.demands


def test_the_recordings_hold_every_form_of_the_message() -> None:
    folders = {folder for folder, _ in EVENTS}
    messages = [message for _, message in EVENTS]
    assert {"broken", "broken-autoscaler-v2", "2.20.0/strict-pack-pg"} <= folders
    assert any("defaultdict(" in m for m in messages)  # v1, a STRICT_PACK group summed
    assert any("resource requests {" in m for m in messages)  # v2, several with counts
    assert any("placement group requests (detail=" in m for m in messages)  # v2, a group apart


@pytest.mark.parametrize(("folder", "message"), EVENTS, ids=[f"{f}-{i}" for i, (f, _) in enumerate(EVENTS)])
def test_a_pasted_event_gives_what_the_live_reader_reads(folder: str, message: str) -> None:
    live = infeasible_requests(message)
    demands = pasted_demands(message)

    assert demands and all(d.infeasible and d.source_text == message for d in demands)
    if live.bundles:
        (group,) = demands
        assert group.kind == "placement_group" and group.bundles == live.bundles
    else:
        assert [(d.kind, d.shape, d.count) for d in demands] == [
            ("task_or_actor", shape, count) for shape, count in live.shapes
        ]


def test_v1_writes_one_shape_per_event() -> None:
    (message,) = [m for f, m in EVENTS if f == "2.60.0/too-many-gpus"]
    assert infeasible_requests(message) == InfeasibleRequests(shapes=[({"CPU": 1.0, "GPU": 4.0}, 1)])


def test_v1_writes_a_strict_pack_group_as_the_sum_of_its_bundles() -> None:
    (message,) = [m for f, m in EVENTS if f == "2.20.0/strict-pack-pg"]
    assert infeasible_requests(message) == InfeasibleRequests(shapes=[({"CPU": 2.0, "GPU": 2.0}, 1)])


def test_v2_lists_every_request_with_its_count() -> None:
    (message,) = [m for f, m in EVENTS if f == "broken-autoscaler-v2" and "resource requests" in m]
    assert infeasible_requests(message).shapes == [
        ({"accelerator_type:H100": 1.0, "GPU": 1.0, "CPU": 1.0}, 1),
        ({"accelerator_type:A100": 1.0, "GPU": 1.0, "CPU": 1.0}, 1),
        ({"GPU": 4.0, "CPU": 1.0}, 1),
        ({"GPU": 2.0, "CPU": 0.1}, 1),
        ({"GPU": 2.0}, 1),
    ]


def test_v2_writes_a_placement_group_as_its_bundles() -> None:
    (message,) = [m for f, m in EVENTS if f == "broken-autoscaler-v2" and "placement group" in m]
    assert infeasible_requests(message) == InfeasibleRequests(bundles=[{"GPU": 1.0, "CPU": 1.0}] * 2)


def test_driver_output_with_the_autoscaler_prefix_and_colours() -> None:
    text = (RECORDED / "v2-strict-pack-gpu-driver-output.txt").read_text(encoding="utf-8")
    line = next(line for line in text.splitlines() if INFEASIBLE_EVENT in line)
    assert line.startswith("\x1b[36m(autoscaler +")

    assert infeasible_requests(line) == InfeasibleRequests(bundles=[{"CPU": 1.0, "GPU": 1.0}] * 2)
    groups = [d for d in pasted_demands(text) if d.kind == "placement_group"]
    assert groups and all(d.infeasible and d.bundles == [{"CPU": 1.0, "GPU": 1.0}] * 2 for d in groups)


def test_other_text_says_nothing() -> None:
    assert infeasible_requests("Resized to 7 CPUs, 2 GPUs.") == InfeasibleRequests()
    assert infeasible_requests("") == InfeasibleRequests()
