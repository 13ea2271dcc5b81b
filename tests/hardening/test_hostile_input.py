"""Hostile and accidental input: every paste parser and the ``/raydiag`` grammar, fuzzed.

``parse_paste`` wraps its parsers in safety nets (a parser that raises costs one block, with a
note), so fuzzing only ``parse_paste`` would hide a parser that crashes. These tests call every
parser of ``bot/collect/paste/`` directly, the way the scanner does but without its nets, on
cleaned lines of real tool output that hypothesis mutates (cut, spliced with junk, characters
replaced) and on arbitrary text, control characters and 10,000-character lines included; and the
manifest readers on arbitrary JSON-like documents. Any exception fails the test.

``parse_command`` gets any text a Slack user can type, and the schedule grammar with random cron
fields, time zones and modes: it never raises, and the only clusters it ever returns are the
configured ones (nothing typed reaches a shell, a URL or a selector).

``RAYDIAG_FUZZ_SCALE=20`` multiplies every example count, for a deeper hunt than a test run.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any, get_args

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.collect.paste import assemble, parse_paste
from bot.config import ClusterConfig, Config
from bot.read import (
    columns,
    counts,
    json_blocks,
    kubectl_describe,
    kubectl_events,
    kubectl_tables,
    loose_lines,
    manifests,
    node_types,
    ray_messages,
    serve_status,
    shell,
    yaml_blocks,
)
from bot.read import ray_resource_maps as ray_resources
from bot.read import ray_status_block as ray_status
from bot.read import scan as split
from bot.read.cleaning import clean
from bot.read.found import Found
from bot.slack.commands import Kind, named_clusters, parse_command
from bot.snapshot.model import Snapshot
from tests.paste.test_paste_robustness import FRAGMENTS
from tests.support.corpus import EXAMPLES

REAL = [*FRAGMENTS, *(p.read_text(encoding="utf-8") for p in sorted(EXAMPLES.glob("*.txt")))]
SCALE = int(os.environ.get("RAYDIAG_FUZZ_SCALE", "1"))


def fuzz(examples: int) -> settings:
    return settings(
        max_examples=examples * SCALE, deadline=None, suppress_health_check=[HealthCheck.too_slow]
    )


FUZZ = fuzz(120)

# Any code point a paste can carry: letters, digits, symbols, spacing, control and format
# characters (NUL, ESC, zero-width joiners, bidi overrides), private use and lone surrogates.
ANY_CHAR = st.characters(codec=None, categories=["L", "M", "N", "P", "S", "Z", "Cc", "Cf", "Co", "Cs"])
JUNK = st.text(ANY_CHAR | st.sampled_from("{}[]()<>:/*&|#'\"`-=,. \n\t\r\x00\x1b"), max_size=200)
LONG_LINE = st.builds(
    lambda ch, n: ch * n,
    st.sampled_from(["(", "{", "a", " ", "0/", "{'CPU': ", "\x1b[", "é"]),
    st.integers(5_000, 10_000),
)

# Hypothesis draws at most a few thousand characters at once; a drawn piece repeated fills 10,000.
TEN_THOUSAND = st.text(ANY_CHAR, min_size=1, max_size=300).map(
    lambda s: (s * (10_000 // len(s) + 1))[:10_000]
)


@st.composite
def mutated_sample(draw: st.DrawFn) -> str:
    """A real sample, cut where hypothesis likes and with junk spliced in at a few places."""
    text = draw(st.sampled_from(REAL))
    start = draw(st.integers(0, len(text)))
    end = draw(st.integers(start, len(text)))
    text = text[start:end] if draw(st.booleans()) else text
    for _ in range(draw(st.integers(0, 4))):
        at = draw(st.integers(0, len(text)))
        cut = draw(st.integers(0, 20))
        text = text[:at] + draw(JUNK | LONG_LINE) + text[at + cut :]
    return text


PASTES = mutated_sample() | st.lists(mutated_sample() | JUNK, max_size=4).map("\n".join) | JUNK | LONG_LINE


def lines_of(text: str, limit: int = 60) -> list[str]:
    """Cleaned lines, the form every block parser receives from the scanner."""
    return clean(text).lines[:limit]


def run_every_parser(lines: Sequence[str], namespace: str | None) -> Found:
    """Every recogniser at every line, and every block reader where its recogniser says yes."""
    found = Found()
    for i, line in enumerate(lines):
        shell.parse(line)
        kubectl_events.read_row(line, namespace)
        kubectl_events.read_bare(line)
        ray_messages.read_message(line, found)
        ray_resources.parse_usage(line)
        ray_resources.find_maps(line)
        ray_resources.parse_amount_text(line)
        ray_resources.parse_resource_map(line)
        ray_messages.starts_message(line)
        loose_lines.looks_like_message(line)
        kubectl_events.is_karpenter(line)
        counts.parse_count(line)
        columns.slice_row(line, columns.header_columns(lines[0]))
        if json_blocks.is_start(lines, i):
            block = json_blocks.read(lines, i)
            if block.parsed:
                manifests.read_document(block.value, found)
        if ray_status.is_start(lines, i):
            ray_status.parse(lines[i : ray_status.extent(lines, i)], found)
        if yaml_blocks.start_kind(lines, i) is not None:
            documents, _ = yaml_blocks.load(lines[i : yaml_blocks.extent(lines, i)])
            for document in documents:
                manifests.read_document(document, found)
                node_types.node_types_from(document)
                serve_status.serve_applications_from(document)
        if kubectl_describe.is_start(lines, i):
            kubectl_describe.parse(lines[i : kubectl_describe.extent(lines, i)], found, namespace)
        if kubectl_tables.is_pods_start(lines, i):
            kubectl_tables.parse_pods(lines, i, found, namespace)
        if kubectl_tables.is_ray_resources_start(lines, i):
            kubectl_tables.parse_ray_resources(lines, i, found, namespace)
        if kubectl_events.is_table_start(lines, i):
            kubectl_events.parse_table(lines, i, found, namespace)
    loose_lines.read_run(lines, found, namespace)
    return found


@FUZZ
@given(PASTES, st.sampled_from([None, "ml", "kube-system"]))
def test_every_paste_parser_takes_mutated_real_output_without_raising(
    text: str, namespace: str | None
) -> None:
    found = run_every_parser(lines_of(text), namespace)
    snapshot = assemble.build(found)
    assert isinstance(snapshot, Snapshot)
    snapshot.to_json()


@FUZZ
@given(PASTES)
def test_the_scanner_needs_none_of_its_safety_nets(text: str) -> None:
    found = Found()
    split.scan(clean(text).lines, found)
    assert not [note for note in found.notes if "parser error" in note], found.notes
    snapshot = parse_paste(text)
    assert not [note for note in snapshot.notes if "parser error" in note], snapshot.notes


# Documents come from the JSON and YAML readers, which read cleaned text: no surrogates, no controls.
DOCUMENT_TEXT = st.text(st.characters(codec="utf-8", categories=["L", "M", "N", "P", "S", "Zs"]), max_size=60)
JSON_LEAF = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | DOCUMENT_TEXT
    | st.sampled_from(
        ["Pending", "Running", "nvidia.com/gpu", "4", "16Gi", "1e999", "-1", "NaN", "", "ray.io/v1"]
    )
)
KINDS = ["Pod", "Node", "Event", "List", "PodList", "RayCluster", "RayJob", "RayService", "ResourceQuota"]
KEYS = [
    "metadata",
    "spec",
    "status",
    "items",
    "containers",
    "resources",
    "limits",
    "requests",
    "name",
    "namespace",
    "labels",
    "conditions",
    "allocatable",
    "taints",
    "workerGroupSpecs",
    "headGroupSpec",
    "template",
    "rayStartParams",
    "available_node_types",
    "applications",
    "deployments",
    "message",
]


def json_like() -> st.SearchStrategy[Any]:
    return st.recursive(
        JSON_LEAF,
        lambda inner: (
            st.lists(inner, max_size=4)
            | st.dictionaries(st.sampled_from(KEYS) | DOCUMENT_TEXT, inner, max_size=5)
        ),
        max_leaves=40,
    )


@FUZZ
@given(
    st.sampled_from(KINDS),
    st.sampled_from(["v1", "ray.io/v1", "ray.io/v1alpha1", 7, None]),
    json_like(),
    json_like(),
)
def test_manifest_readers_take_any_document_shape(
    kind: str, api_version: object, spec: Any, status: Any
) -> None:
    document = {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {"name": "x"},
        "spec": spec,
        "status": status,
    }
    for doc in (document, {"kind": "List", "items": [document, spec, status]}, spec, [status]):
        found = Found()
        manifests.read_document(doc, found)
        node_types.node_types_from(doc)
        serve_status.serve_applications_from(doc)
        assemble.build(found).to_json()


@fuzz(60)
@given(TEN_THOUSAND | LONG_LINE)
def test_ten_thousand_characters_of_anything_give_a_snapshot(text: str) -> None:
    snapshot = parse_paste(text)
    assert snapshot.notes
    assert not [note for note in snapshot.notes if "parser error" in note], snapshot.notes


def test_a_lone_surrogate_from_a_slack_event_still_gives_a_snapshot_that_writes_as_json() -> None:
    """Slack events are JSON; ``json.loads`` turns an unpaired ``\\ud83d`` into a lone surrogate."""
    ray_status_paste = FRAGMENTS[0]
    event = json.loads(json.dumps({"text": "\ud83d" + ray_status_paste + "gcs \ude00 down"}))

    snapshot = parse_paste(event["text"])

    assert snapshot.ray is not None and {"GPU": 16.0} in [d.shape for d in snapshot.ray.demands]
    written = json.loads(snapshot.to_json())
    assert "gcs \ufffd down" in [line["text"] for line in written["texts"]]


# --- /raydiag arguments ----------------------------------------------------------------------------

CONFIG = Config(
    clusters=[
        ClusterConfig(name="gpu-prod", namespace="ml", raycluster="raycluster-gpu"),
        ClusterConfig(name="cpu-dev", namespace="dev"),
    ]
)
KINDS_OF_COMMAND = set(get_args(Kind))
CRON_FIELD = st.text(
    alphabet="0123456789*/,-?LW#abcdefjmnorstuvyADEFJMNOSTUW", min_size=1, max_size=12
) | st.sampled_from(
    ["*", "*/5", "0", "9", "1-5", "mon-fri", "JAN", "99999999999999999999", "*/0", "5-1", "L", "?", "1,2,3"]
)
TIME_ZONE = st.sampled_from(
    [
        "",
        "UTC",
        "Asia/Shanghai",
        "America/New_York",
        "Etc/GMT+14",
        "Mars/Olympus",
        "../../etc/passwd",
        "/etc/localtime",
        ".",
        "Europe/Berlin\x00",
        "UTC" * 30,
    ]
) | st.text(ANY_CHAR, max_size=20)
WORD = (
    st.sampled_from(["gpu-prod", "cpu-dev", "schedule", "GPU-PROD", "quiz", "help", "capacity", "stats"])
    | JUNK
)


def _check(text: str) -> None:
    command = parse_command(text, CONFIG)
    assert command.kind in KINDS_OF_COMMAND
    assert command.cluster is None or command.cluster in CONFIG.clusters
    assert len(command.word) <= 200
    if command.kind in ("diagnose", "capacity", "schedule-add"):
        assert command.cluster is not None
    if command.kind == "schedule-add":
        assert command.schedule is not None and len(command.schedule.cron.split()) == 5
    for cluster in named_clusters(text, CONFIG):
        assert cluster in CONFIG.clusters


@fuzz(400)
@given(st.text(ANY_CHAR, max_size=300) | TEN_THOUSAND | LONG_LINE | st.lists(WORD, max_size=12).map(" ".join))
def test_any_slash_command_text_is_answered_with_a_configured_cluster_or_none(text: str) -> None:
    _check(text)


@fuzz(300)
@given(
    st.sampled_from(["add", "ADD", "remove", "list", "edit"]),
    WORD,
    st.lists(CRON_FIELD, min_size=0, max_size=7),
    TIME_ZONE,
    st.sampled_from(["", "changes", "digest", "DIGEST", "both"]),
)
def test_schedule_grammar_with_random_fields_never_raises(
    verb: str, cluster: str, fields: list[str], zone: str, mode: str
) -> None:
    _check(" ".join(["schedule", verb, cluster, *fields, zone, mode]))
