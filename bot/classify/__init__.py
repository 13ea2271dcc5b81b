"""classify(snapshot, catalogue) -> Diagnosis: the pure heart of raydiag.

No I/O happens here. Every rule's detector reads the shared ``Context``; hits become findings;
findings that a more specific rule explains better are dropped (``supersedes``); the rest are
ordered by the triage order of CAUSES.md — the Kubernetes layer first, then connectivity, Ray's
logical resources and the application — so ``findings[0]`` is the most likely root cause.
A detector that fails on odd data costs its own rule, never the diagnosis: the failure is
reported as an error next to the findings.
"""

from __future__ import annotations

import gc

from bot.catalogue import STAGE_ORDER, Catalogue, Rule, default_catalogue
from bot.classify import detectors as _detectors  # noqa: F401  (registers the detectors)
from bot.classify.capacity import capacity_of
from bot.classify.context import RAY_CLUSTER_LABEL, Context
from bot.classify.figures import headline_figures
from bot.classify.registry import DETECTORS, Hit
from bot.classify.versions import stack_versions
from bot.diagnosis import Capacity, Diagnosis, Finding
from bot.snapshot.model import CollectionError, Snapshot
from bot.terms import SEVERITY_ORDER

__all__ = ["classify"]

# Subjects that stand for a bare line of text rather than an object: a structural finding of a
# rule that supersedes a text rule replaces these wherever it fires.
_TEXT_SUBJECTS = frozenset({"Text"})


def _finding(rule: Rule, hit: Hit) -> Finding:
    return Finding(
        rule=rule.id,
        code=rule.code,
        cause=rule.cause,
        layer=rule.layer,
        severity=hit.severity or rule.severity,
        subject=hit.subject,
        evidence=list(hit.evidence),
        params={k: v for k, v in hit.params.items() if isinstance(v, str)},
    )


def _drop_superseded(findings: list[Finding], catalogue: Catalogue) -> list[Finding]:
    fired: dict[str, set[object]] = {}
    for finding in findings:
        fired.setdefault(finding.rule, set()).add(finding.subject)
    # For each rule that fired, the subjects of the rules that fired and supersede it.
    beaten: dict[str, list[set[object]]] = {}
    for winner, subjects in fired.items():
        rule = catalogue.get(winner)
        for loser in rule.supersedes if rule is not None else ():
            if loser in fired:
                beaten.setdefault(loser, []).append(subjects)
    kept = [
        f
        for f in findings
        if not any(
            f.subject in subjects or f.subject.kind in _TEXT_SUBJECTS for subjects in beaten.get(f.rule, ())
        )
    ]
    return _drop_retold_output(kept, catalogue)


def _only_retold(finding: Finding, catalogue: Catalogue) -> bool:
    rule = catalogue.get(finding.rule)
    return rule is not None and rule.reads == ["retelling"]


def _drop_retold_output(findings: list[Finding], catalogue: Catalogue) -> list[Finding]:
    """One owner per line: a line that a rule reading tool output quotes is the tool's words, so a
    reading of the same line as a person's retelling (a quoted message a sentence reader also took
    for a statement) is dropped. A retold finding keeps its place when any line it quotes is no
    tool rule's evidence."""
    quoted = {
        " ".join(e.text.split()) for f in findings if not _only_retold(f, catalogue) for e in f.evidence
    }
    if not quoted:
        return findings
    return [
        f
        for f in findings
        if not (
            _only_retold(f, catalogue)
            and f.evidence
            and all(" ".join(e.text.split()) in quoted for e in f.evidence)
        )
    ]


def _whereabouts(context: Context) -> tuple[str | None, str | None]:
    """The RayCluster and namespace, from the snapshot or, for a paste, from what it shows."""
    cluster, namespace = context.snapshot.cluster, context.snapshot.namespace
    names = {p.labels[RAY_CLUSTER_LABEL] for p in context.ray_pods if RAY_CLUSTER_LABEL in p.labels}
    names |= {c.name for c in context.kube.rayclusters}
    if cluster is None and len(names) == 1:
        cluster = next(iter(names))
    spaces = {p.namespace for p in context.ray_pods} | {c.namespace for c in context.kube.rayclusters}
    if namespace is None and len(spaces) == 1:
        namespace = next(iter(spaces))
    return cluster, namespace


def classify(snapshot: Snapshot, catalogue: Catalogue | None = None) -> Diagnosis:
    # A large snapshot is millions of objects; a cyclic-GC pass over them all costs more than the
    # whole classification, and classification creates no reference cycles worth collecting.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _classify(snapshot, catalogue)
    finally:
        if collecting:
            gc.enable()


def _classify(snapshot: Snapshot, catalogue: Catalogue | None) -> Diagnosis:
    catalogue = catalogue or default_catalogue()
    context = Context(snapshot)
    found: list[tuple[tuple[int, int, int, int], Finding]] = []
    errors = list(snapshot.errors)
    for rule in catalogue:
        spec = DETECTORS[rule.detector]
        try:
            hits = list(spec.func(context, rule))
        except Exception as error:  # a detector bug must not cost the whole diagnosis
            errors.append(
                CollectionError(
                    source=f"rule {rule.id}",
                    message=f"the rule could not be evaluated: {type(error).__name__}: {error}",
                    hint="please report this with the snapshot (raydiag collect -o snapshot.json)",
                )
            )
            continue
        for hit in hits:
            finding = _finding(rule, hit)
            order = (
                SEVERITY_ORDER[finding.severity],
                STAGE_ORDER[rule.stage],
                rule.priority,
                len(found),
            )
            found.append((order, finding))
    found.sort(key=lambda item: item[0])
    findings = _drop_superseded([f for _, f in found], catalogue)
    cluster, namespace = _whereabouts(context)
    try:
        gpus = capacity_of(context)
    except Exception as error:  # like a rule's detector: odd data costs the picture, not the diagnosis
        errors.append(
            CollectionError(
                source="capacity",
                message=f"the GPUs could not be counted layer by layer: {type(error).__name__}: {error}",
                hint="please report this with the snapshot (raydiag collect -o snapshot.json)",
            )
        )
        gpus = Capacity()
    return Diagnosis(
        cluster=cluster,
        namespace=namespace,
        findings=findings,
        errors=errors,
        notes=list(snapshot.notes),
        figures=headline_figures(context),
        capacity=gpus,
        versions=stack_versions(context),
    )
