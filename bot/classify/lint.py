"""The template checks of ``raydiag lint``: the catalogue's rules that judge a RayCluster spec alone.

A manifest before it deploys has no Pods, events, nodes or Ray state, so only the rules whose
detector reads nothing but the worker group templates apply; running the whole catalogue on it
would only add rules that say there is nothing to read. The findings are those of ``classify``, with
the same rules, codes and texts as every other diagnosis.
"""

from __future__ import annotations

from bot.catalogue import Catalogue
from bot.classify import classify
from bot.diagnosis import Diagnosis
from bot.snapshot.model import Snapshot

# Detectors that read only ``RayClusterObject`` templates (bot/classify/detectors/ray_resources.py
# ``ray_start_params`` and bot/classify/detectors/templates.py).
TEMPLATE_DETECTORS = frozenset({"ray_start_params", "group_template"})


def template_rules(catalogue: Catalogue) -> Catalogue:
    return Catalogue(rule for rule in catalogue if rule.detector in TEMPLATE_DETECTORS)


def lint_snapshot(snapshot: Snapshot, catalogue: Catalogue) -> Diagnosis:
    """The template findings for the RayClusters in ``snapshot``, and the checks that failed."""
    return classify(snapshot, template_rules(catalogue))
