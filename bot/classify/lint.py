"""The template checks of ``raydiag lint``: the catalogue's rules that judge a RayCluster spec.

A manifest before it deploys has no Pods, events or Ray state, so only the rules whose detector
reads the worker group templates apply; running the whole catalogue on it would only add rules that
say there is nothing to read. What the command adds to the snapshot widens that a little: a node
list (``--nodes``, or the live cluster's with ``--cluster``) for the groups' fit and label values,
and the team's conventions, which reach their rules as params (``lint_rules``). The findings are
those of ``classify``, with the same rules, codes and texts as every other diagnosis.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from bot.catalogue import Catalogue
from bot.classify import classify
from bot.diagnosis import Diagnosis
from bot.snapshot.model import CollectionError, Snapshot

# Detectors that read only ``RayClusterObject`` templates and, for the last two, the nodes and the
# conventions beside them (bot/classify/detectors/ray_resources.py ``ray_start_params``,
# bot/classify/detectors/templates.py and bot/classify/detectors/group_lint.py).
TEMPLATE_DETECTORS = frozenset({"ray_start_params", "group_template", "group_nodes", "group_conventions"})
# The detector whose rule (``collection-failed``) reports what the command could not read.
COLLECTION_DETECTOR = "collection_errors"


def template_rules(catalogue: Catalogue) -> Catalogue:
    return Catalogue(rule for rule in catalogue if rule.detector in TEMPLATE_DETECTORS)


def lint_rules(catalogue: Catalogue, gpu_models: Iterable[Mapping[str, str]] = ()) -> Catalogue:
    """The template rules as ``raydiag lint`` runs them: the node-list rules switched on (a live
    diagnosis leaves them off, ``bot.classify.detectors.group_lint``), and the team's GPU-model
    conventions (``label``, ``value``, ``ray_resource``) in the params of the rules that check them."""
    added: dict[str, dict[str, object]] = {
        "group_nodes": {"enabled": True},
        "group_conventions": {"gpu_models": [dict(entry) for entry in gpu_models]},
    }
    return Catalogue(
        replace(rule, params={**rule.params, **added[rule.detector]}) if rule.detector in added else rule
        for rule in template_rules(catalogue)
    )


def lint_snapshot(snapshot: Snapshot, catalogue: Catalogue) -> Diagnosis:
    """The template findings for the RayClusters in ``snapshot``, and the checks that failed.
    ``catalogue`` is ``lint_rules``' (or the whole catalogue: the template rules of a diagnosis)."""
    return classify(snapshot, template_rules(catalogue))


def collection_findings(errors: Sequence[CollectionError], catalogue: Catalogue) -> Diagnosis:
    """What the command itself could not read (the live nodes), as the findings of the
    ``collection-failed`` rule, with the errors beside them."""
    rules = Catalogue(rule for rule in catalogue if rule.detector == COLLECTION_DETECTOR)
    return classify(Snapshot(errors=list(errors)), rules)
