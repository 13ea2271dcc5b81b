"""The line index behind every prefiltered reader: which lines a pattern could match.

The index must never drop a line a pattern matches (a prefilter that is only a speed-up), must
give the same lines whether it scans the joined text or each line, and must map positions back to
the snapshot's texts and events in order.
"""

from __future__ import annotations

import importlib
import re

import pytest

from bot.classify.context import MAX_SEARCHED, Context
from bot.classify.lines import LineIndex, needles
from bot.snapshot.kubernetes import Event, KubernetesState
from bot.snapshot.model import Snapshot, TextLine


def _index(lines: list[str]) -> LineIndex:
    return LineIndex([line[:MAX_SEARCHED] for line in lines], [len(line) > MAX_SEARCHED for line in lines])


def test_the_joined_scan_finds_what_a_test_of_each_line_finds() -> None:
    lines = ["Abc def", "xyz", "abc", "", "qqq ABC", "ab", "c", "xabcx abc", "abc"]
    index = _index(lines)
    for needle in ("abc", "xyz", "qqq", "nothing", "c x", "bc"):
        expected = {i for i, line in enumerate(dict.fromkeys(lines)) if needle in line.lower()}
        assert set(index.holding(needle)) == expected, needle


def test_a_needle_never_spans_two_lines() -> None:
    index = _index(["ends with ab", "cd starts"])
    assert index.holding("ab\0cd") == frozenset()
    assert index.holding("abcd") == frozenset()
    assert index.candidates(("abcd",)) == []


def test_repeated_lines_are_all_candidates_in_order() -> None:
    lines = ["Insufficient nvidia.com/gpu", "other", "Insufficient nvidia.com/gpu", "nvidia.com/gpu: 0"]
    assert _index(lines).candidates((r"nvidia\.com/gpu",)) == [0, 2, 3]


def test_a_line_longer_than_the_searched_part_is_always_a_candidate() -> None:
    long = "x" * (MAX_SEARCHED + 10) + " Failed to connect to GCS"
    index = _index(["short line", long])
    assert index.candidates(("Failed to connect to GCS",)) == [1]
    assert re.search("Failed to connect to GCS", long)


def test_a_pattern_without_needles_makes_every_line_a_candidate() -> None:
    assert _index(["a", "b"]).candidates((r"\d+",)) is None


def test_a_compiled_pattern_is_read_with_its_own_flags() -> None:
    verbose = re.compile(r"exceeded \  quota  # the refusal", re.VERBOSE)
    assert needles((verbose,)) == frozenset({"exceeded quota"})
    # Read without the flag, the spaces and the comment would be taken for text.
    assert needles((verbose.pattern,)) != frozenset({"exceeded quota"})


def test_events_and_texts_map_back_in_order() -> None:
    events = [
        Event(reason="FailedScheduling", message="0/3 nodes are available: 3 Insufficient nvidia.com/gpu."),
        Event(reason="Pulled", message="Successfully pulled image"),
        Event(reason="FailedCreate", message='pods "w" is forbidden: exceeded quota: gpu-quota'),
    ]
    snapshot = Snapshot(
        kubernetes=KubernetesState(events=events),
        texts=[
            TextLine(source="paste", text="Error: exceeded quota: gpu-quota, requested: nvidia.com/gpu=1")
        ],
    )
    ctx = Context(snapshot)
    quota = re.compile(r"exceeded quota")
    assert [e.reason for e in ctx.events_that_may_match(quota)] == ["FailedCreate"]
    assert [t.source for t in ctx.texts_that_may_match(quota)] == ["event", "paste"]
    assert set(ctx.lines_that_may_match(quota)) == {2, 3}
    assert len(ctx.texts_that_may_match(re.compile(r"\w+"))) == 4  # no needle: every text


# The patterns the readers of events and logs prefilter with: each must have needles, or its
# reader silently searches every line again.
PREFILTERED = [
    ("bot.classify.detectors.kubernetes", "_QUOTA_WORDS"),
    ("bot.classify.detectors.kubernetes", "_DENIED"),
    ("bot.classify.detectors.kubernetes", "_BARE_VIOLATION"),
    ("bot.classify.detectors.kubernetes", "_GPU_RESOURCE_NAMED"),
    ("bot.classify.detectors.gpu_stack", "_IDLE_ROW"),
    ("bot.classify.detectors.gpu_stack", "_IDLE_TOLD"),
    ("bot.classify.detectors.autoscaling", "_CANT_SCHEDULE"),
    ("bot.classify.detectors.autoscaling", "_PREDICATE_MISMATCH"),
    ("bot.classify.detectors.autoscaling", "_MESSAGE_ID"),
    ("bot.read.scheduler_message", "SCALE_UP_REFUSAL"),
    ("bot.classify.capacity", "_RAY_ADDING_NODES"),
]


@pytest.mark.parametrize(("module", "name"), PREFILTERED)
def test_every_prefiltered_pattern_has_needles(module: str, name: str) -> None:
    pattern = getattr(importlib.import_module(module), name)
    assert needles((pattern,)) is not None


def test_the_kubelet_and_scheduler_wordings_have_needles() -> None:
    kubelet = importlib.import_module("bot.read.kubelet_message")
    scheduler = importlib.import_module("bot.read.scheduler_message")
    assert needles(tuple(kubelet.WORDING)) is not None
    assert needles(tuple(scheduler.SCHEDULER_HEADS)) is not None
