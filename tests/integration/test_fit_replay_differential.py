"""raydiag's fit replay (bot/classify/fit.py) against the real kube-scheduler, case by case.

Hypothesis generates node-and-Pod cases (tests/support/fit_cases.py: 1-6 Nodes with cpu, memory,
GPUs, Pod slots, labels, taints and cordons, Pods already bound to them, one Pod with requests,
selectors, tolerations, node and pod affinity); each is created on the real control plane, the
real scheduler places or refuses the Pod, and the replay judges the same objects read back through
raydiag's collector path. A placement agrees when the replay finds room on that Node; a refusal
when the replay counts every reason on as many Nodes as the scheduler's message. A placed Pod is
then tried again kept off the Nodes it went to, until the scheduler refuses it, so the replay's
whole set of fitting Nodes is checked.

Every disagreement is either a replay bug (fixed in bot/) or a difference listed in
``KNOWN_DIFFERENCES`` with its reason; the run fails on any other. The figures (cases, agreement)
are printed at the end of the run (tests/conftest.py, ``pytest_terminal_summary``).
"""

from __future__ import annotations

import subprocess
import time
from collections import Counter
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, Phase, given, settings

from bot.read.scheduler_message import parse_scheduler_message
from tests.support.controlplane import ControlPlane
from tests.support.figures import FIGURE
from tests.support.fit_cases import FitBench, Scenario, Verdict, scenarios

# One control plane: the real-Ray group runs its modules one at a time (see the smoke test).
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("real-ray")]

CASES = 500
# Differences the replay keeps on purpose: name -> (does a case have it, why the replay differs).
# Empty while every generated case agrees; a feature the replay leaves out goes here with its
# reason rather than out of the generator.
KNOWN_DIFFERENCES: dict[str, tuple[Callable[[Scenario], bool], str]] = {}
# What the cases must reach, so that agreement is not bought by easy cases.
MIN_PLACED = 90
MIN_REFUSED = 300
# Every reason the replay models must have been given by the scheduler at least once.
REASONS = {
    "Insufficient cpu",
    "Insufficient memory",
    "Insufficient nvidia.com/gpu",
    "Insufficient ephemeral-storage",
    "Too many pods",
    "node(s) were unschedulable",
    "node(s) had untolerated taint(s)",
    "node(s) didn't match Pod's node affinity/selector",
    "node(s) didn't satisfy plugin(s) [NodeAffinity]",
    "node(s) didn't match pod affinity rules",
    "node(s) didn't match pod anti-affinity rules",
    "node(s) didn't satisfy existing pods anti-affinity rules",
}
FEATURES = {
    "nodeSelector",
    "tolerations",
    "nodeAffinity",
    "matchFields",
    "podAffinity",
    "podAntiAffinity",
    "initContainers",
    "resources",
    "taints",
    "cordon",
    "overhead",
    "existingAntiAffinity",
}


def _scheduler_version(plane: ControlPlane) -> str:
    done = subprocess.run(
        [str(plane.binaries.kube_scheduler), "--version"], capture_output=True, text=True, check=True
    )
    return done.stdout.split()[-1]


def _described(verdict: Verdict) -> str:
    lines = [f"case {verdict.case}: pod spec {verdict.scenario.pod['spec']}"]
    for r in verdict.rounds:
        said = f"bound to {r.bound_to}" if r.bound_to else f"refused: {r.message}"
        lines.append(
            f"  kept off {list(r.excluded)}: scheduler {said}; replay {r.explanation.summary}"
            f" fitting {r.explanation.fitting_nodes}"
        )
    return "\n".join(lines)


def test_fit_replay_agrees_with_the_real_scheduler(
    plane: ControlPlane, record_property: Callable[[str, object], None]
) -> None:
    bench = FitBench(plane)
    verdicts: list[Verdict] = []

    @settings(
        max_examples=CASES,
        deadline=None,
        derandomize=True,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(scenarios())
    def place(scenario: Scenario) -> None:
        verdicts.append(bench.run(scenario))

    started = time.monotonic()
    try:
        place()
    finally:
        bench.close()
    elapsed = time.monotonic() - started

    rounds = [r for v in verdicts for r in v.rounds]
    placed = sum(r.bound_to is not None for r in rounds)
    agreeing = sum(v.agrees for v in verdicts)
    known = {
        v.case: name
        for v in verdicts
        if not v.agrees
        for name, (applies, _) in KNOWN_DIFFERENCES.items()
        if applies(v.scenario)
    }
    record_property(
        FIGURE,
        f"fit replay vs kube-scheduler {_scheduler_version(plane)}: {len(verdicts)} generated cases,"
        f" {agreeing} agree ({100 * agreeing / max(1, len(verdicts)):.1f}%), {len(known)} known differences;"
        f" {len(rounds)} placements judged ({placed} placed, {len(rounds) - placed} refused) in {elapsed:.0f}s",
    )
    unexplained = [_described(v) for v in verdicts if not v.agrees and v.case not in known]
    assert unexplained == [], "\n".join(unexplained)
    assert len(verdicts) >= CASES
    assert placed >= MIN_PLACED and len(rounds) - placed >= MIN_REFUSED, (placed, len(rounds) - placed)
    reached: Counter[str] = Counter(f for v in verdicts for f in v.scenario.features)
    assert FEATURES - set(reached) == set(), reached
    given_reasons: Counter[str] = Counter(
        reason for r in rounds if r.message for reason in (parse_scheduler_message(r.message) or (0, {}))[1]
    )
    assert REASONS - set(given_reasons) == set(), given_reasons
