"""Detectors: the named functions that notice problems and feed rules.

A detector reads the classification ``Context`` (never the network) and yields ``Hit``s for the
rule that called it. It declares which template placeholders it fills (``provides``) so the
catalogue loader can reject a rule that uses a name the detector never sets, and it may declare a
record type (``bot.snapshot.base.Record``) for the rule's ``params``.

A rule's params are checked once, by pydantic, when the catalogue is compiled (``check_params``);
a detector then builds its params record directly from the checked values, without pydantic. A
record's ``__post_init__`` raises ``ValueError("<field>: <what is wrong>")`` for what its
annotations cannot say; a check too costly to repeat each time a rule runs (compiling patterns) is
a ``check()`` method of the record instead, which only ``check_params`` calls.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bot.diagnosis import Evidence, Subject
from bot.facts import Fact
from bot.snapshot.base import problems
from bot.snapshot.data import load
from bot.terms import Severity

if TYPE_CHECKING:
    from bot.catalogue import Rule
    from bot.classify.context import Context
    from bot.snapshot.base import Record

# Filled for every hit, whatever the detector.
COMMON_PLACEHOLDERS = frozenset({"cluster", "namespace", "kind", "name"})


@dataclass(frozen=True)
class Hit:
    subject: Subject
    evidence: tuple[Evidence, ...] = ()
    params: Mapping[str, str] = field(default_factory=dict)
    severity: Severity | None = None
    facts: tuple[Fact, ...] = ()


DetectorFunc = Callable[["Context", "Rule"], Iterable[Hit]]


@dataclass(frozen=True)
class DetectorSpec:
    name: str
    func: DetectorFunc
    provides: frozenset[str]
    params_model: type[Record] | None = None

    def check_params(self, params: Mapping[str, Any]) -> str | None:
        if self.params_model is None:
            return f"detector '{self.name}' takes no params" if params else None
        from pydantic import ValidationError  # noqa: PLC0415 - lazy: only compiling the catalogue validates params

        try:
            parsed = load(self.params_model, dict(params))
            check = getattr(parsed, "check", None)
            if check is not None:
                check()
        except ValidationError as error:
            return problems(error)
        except ValueError as error:  # from the record's ``check()``, which names its field
            return str(error)
        return None


DETECTORS: dict[str, DetectorSpec] = {}


def detector(
    name: str, provides: Iterable[str], params: type[Record] | None = None
) -> Callable[[DetectorFunc], DetectorFunc]:
    def register(func: DetectorFunc) -> DetectorFunc:
        if name in DETECTORS:
            raise ValueError(f"detector {name} registered twice")
        DETECTORS[name] = DetectorSpec(name, func, frozenset(provides) | COMMON_PLACEHOLDERS, params)
        return func

    return register
