"""raydiag: why Ray work on Kubernetes is stuck, read from both schedulers' layers.

The flow, one package per step: ``collect`` (live APIs, files, pasted text) builds one immutable
``snapshot``; ``classify`` (a pure function over the rule ``catalogue``) turns it into a
``diagnosis``; ``render`` writes it for a terminal, Markdown, JSON or Slack.
"""

from bot.catalogue import Catalogue, Rule, load_catalogue
from bot.classify import classify
from bot.diagnosis import Diagnosis, Evidence, Finding, Subject
from bot.snapshot.model import Snapshot

__all__ = [
    "Catalogue",
    "Diagnosis",
    "Evidence",
    "Finding",
    "Rule",
    "Snapshot",
    "Subject",
    "classify",
    "load_catalogue",
]
