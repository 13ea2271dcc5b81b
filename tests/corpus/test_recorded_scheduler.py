"""The recorded-scheduler batch: the real kube-scheduler's wording of every Kubernetes-layer
scenario, from at least three minor releases (``tools/record_scheduler_corpus.py``).

The scheduler's words changed between releases and people paste whichever their cluster runs, so
each scenario must be there in several releases' words, each printed by the real programs. The batch is scored with the rest of the corpus
(test_corpus_accuracy.py); here every one of its cases must also be read with its true cause
first, since a release whose wording raydiag misses is exactly what the batch is for.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict

from benchmarks.corpus_eval import evaluate, load_corpus
from tests.support.corpus import CORPUS

BATCH = CORPUS / "recorded-scheduler"
MIN_RELEASES = 3
# The scenarios issue 24 names for the Kubernetes layer, as the recorder's file stems.
SCENARIOS = {
    "insufficient-cpu",
    "insufficient-memory",
    "insufficient-gpu",
    "gpu-fragmentation",
    "untolerated-gpu-taint",
    "node-selector-mismatch",
    "node-affinity-zone",
    "pod-anti-affinity",
    "topology-spread",
    "cordoned-gpu-nodes",
    "unbound-immediate-claim",
    "no-persistent-volume-to-bind",
    "volume-node-affinity-conflict",
    "host-port-taken",
    "too-many-pods",
    "gpu-quota-exceeded",
}
FILE = re.compile(r"^(?P<stem>[a-z0-9-]+)-(?P<minor>v1\.\d+)\.txt$")


def _entries() -> list[dict[str, object]]:
    entries: list[dict[str, object]] = json.loads((BATCH / "expected.json").read_text())
    return entries


def test_every_scenario_is_recorded_from_at_least_three_releases() -> None:
    releases: dict[str, set[str]] = defaultdict(set)
    for entry in _entries():
        match = FILE.match(str(entry["file"]))
        assert match, entry["file"]
        releases[match["stem"]].add(match["minor"])
    assert set(releases) == SCENARIOS
    few = {stem: sorted(minors) for stem, minors in releases.items() if len(minors) < MIN_RELEASES}
    assert few == {}


def test_each_case_is_the_real_programs_output_with_its_release_named() -> None:
    for entry in _entries():
        file = str(entry["file"])
        text = (BATCH / file).read_text()
        minor = file.rsplit("-", 1)[1].removesuffix(".txt")
        assert entry["kind"] == "recorded"
        assert entry["layer"] == "k8s"
        assert str(entry["source"]).startswith("tools/record_scheduler_corpus.py ")
        assert f"kube-scheduler {minor}." in str(entry["source"]), entry["source"]
        assert text.startswith("$ kubectl "), file
        if file.startswith("gpu-quota-exceeded"):
            assert "exceeded quota" in text, file
        else:
            assert "FailedScheduling" in text and "default-scheduler" in text, file


def test_every_release_s_wording_is_read_with_the_true_cause_first() -> None:
    cases = [case for case in load_corpus(CORPUS) if case.batch == BATCH.name]
    outcomes, _ = evaluate(cases)
    missed = {o.case.id: (o.case.causes, o.found, o.rules) for o in outcomes if not o.hit or not o.recalled}
    assert len(outcomes) == len(_entries())
    assert missed == {}
