"""What ``ray.cluster_resources()`` and ``ray.available_resources()`` return, however it is printed.

Both return a plain ``dict`` of resource name to a Python ``float`` (``{'CPU': 32.0, 'GPU': 4.0,
'node:10.0.0.1': 1.0, ...}``; ``ray/_private/worker.py`` since 0.8, ``ray/worker.py`` before), and
``available_resources()`` leaves out a resource that is used up. People print them two ways:

* the whole dict, alone or after a label (``Available resources: {...}``), read by
  :mod:`bot.read.ray_state_tables` with the other Python printouts;
* one figure, picked out with ``.get("GPU", 0)`` or ``["GPU"]`` and printed after a label of
  their own (``Total GPUs:  4.0``, ``Available GPUs: 2.0``). Only the label tells the two calls
  apart, so it must say which (total/cluster against available/free), name the resource and say
  nothing else (``Total CPU time`` is another figure); the
  figure must be printed as the float Ray returns (``4.0``), which keeps out counts people type
  or other tools print (``nvidia-smi``, ``kubectl``) as integers.

Either way the figures land in one place, here: the totals, what is free, and from the two what is
in use, the same ``ray status`` figures the resource detectors judge demands against.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from bot.read.formats import Format, Tag
from bot.read.found import Found, RayStatusFigures

# What a label printed with a value says it is (on its line, or just above a printed dict).
TOTALS_LABEL = re.compile(r"cluster_resources|cluster resources|total resources|\btotals?\b", re.IGNORECASE)
AVAILABLE_LABEL = re.compile(r"available_resources|\bavailable\b|\bfree\b", re.IGNORECASE)
# ``Total GPUs:  4.0`` / ``available CPU = 30.0``: a label naming the resource, then Ray's float.
_FIGURE = re.compile(r"^\s*(?P<label>[A-Za-z][^:=\n]{0,60}?)\s*[:=]\s*(?P<amount>\d{1,7}\.\d{1,4})\s*$")
_RESOURCE = re.compile(r"(?<![A-Za-z])(?P<name>GPU|CPU)s?(?![A-Za-z])", re.IGNORECASE)
# The call itself may stand in the label (``ray.available_resources()["GPU"]: 2.0``).
_CALL = re.compile(r"ray\.(?:cluster|available)_resources\(\)(?:\.get\([^)]{0,40}\)|\[[^\]]{0,20}\])?")
# Every other word of the label: which call, and the resource; a label with any other word
# (``Total CPU time``) is about something else.
_LABEL_WORDS = frozenset(
    {
        "total",
        "totals",
        "cluster",
        "available",
        "free",
        "number",
        "num",
        "of",
        "the",
        "in",
        "ray",
        "logical",
        "gpu",
        "gpus",
        "cpu",
        "cpus",
    }
)
# Shared with the other Python printouts of Ray (:mod:`bot.read.ray_state_tables`).
PRINTOUT_FORMAT = Format("ray Python printout", Tag.RAY_API_OUTPUT)


def says_available(labels: Sequence[str]) -> bool | None:
    """Whether a printed dict is what is free (True) or the totals (False), from the labels printed
    with it, nearest first (its own line, then the lines above); None when none says."""
    for label in labels:
        if AVAILABLE_LABEL.search(label):
            return True
        if TOTALS_LABEL.search(label):
            return False
    return None


def _figures(found: Found) -> RayStatusFigures:
    if found.ray_status is None:
        found.ray_status = RayStatusFigures()
    return found.ray_status


def store(resources: dict[str, float], available: bool, found: Found) -> None:
    """A whole printed dict: ``cluster_resources()`` is the totals; ``available_resources()`` what
    is free (a used-up resource is left out of it, so it counts as all used)."""
    clean = {k: v for k, v in resources.items() if not k.startswith("node:")}
    if available:
        found.ray_available = clean
        found.ray_available_partial = False
    else:
        found.ray_totals = clean
        # Fuller than a plain `ray status`: it lists every resource, accelerator types included.
        _figures(found).hides_accelerator_types = False
    _settle(found)


def _store_one(resource: str, amount: float, available: bool, found: Found) -> None:
    """One figure of either call: it says nothing of the resources it does not name."""
    if available:
        if found.ray_available is None:
            found.ray_available, found.ray_available_partial = {}, True
        found.ray_available = {**found.ray_available, resource: amount}
    else:
        found.ray_totals = {**found.ray_totals, resource: amount}
    _settle(found)


def _settle(found: Found) -> None:
    figures = _figures(found)
    totals, free = found.ray_totals, found.ray_available
    if totals:
        figures.totals = {**figures.totals, **totals}
    if totals and free is not None:
        if found.ray_available_partial:
            used = {k: max(v - free[k], 0.0) for k, v in totals.items() if k in free}
            figures.used = {**figures.used, **used}
        else:
            figures.used = {k: max(v - free.get(k, 0.0), 0.0) for k, v in totals.items()}


def read_figure_line(text: str, found: Found) -> bool:
    """``Total GPUs: 4.0``: one figure of ``cluster_resources()`` or ``available_resources()``."""
    match = _FIGURE.match(text[:200])
    if match is None:
        return False
    label = match.group("label")
    words = re.findall(r"[A-Za-z]+", _CALL.sub(" ray ", label).lower())
    if any(word not in _LABEL_WORDS for word in words):
        return False
    resources = {m.group("name").upper() for m in _RESOURCE.finditer(label)}
    if len(resources) != 1:
        return False
    available = bool(AVAILABLE_LABEL.search(label))
    if not available and not TOTALS_LABEL.search(label):
        return False
    _store_one(resources.pop(), float(match.group("amount")), available, found)
    found.recognise(PRINTOUT_FORMAT)
    return True
