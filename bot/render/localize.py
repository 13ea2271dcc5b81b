"""Fill a finding's rule templates with its facts, in one language.

Placeholders the finding does not know are shown as ``<name>`` so that a command is still
copyable and obviously incomplete, rather than silently wrong.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from bot.catalogue import Catalogue
from bot.diagnosis import SIMILAR_RULE, Diagnosis, Evidence, Finding, Subject
from bot.facts import (
    ActorHolder,
    ClosestNode,
    Fact,
    GroupHolder,
    Holder,
    MissingEndpoint,
    PluginPod,
    RefusedOn,
    ReservedHolder,
    ScaleUpGroup,
    Shortfall,
)
from bot.render.messages import Lang, say
from bot.render.template import fill


@dataclass(frozen=True)
class LocalizedFinding:
    rule: str
    code: str
    cause: int | None
    layer: str
    severity: str
    title: str
    explanation: str
    subject: Subject
    evidence: list[Evidence]
    commands: list[str]
    fix: list[str]
    verify: list[str]


_SIDES = ("cluster", "head", "worker", "client")
# Params whose value is an enum-like key rather than a name: the key, and the message saying it.
_ENUMS: dict[tuple[str, str], str] = {
    ("registered", "none"): "phrase.none",
    ("selector", "none"): "phrase.none",
    ("requests", "none"): "phrase.none",
    ("known_values", "none"): "phrase.none",
    ("plugin_pod", "none"): "phrase.none",
    ("reasons", "none-given"): "phrase.none_given",
    ("parameters", "none-shown"): "phrase.none_shown",
    ("plugin_status", "not-collected"): "phrase.not_collected",
    ("plugin_status", "no-plugin-pod"): "phrase.no_plugin_pod",
    ("reason", "launch-failed"): "phrase.launch_failed",
    ("reason", "autoscaler-error"): "phrase.autoscaler_error",
    ("reason", "launch-timeout"): "phrase.launch_timeout",
    ("lacking", "not-applicable"): "phrase.not_applicable",
    ("closest", "not-applicable"): "phrase.not_applicable",
    ("status", "admitted"): "phrase.admitted",
    ("status", "init-unfinished"): "phrase.init_unfinished",
    # Where a version runs, as the person's words place it (bot/classify/detectors/stated.py).
    **{(param, side): f"phrase.side.{side}" for param in ("side_a", "side_b") for side in _SIDES},
}


def _items(values: Mapping[str, str]) -> dict[int, dict[str, str]]:
    """The items ``<n>.<field>`` of an Evidence's values, by number: ``{n: {field: value}}``."""
    items: dict[int, dict[str, str]] = {}
    for key, value in values.items():
        number, _, field = key.partition(".")
        if number.isdigit() and field:
            items.setdefault(int(number), {})[field] = value
    return {n: items[n] for n in sorted(items)}


def _shortfalls(lacking: Iterable[Shortfall], lang: Lang) -> str:
    """``cpu: needs 4, 1 free of 8 allocatable, …``."""
    return say("phrase.details", lang).join(
        say(
            "phrase.shortfall",
            lang,
            resource=s.resource,
            needed=s.needed,
            free=s.free,
            allocatable=s.allocatable,
        )
        for s in lacking
    )


def _lacking(facts: Sequence[Fact], lang: Lang) -> str | None:
    refused = [f for f in facts if isinstance(f, RefusedOn)]
    if refused:
        # kube-scheduler's own reason (``Insufficient cpu``) stays verbatim; the count is ours.
        return say("phrase.details", lang).join(
            say("phrase.reason_on_nodes", lang, reason=r.reason, count=str(r.nodes)) for r in refused
        )
    lacking = [f for f in facts if isinstance(f, Shortfall)]
    return _shortfalls(lacking, lang) if lacking else None


def _closest(facts: Sequence[Fact], lang: Lang) -> str | None:
    nodes = [f for f in facts if isinstance(f, ClosestNode)]
    if not nodes:
        return None
    return say("phrase.list", lang).join(
        say("phrase.closest_node", lang, node=n.node, lacking=_shortfalls(n.lacking, lang)) for n in nodes
    )


def _largest_node(params: Mapping[str, str], lang: Lang) -> str | None:
    amount, kind = params.get("largest_amount"), params.get("largest_kind")
    if not (params.get("largest_node") and amount and kind in ("free", "allocatable")):
        return None
    return say(
        f"phrase.largest_node.{kind}",
        lang,
        node=params["largest_node"],
        amount=amount,
        resource=params.get("largest_resource") or params.get("resource", ""),
    )


def _groups(facts: Sequence[Fact], lang: Lang) -> str | None:
    groups = [f for f in facts if isinstance(f, ScaleUpGroup)]
    if not groups:
        return None
    return say("phrase.details", lang).join(
        say(
            "phrase.scale_up" if g.maximum is None else "phrase.scale_up_max",
            lang,
            group=g.group,
            current=str(g.current),
            new=str(g.new),
            max="?" if g.maximum is None else str(g.maximum),
        )
        for g in groups
    )


