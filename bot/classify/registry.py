"""Detectors: the named functions that notice problems and feed rules.

A detector reads the classification ``Context`` (never the network) and yields ``Hit``s for the
rule that called it. It declares which template placeholders it fills (``provides``) so the
catalogue loader can reject a rule that uses a name the detector never sets, and it may declare a
pydantic model for the rule's ``params``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from bot.diagnosis import Evidence, Subject
from bot.terms import Severity

if TYPE_CHECKING:
    from bot.catalogue import Rule
    from bot.classify.context import Context

# Filled for every hit, whatever the detector.
COMMON_PLACEHOLDERS = frozenset({"cluster", "namespace", "kind", "name"})


@dataclass(frozen=True)
class Hit:
    subject: Subject
    evidence: tuple[Evidence, ...] = ()
    params: Mapping[str, str] = field(default_factory=dict)
    severity: Severity | None = None


DetectorFunc = Callable[["Context", "Rule"], Iterable[Hit]]


@dataclass(frozen=True)
class DetectorSpec:
    name: str
    func: DetectorFunc
    provides: frozenset[str]
    params_model: type[BaseModel] | None = None

    def check_params(self, params: Mapping[str, Any]) -> str | None:
        if self.params_model is None:
            return f"detector '{self.name}' takes no params" if params else None
        try:
            self.params_model.model_validate(dict(params))
        except ValidationError as error:
            return "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or '(top level)'}: {e['msg']}" for e in error.errors()
            )
        return None

    def parsed_params(self, params: Mapping[str, Any]) -> Any:
        return self.params_model.model_validate(dict(params)) if self.params_model else None


DETECTORS: dict[str, DetectorSpec] = {}


def detector(
    name: str, provides: Iterable[str], params: type[BaseModel] | None = None
) -> Callable[[DetectorFunc], DetectorFunc]:
    def register(func: DetectorFunc) -> DetectorFunc:
        if name in DETECTORS:
            raise ValueError(f"detector {name} registered twice")
        DETECTORS[name] = DetectorSpec(name, func, frozenset(provides) | COMMON_PLACEHOLDERS, params)
        return func

    return register
