"""Detectors hand atoms; the words around them are composed per language at render time (issue 13).

A placement group's label, a node count, the holders of a resource and enum-like values used to
reach the Chinese templates as English phrases. Now the params hold names, figures, shapes and
keys, and the Chinese rendering of the findings built from them carries none of those phrases.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from bot.catalogue import default_catalogue
from bot.classify import classify
from bot.collect.paste import parse_paste
from bot.diagnosis import Diagnosis, Evidence, Finding
from bot.facts import (
    ActorHolder,
    ClosestNode,
    Fact,
    GroupHolder,
    MissingEndpoint,
    PluginPod,
    RefusedOn,
    ReservedHolder,
    ScaleUpGroup,
    Shortfall,
)
from bot.read.snapshot_file import parse_snapshot
from bot.render.localize import evidence_text, localize, phrases, said_evidence
from bot.snapshot.data import dump_json, load_json
from tests.support.scenarios import CASES as SCENARIOS

ROOT = Path(__file__).resolve().parents[2]

# The rules whose params are built from atoms that the renderer words.
ATOM_RULES = frozenset(
    {
        "ray-resources-held",
        "ray-resources-claimed",
        "ray-placement-group-full",
        "ray-cluster-registers-no-gpu",
        "ray-demand-infeasible",
        "ray-demand-unjudged",
        "ray-demand-fits-free",
        "ray-group-exceeds-cluster",
        "ray-gpu-type-unregistered",
        "ray-gpu-type-unconfirmed",
        "ray-gpu-type-unchecked",
        "ray-autoscaler-launch-failed",
        "ray-autoscaler-failures",
        "k8s-gpu-node-without-allocatable",
        "k8s-gpu-devices-unhealthy",
        "k8s-device-plugin-not-ready",
        "k8s-legacy-gpu-resource",
        "k8s-insufficient-resources",
        "k8s-gpu-shortage-unconfirmed",
        "k8s-request-exceeds-every-node",
        "k8s-resource-fragmentation",
        "k8s-gpu-summed-over-containers",
        "kueue-admission-pending",
        "kueue-workload-admitted",
        "ray-head-not-ready",
        "cluster-autoscaler-scale-up-in-flight",
    }
)

# The English phrases detectors used to write into params.
ENGLISH = re.compile(
    r"placement groups? (?:reserve|\{|[\w-]+ \{)|\bholds\b|node\(s\)|\bin total\b|\bnot listed\b|"
    r"\bused of\b|, detached|detached,|\bjob [0-9a-f]{8}\b|\bon \d+\.\d+\.\d+\.\d+|"
    r"\bnone\b|\bnot collected\b|\bno device-plugin Pod\b|\blaunch failed\b|\bautoscaler error\b|"
    r"\bneeds \d|\bfree of\b|\bfree across\b|\ballocatable\)|\bfree\)|\(max \d|restart\(s\)|"
    r", not Ready\b|\bn/a\b"
)
# Params quoted verbatim from a tool's output (a log line, an event message, kube-scheduler's
# FitError text and raydiag's replay of it in the scheduler's own grammar).
VERBATIM = frozenset({"message", "line", "status", "summary", "scheduler_message"})

CASES = sorted(
    [
        *(ROOT / "tests" / "cases").glob("*/fires/*.txt"),
        *(ROOT / "tests" / "corpus" / "recorded").glob("*.txt"),
    ]
)


@cache
def _diagnose(path: Path) -> Diagnosis:
    return classify(parse_paste(path.read_text(encoding="utf-8", errors="replace")), default_catalogue())


@cache
def _scenario_findings() -> tuple[tuple[Path, Finding], ...]:
    """The findings of the cluster scenarios that fire (full node lists: the fit replay)."""
    return tuple(
        (Path(case.name), finding)
        for case in SCENARIOS
        if case.expect == "fires"
        for finding in classify(parse_snapshot(case.build().to_json()), default_catalogue()).findings
    )


def _all_findings() -> list[tuple[Path, Finding]]:
    return [(p, f) for p in CASES for f in _diagnose(p).findings] + list(_scenario_findings())


def _atom_findings() -> list[tuple[Path, Finding]]:
    return [(p, f) for p, f in _all_findings() if f.rule in ATOM_RULES]


def test_the_scenarios_cover_every_composed_phrase() -> None:
    keys = {key for _, finding in _atom_findings() for key in finding.params}
    assert {"demand_kind", "demand_strategy", "node_count", "node_total", "holders_missing"} <= keys
    assert {"largest_node", "largest_amount", "largest_kind", "gate_queue"} <= keys
    assert {"lacking", "closest"} & keys  # ``not-applicable``
    facts = [fact for _, finding in _atom_findings() for fact in finding.facts]
    assert {type(f) for f in facts} == {
        ActorHolder,
        GroupHolder,
        ReservedHolder,
        Shortfall,
        RefusedOn,
        ClosestNode,
        ScaleUpGroup,
        PluginPod,
    }
    assert any(isinstance(f, ActorHolder) and f.detached and f.node_ip for f in facts)
    assert any(isinstance(f, ScaleUpGroup) and f.maximum is not None for f in facts)
    assert any(isinstance(f, ClosestNode) and f.lacking for f in facts)
    # No list is flattened into numbered params any more (``lacking.1.resource``).
    assert not [k for k in keys if any(part.isdigit() for part in k.split("."))]


def test_facts_read_back_as_the_same_types() -> None:
    findings = [finding for _, finding in _atom_findings() if finding.facts]
    assert findings
    diagnosis = Diagnosis(findings=findings)
    assert load_json(Diagnosis, dump_json(diagnosis)).findings == findings


def test_params_hold_only_atoms() -> None:
    findings = _atom_findings()
    assert len(findings) > 40
    for path, finding in findings:
        for key, value in finding.params.items():
            if key in VERBATIM or key in phrases({key: value}, "en"):
                continue  # a quote, or an enum-like key the renderer words (``none``)
            assert not ENGLISH.search(value), (path.name, finding.rule, key, value)


def test_the_chinese_rendering_carries_no_english_phrase() -> None:
    catalogue = default_catalogue()
    for path, finding in _atom_findings():
        zh = localize(finding, catalogue, "zh", None)
        quoted = [v for k, v in finding.params.items() if k in VERBATIM]
        for line in (zh.title, zh.explanation, *zh.fix, *zh.verify):
            said = re.sub(r"`[^`]*`", "", line)  # quoted commands and messages stay verbatim
            for part in quoted:  # and so does a quote in a param, in any language
                said = said.replace(part, "")
            assert not ENGLISH.search(said), (path.name, finding.rule, line)


def test_holders_are_worded_in_each_language() -> None:
    params = {
        "demand": "{GPU: 1} + {GPU: 1}",
        "demand_kind": "placement_group",
        "demand_strategy": "PACK",
        "node_count": "3",
        "holders": "gpu-holder, trial-pg",
    }
    holders = (
        ActorHolder(
            "{GPU: 1}",
            class_name="Holder",
            actor_id="30bf",
            name="gpu-holder",
            job="01000000",
            detached=True,
            node_ip="10.0.0.3",
        ),
        GroupHolder("trial-pg", "{CPU: 1, GPU: 1}", "PACK"),
        ReservedHolder("GPU", "2", "0"),
    )
    assert phrases(params, "en", holders) == {
        "demand": "placement group {GPU: 1} + {GPU: 1} (PACK)",
        "node": "3 node(s)",
        "holders": "Holder 30bf (name=gpu-holder, job 01000000, detached, on 10.0.0.3) holds {GPU: 1}; "
        "placement group trial-pg {CPU: 1, GPU: 1} (PACK); "
        "placement groups reserve 2 GPU (0 used of 2)",
    }
    assert phrases(params, "zh", holders) == {
        "demand": "放置组 {GPU: 1} + {GPU: 1}（PACK）",
        "node": "3 个节点",
        "holders": "Holder 30bf（name=gpu-holder，作业 01000000，分离式，位于 10.0.0.3）占着 {GPU: 1}；"
        "放置组 trial-pg {CPU: 1, GPU: 1}（PACK）；"
        "放置组预留了 2 个 GPU（其中 0 个在用）",
    }
    assert phrases({"holders_missing": "not-in-snapshot", "registered": "none"}, "zh") == {
        "holders": "快照中没有列出",
        "registered": "无",
    }


def test_commands_keep_the_bare_atoms_in_every_language() -> None:
    catalogue = default_catalogue()
    path = ROOT / "tests" / "cases" / "k8s-gpu-node-without-allocatable" / "fires"
    finding = next(
        f
        for p in sorted(path.glob("*.txt"))
        for f in _diagnose(p).findings
        if f.rule == "k8s-gpu-node-without-allocatable" and f.params.get("plugin_pod") == "none"
    )
    en, zh = (localize(finding, catalogue, lang, None) for lang in ("en", "zh"))
    assert en.commands == zh.commands
    assert "Device plugin: none (not collected)." in en.explanation
    assert "device plugin：无（未采集）" in zh.explanation


def test_scheduling_and_kubernetes_atoms_are_worded_in_each_language() -> None:
    cpu = Shortfall("cpu", "4", "1", "8")
    facts: tuple[Fact, ...] = (
        cpu,
        ClosestNode("node-a", (cpu,)),
        ClosestNode("node-b", (Shortfall("memory", "8Gi", "2Gi", "16Gi"),)),
        ScaleUpGroup("pool-a", 1, 2, 4),
        ScaleUpGroup("pool-b", 0, 1),
        PluginPod("nvidia-device-plugin-x", "Running", ready=False),
    )
    params = {
        "resource": "cpu",
        "free_amount": "6",
        "free_nodes": "3",
        "largest_node": "node-a",
        "largest_amount": "2",
        "largest_kind": "free",
        "gate_queue": "team-a",
        "reason": "CrashLoopBackOff",
        "restart_count": "3",
    }
    assert phrases(params, "en", facts) == {
        "lacking": "cpu: needs 4, 1 free of 8 allocatable",
        "closest": "node-a (cpu: needs 4, 1 free of 8 allocatable); "
        "node-b (memory: needs 8Gi, 2Gi free of 16Gi allocatable)",
        "largest_node": "node-a (2 cpu free)",
        "free_total": "6 cpu free across 3 node(s)",
        "groups": "pool-a 1→2 (max 4), pool-b 0→1",
        "plugin_status": "nvidia-device-plugin-x: Running, not Ready",
        "gate": "Kueue LocalQueue team-a",
        "reason": "CrashLoopBackOff, 3 restart(s)",
    }
    assert phrases(params, "zh", facts) == {
        "lacking": "cpu：需要 4，allocatable 8 中空闲 1",
        "closest": "node-a（cpu：需要 4，allocatable 8 中空闲 1）；"
        "node-b（memory：需要 8Gi，allocatable 16Gi 中空闲 2Gi）",
        "largest_node": "node-a（空闲 2 cpu）",
        "free_total": "3 个节点上共 6 cpu",
        "groups": "pool-a 1→2（上限 4），pool-b 0→1",
        "plugin_status": "nvidia-device-plugin-x：Running，未 Ready",
        "gate": "Kueue LocalQueue team-a",
        "reason": "CrashLoopBackOff，重启 3 次",
    }
    refused = (RefusedOn("Insufficient nvidia.com/gpu", 2), RefusedOn("Insufficient cpu", 1))
    told = {
        "closest": "not-applicable",
        "largest_node": "gpu-1",
        "largest_amount": "4",
        "largest_kind": "allocatable",
        "largest_resource": "nvidia.com/gpu",
    }
    # kube-scheduler's own reason stays verbatim in both languages; raydiag's count around it is worded.
    assert phrases(told, "en", refused) == {
        "lacking": "Insufficient nvidia.com/gpu on 2 node(s), Insufficient cpu on 1 node(s)",
        "closest": "n/a",
        "largest_node": "gpu-1 (4 nvidia.com/gpu allocatable)",
    }
    assert phrases(told, "zh", refused) == {
        "lacking": "2 个节点上 Insufficient nvidia.com/gpu，1 个节点上 Insufficient cpu",
        "closest": "不适用",
        "largest_node": "gpu-1（allocatable 4 nvidia.com/gpu）",
    }


def _written_evidence() -> list[tuple[Path, Evidence]]:
    return [(p, e) for p, f in _all_findings() for e in f.evidence if e.phrase or e.source_phrase]


def test_written_evidence_says_its_english_text_and_is_worded_in_chinese() -> None:
    written = _written_evidence()
    phrases_seen = {e.phrase for _, e in written} | {e.source_phrase for _, e in written}
    assert {
        "evidence.demand_pending",
        "evidence.ray_node",
        "evidence.ray_node_unknown",
        "evidence.used_of_total",
        "evidence.reserved_in_groups",
        "evidence.actor_job_finished",
        "evidence.actor_detached",
        "evidence.fit_replay",
        "evidence.fit_replay_agrees",
        # Pods, Ray nodes, Services and the dashboard as raydiag states them (connectivity,
        # device plugin, Serve).
        "evidence.pod_line",
        "evidence.pod_line_ip",
        "evidence.pod_line_restarts",
        "evidence.pod_line_restarts_ip",
        "evidence.pod_not_ready",
        "evidence.pod_phase_ready",
        "evidence.pod_running_ready",
        "evidence.ray_nodes_ips",
        "evidence.selector_matches_nothing",
        "evidence.no_ready_addresses",
        "evidence.http_404",
        # Worker groups and Ray nodes beside a demand or a GPU count.
        "evidence.group_at_max",
        "evidence.group_vendor_gpu",
        "evidence.node_type_resources",
        "evidence.ray_node_gpus",
    } <= phrases_seen
    for path, evidence in written:
        # The English rendering kept in ``text``/``source`` is exactly what the phrase says.
        if evidence.phrase:
            assert evidence_text(evidence.phrase, evidence.values, "en") == evidence.text, path.name
        if evidence.source_phrase:
            assert evidence_text(evidence.source_phrase, evidence.values, "en") == evidence.source, path.name
        assert said_evidence(evidence, "en") is evidence
        zh = said_evidence(evidence, "zh")
        worded = (zh.text, evidence.text) if evidence.phrase else (zh.source, evidence.source)
        assert worded[0] != worded[1], (path.name, evidence)
        assert not re.search(r"\bused\b|\bpending\b|\bholds\b|\btotal \{|\bagrees\b", worded[0]), worded[0]


def test_quoted_evidence_stays_verbatim_in_every_language() -> None:
    catalogue = default_catalogue()
    quoted = 0
    for path in CASES[:200]:
        for finding in _diagnose(path).findings:
            zh = localize(finding, catalogue, "zh", None)
            for mine, shown in zip(finding.evidence, zh.evidence, strict=True):
                if mine.phrase is None and mine.source_phrase is None:
                    assert shown == mine, path.name
                    quoted += 1
    assert quoted > 100


def test_a_written_list_is_said_item_by_item() -> None:
    values = {
        "1.resource": "CPU",
        "1.used": "3",
        "1.total": "4",
        "2.resource": "GPU",
        "2.used": "1",
        "2.total": "1",
    }
    assert evidence_text("evidence.used_of_total", values, "en") == "CPU 3/4 used; GPU 1/1 used"
    assert evidence_text("evidence.used_of_total", values, "zh") == "CPU 已用 3/4；GPU 已用 1/1"
    line = Evidence(
        source="ray actor 30bf",
        text="ALIVE; job 01000000 has finished; holds {GPU: 1}",
        phrase="evidence.actor_job_finished",
        values={"job": "01000000", "resources": "{GPU: 1}"},
    )
    assert said_evidence(line, "zh").text == "ALIVE；作业 01000000 已结束；仍占着 {GPU: 1}"
    assert said_evidence(line, "zh").source == "ray actor 30bf"


def test_the_rarer_written_lines_are_worded_in_each_language() -> None:
    assert evidence_text("evidence.ray_nodes_no_ips", {"count": "0"}, "en") == "0 alive; IPs: none"
    assert evidence_text("evidence.ray_nodes_no_ips", {"count": "0"}, "zh") == "0 个存活；没有 IP"
    values = {"addresses": "10.0.0.7, 10.0.0.8"}
    assert (
        evidence_text("evidence.no_ready_addresses_some_not", values, "en")
        == "no ready addresses; not ready: 10.0.0.7, 10.0.0.8"
    )
    assert evidence_text("evidence.no_ready_addresses_some_not", values, "zh") == (
        "没有 ready 的地址；未 ready：10.0.0.7, 10.0.0.8"
    )
    assert evidence_text("evidence.init_unfinished", {"pod": "nvidia-device-plugin-x"}, "zh") == (
        "nvidia-device-plugin-x 的 init 容器尚未完成"
    )
    # The GPU-stack Pod's status atom, when no table gave ``Init:0/1``.
    assert phrases({"status": "init-unfinished"}, "en") == {"status": "init containers not finished"}
    assert phrases({"status": "init-unfinished"}, "zh") == {"status": "init 容器尚未完成"}


def test_the_unread_dashboard_paths_and_version_are_worded_in_each_language() -> None:
    paths = (MissingEndpoint("/api/serve/applications/"), MissingEndpoint("/api/serve/deployments/"))
    assert phrases({"ray_version": "2.9.3"}, "en", paths) == {
        "paths": "`/api/serve/applications/` and `/api/serve/deployments/`",
        "version": "Ray 2.9.3",
    }
    assert phrases({"ray_version": ""}, "zh", paths) == {
        "paths": "`/api/serve/applications/` 和 `/api/serve/deployments/`",
        "version": "这个 Ray 版本",
    }