def _plugin_status(facts: Sequence[Fact], lang: Lang) -> str | None:
    pods = [f for f in facts if isinstance(f, PluginPod)]
    if not pods:
        return None
    return say("phrase.details", lang).join(
        say("phrase.plugin_pod" if p.ready else "phrase.plugin_pod_unready", lang, name=p.name, phase=p.phase)
        for p in pods
    )


def _paths(facts: Sequence[Fact], lang: Lang) -> str | None:
    paths = [f.path for f in facts if isinstance(f, MissingEndpoint)]
    return say("phrase.and", lang).join(f"`{p}`" for p in paths) if paths else None


def _composed(params: Mapping[str, str], facts: Sequence[Fact], lang: Lang) -> dict[str, str]:
    """The phrases composed from typed facts and small keys, beside the holders and demands."""
    said: dict[str, str] = {}
    for key, compose in (
        ("lacking", _lacking),
        ("closest", _closest),
        ("groups", _groups),
        ("plugin_status", _plugin_status),
        ("paths", _paths),
    ):
        phrase = compose(facts, lang)
        if phrase is not None:
            said[key] = phrase
    largest = _largest_node(params, lang)
    if largest is not None:
        said["largest_node"] = largest
    if params.get("free_amount") and params.get("free_nodes"):
        said["free_total"] = say(
            "phrase.free_across",
            lang,
            amount=params["free_amount"],
            resource=params.get("resource", ""),
            count=params["free_nodes"],
        )
    if params.get("gate_queue"):
        said["gate"] = say("phrase.kueue_queue", lang, queue=params["gate_queue"])
    if "ray_version" in params:
        version = params["ray_version"]
        said["version"] = (
            say("phrase.ray_version", lang, version=version)
            if version
            else say("phrase.this_ray_release", lang)
        )
    if params.get("reason") and params.get("restart_count"):
        said["reason"] = say(
            "phrase.with_restarts", lang, reason=params["reason"], count=params["restart_count"]
        )
    return said


def evidence_text(key: str, values: Mapping[str, str], lang: Lang) -> str:
    """Message ``key`` filled with an Evidence's ``values``; said once per numbered item and
    joined as a list when the values hold items (``1.resource``, ``2.resource``)."""
    plain = {k: v for k, v in values.items() if not k.split(".", 1)[0].isdigit()}
    items = _items(values)
    if items:
        return say("phrase.list", lang).join(say(key, lang, **plain, **item) for item in items.values())
    return say(key, lang, **plain)


def said_evidence(evidence: Evidence, lang: Lang) -> Evidence:
    """An Evidence as the reader of ``lang`` sees it: a line raydiag wrote, worded in ``lang``;
    a quote, and every line in English, exactly as it is."""
    if lang == "en" or not (evidence.phrase or evidence.source_phrase):
        return evidence
    update: dict[str, Any] = {}
    if evidence.phrase:
        update["text"] = evidence_text(evidence.phrase, evidence.values, lang)
    if evidence.source_phrase:
        update["source"] = evidence_text(evidence.source_phrase, evidence.values, lang)
    return replace(evidence, **update)


def _holder(holder: Holder, lang: Lang) -> str:
    if isinstance(holder, ActorHolder):
        who = " ".join(v for v in (holder.class_name or say("phrase.actor", lang), holder.actor_id) if v)
        shown = {
            "name": holder.name,
            "job": holder.job,
            "detached": "true" if holder.detached else "",
            "node_ip": holder.node_ip,
        }
        details = [say(f"phrase.actor.{key}", lang, **{key: value}) for key, value in shown.items() if value]
        if not details:
            return say("phrase.holder.actor_plain", lang, who=who, resources=holder.resources or "{}")
        return say(
            "phrase.holder.actor",
            lang,
            who=who,
            details=say("phrase.details", lang).join(details),
            resources=holder.resources or "{}",
        )
    if isinstance(holder, ReservedHolder):
        return say(
            "phrase.holder.reserved",
            lang,
            reserved=holder.reserved,
            resource=holder.resource,
            used=holder.used,
        )
    if holder.name and holder.strategy:
        return say(
            "phrase.holder.placement_group",
            lang,
            name=holder.name,
            bundles=holder.bundles,
            strategy=holder.strategy,
        )
    return _placement_group(holder.bundles, holder.strategy, lang)


def _placement_group(bundles: str, strategy: str, lang: Lang) -> str:
    if strategy:
        return say("phrase.placement_group_strategy", lang, bundles=bundles, strategy=strategy)
    return say("phrase.placement_group", lang, bundles=bundles)


