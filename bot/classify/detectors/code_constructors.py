"""An actor or a Serve replica that never starts because its constructor cannot take its arguments.

The reading is the code's (:mod:`bot.read.constructor_calls`): the paste shows a class with its own
``__init__`` and a call that constructs it (``A.remote(...)``, ``X.bind(...)``, ``X.deploy(...)``)
whose arguments Python's binding refuses. That is certain from the code alone, but the code pasted
may not be the code that ran, so the finding is a warning; it becomes critical when the paste also
shows the ``TypeError`` the binding gives (Ray's words on the driver, or Python's from the
replica's constructor) or Serve's "failed to start ... times in a row", which it then quotes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import field
from typing import Literal

from bot.catalogue import Rule
from bot.classify.context import Context
from bot.classify.detectors.text import alternation, check_patterns
from bot.classify.registry import Hit, detector
from bot.diagnosis import Evidence, Subject
from bot.snapshot.base import StrictRecord

_MAX_LINE = 400
_MAX_HITS = 5


class ConstructorParams(StrictRecord):
    # Which constructions the rule reads: ``actor`` (``A.remote(...)``) or ``deployment`` (Serve).
    kind: Literal["actor", "deployment"] = "deployment"
    # What the runtime prints when the construction fails: its quote confirms the code's reading.
    patterns: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.patterns:
            raise ValueError("patterns: should have at least 1 item")
        check_patterns("patterns", self.patterns)


@detector("constructor_cannot_bind", ("class", "init", "call", "error"), ConstructorParams)
def constructor_cannot_bind(ctx: Context, rule: Rule) -> Iterable[Hit]:
    ray = ctx.ray
    if ray is None or not ray.constructor_mismatches:
        return
    params = ConstructorParams(**rule.params)
    mismatches = [m for m in ray.constructor_mismatches if m.kind == params.kind]
    if not mismatches:
        return
    patterns = tuple(params.patterns)
    pattern = alternation(patterns)
    confirming: list[str] = []
    for text in ctx.texts_that_may_match(*patterns):
        if pattern.search(text.searched) is not None and text.text not in confirming:
            confirming.append(text.text[:_MAX_LINE])
        if len(confirming) >= 3:
            break
    shown: set[str] = set()
    for mismatch in mismatches:
        if mismatch.class_name in shown or len(shown) >= _MAX_HITS:
            continue
        shown.add(mismatch.class_name)
        evidence = [
            Evidence(source="python code", text=mismatch.init),
            Evidence(source="python code", text=mismatch.call),
            *(Evidence(source="error", text=line) for line in confirming),
        ]
        yield Hit(
            Subject(
                kind="RayActor" if mismatch.kind == "actor" else "ServeDeployment", name=mismatch.class_name
            ),
            tuple(evidence),
            {
                "class": mismatch.class_name,
                "init": mismatch.init,
                "call": mismatch.call,
                "error": mismatch.error,
            },
            "critical" if confirming else None,
        )
