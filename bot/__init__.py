"""raydiag: why Ray work on Kubernetes is stuck, read from both schedulers' layers.

The flow, one package per step: ``collect`` (live APIs, files, pasted text) builds one immutable
``snapshot``; ``classify`` (a pure function over the rule ``catalogue``) turns it into a
``diagnosis``; ``render`` writes it for a terminal, Markdown, JSON or Slack.

The names below are loaded when first used, so that ``raydiag --help`` and every module that only
needs one step do not pay for importing all of them.
"""

from __future__ import annotations

import sys
from importlib import import_module
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bot.catalogue import Catalogue, Rule, load_catalogue
    from bot.classify import classify
    from bot.diagnosis import Diagnosis, Evidence, Finding, Subject
    from bot.snapshot.model import Snapshot

_HOMES = {
    "Catalogue": "bot.catalogue",
    "Rule": "bot.catalogue",
    "load_catalogue": "bot.catalogue",
    "classify": "bot.classify",
    "Diagnosis": "bot.diagnosis",
    "Evidence": "bot.diagnosis",
    "Finding": "bot.diagnosis",
    "Subject": "bot.diagnosis",
    "Snapshot": "bot.snapshot.model",
}

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


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(home), name)


class _Package(ModuleType):
    """``bot.classify`` stays the function, as it was when this package imported it eagerly.

    Importing the subpackage ``bot.classify`` sets the attribute to the module; the function is
    what ``from bot import classify`` has always given.
    """

    @property
    def classify(self) -> Any:
        return import_module("bot.classify").classify

    @classify.setter
    def classify(self, value: Any) -> None:
        pass


sys.modules[__name__].__class__ = _Package