def phrases(params: Mapping[str, str], lang: Lang, facts: Sequence[Fact] = ()) -> dict[str, str]:
    """What a finding's atoms and typed facts say in ``lang``: a placement group's label, a node
    count, the holders of a resource, enum-like values. Detectors hand only names, figures, keys
    and facts (bot/facts.py); every word around them is written here and in bot/render/messages.py."""
    said: dict[str, str] = {}
    for key, value in params.items():
        message = _ENUMS.get((key, value))
        if message:
            said[key] = say(message, lang)
    if params.get("demand_kind") == "placement_group":
        said["demand"] = _placement_group(params.get("demand", ""), params.get("demand_strategy", ""), lang)
    if not params.get("node") and params.get("node_count"):
        if params.get("node_total"):
            said["node"] = say(
                "phrase.nodes_total",
                lang,
                count=params["node_count"],
                total=params["node_total"],
                resource=params.get("resource", ""),
            )
        else:
            said["node"] = say("phrase.nodes", lang, count=params["node_count"])
    holders = [f for f in facts if isinstance(f, ActorHolder | GroupHolder | ReservedHolder)]
    if holders:
        said["holders"] = say("phrase.list", lang).join(_holder(h, lang) for h in holders)
    elif params.get("holders_missing"):
        said["holders"] = say(f"phrase.holders.{params['holders_missing']}", lang)
    said.update(_composed(params, facts, lang))
    return said


def facts_for(
    finding: Finding, cluster: str | None, namespace: str | None = None, lang: Lang | None = None
) -> dict[str, str]:
    """The facts a finding's templates are filled with: its atoms, and with ``lang`` the phrases
    they compose in that language (prose); without it the bare atoms (commands, which are the same
    in every language)."""
    facts = {
        "cluster": cluster or finding.params.get("raycluster", ""),
        "namespace": finding.subject.namespace or namespace or "",
        "kind": finding.subject.kind,
        "name": finding.subject.name or "",
    }
    facts.update({k: v for k, v in finding.params.items() if v})
    if lang is not None:
        facts.update(phrases(finding.params, lang, finding.facts))
    return facts


def _likeness(finding: Finding, lang: Lang) -> LocalizedFinding:
    """The finding no catalogue rule makes (the cause resolved reports agree on, bot/similar): its
    words are messages, since no detector can fire it and it has no commands of its own."""
    facts = {k: finding.params.get(k, "?") for k in ("cause", "agreeing", "shown")}
    return LocalizedFinding(
        rule=finding.rule,
        code=finding.code,
        cause=finding.cause,
        layer=finding.layer,
        severity=finding.severity,
        title=say("similar.title", lang, **facts),
        explanation=say("similar.explanation", lang, **facts),
        subject=finding.subject,
        evidence=[said_evidence(e, lang) for e in finding.evidence],
        commands=[],
        fix=[say("similar.fix.1", lang), say("similar.fix.2", lang)],
        verify=[say("similar.verify.1", lang)],
    )


def localize(
    finding: Finding, catalogue: Catalogue, lang: Lang, cluster: str | None, namespace: str | None = None
) -> LocalizedFinding:
    if finding.rule == SIMILAR_RULE:
        return _likeness(finding, lang)
    rule = catalogue[finding.rule]
    text = rule.text[lang]
    facts = facts_for(finding, cluster, namespace, lang)
    atoms = facts_for(finding, cluster, namespace)
    unknown = say("unknown", lang)
    return LocalizedFinding(
        rule=finding.rule,
        code=finding.code,
        cause=finding.cause,
        layer=finding.layer,
        severity=finding.severity,
        title=fill(text.title, facts, unknown, atoms),
        explanation=fill(text.explanation, facts, unknown, atoms),
        subject=finding.subject,
        evidence=[said_evidence(e, lang) for e in finding.evidence],
        commands=[fill(c, atoms) for c in rule.commands],
        fix=[fill(line, facts, unknown, atoms) for line in text.fix],
        verify=[fill(line, facts, unknown, atoms) for line in text.verify],
    )


def localize_all(diagnosis: Diagnosis, catalogue: Catalogue, lang: Lang) -> list[LocalizedFinding]:
    return [localize(f, catalogue, lang, diagnosis.cluster, diagnosis.namespace) for f in diagnosis.findings]


def verdict_summary(diagnosis: Diagnosis, findings: list[LocalizedFinding], lang: Lang) -> str:
    layer = diagnosis.verdict_layer
    if layer in ("kubernetes", "ray", "application"):
        top = next(f for f in findings if f.severity != "info")
        cause = say("cause", lang, cause=top.cause) if top.cause else say("no_cause", lang)
        return say(
            "verdict.found",
            lang,
            layer=say(f"layer.{layer}", lang),
            title=top.title,
            cause=cause,
            count=len(findings),
        )
    if layer == "healthy":
        return say("verdict.healthy", lang)
    return say("verdict.unknown_errors" if diagnosis.errors else "verdict.unknown", lang)
