"""The base of raydiag's data models: frozen, keyword-only standard dataclasses.

``Record`` makes each subclass a ``dataclasses.dataclass(frozen=True, kw_only=True)`` when it is
defined; nothing else about the class changes (``__eq__``, ``__hash__``, ``__repr__`` are the ones
dataclasses generates). Data from outside is checked and converted at the boundary,
``bot.snapshot.data`` (``load``/``dump`` over pydantic's ``TypeAdapter``); copies are
``dataclasses.replace``; derived values are ``functools.cached_property``.

``Redacted`` and ``RedactedLines`` fields are redacted in ``__post_init__`` (pydantic calls it too
after validating), so that every way of making a record has them.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, dataclass_transform

from bot.snapshot.redact import redact, redact_lines

if TYPE_CHECKING:
    from pydantic import ValidationError

# The annotation, as written (the modules use ``from __future__ import annotations``), of a field
# whose text is redacted: ``Redacted``, ``Redacted | None``, ``RedactedLines``, ``dict[str, Redacted]``.
_REDACTED = re.compile(r"\bRedacted")


def new_list() -> list[Any]:
    """A fresh empty list: the ``default_factory`` of the config's (pydantic) list fields.

    Not ``list`` itself: for each field pydantic asks whether its factory takes an argument, and for
    a builtin type that means parsing the type's text signature (about 1.5 ms a field). The records
    here are dataclasses, which call ``list`` as it is.
    """
    return []


def new_dict() -> dict[Any, Any]:
    """A fresh empty dict (see ``new_list``)."""
    return {}


def _redacted(value: Any) -> Any:
    """``value`` (text, a list of lines, or a mapping to text) with its secrets masked."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return redact_lines(value)
    if isinstance(value, dict):
        return {key: redact(text) if isinstance(text, str) else text for key, text in value.items()}
    return value


def _redactor(names: tuple[str, ...]) -> Callable[[Any], None]:
    def redact_fields(record: Any) -> None:
        for name in names:
            value = getattr(record, name)
            if value:
                object.__setattr__(record, name, _redacted(value))

    return redact_fields


@dataclass_transform(frozen_default=True, kw_only_default=True, field_specifiers=(dataclasses.field,))
class Record:
    """A frozen, keyword-only dataclass; each subclass is made one when it is defined."""

    if TYPE_CHECKING:  # what makes a class a dataclass to the type checker (``dataclasses.replace``)
        __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        redacted = [
            name
            for name, annotation in inspect.get_annotations(cls).items()
            if _REDACTED.search(str(annotation))
        ]
        if redacted:
            own = cls.__dict__.get("__post_init__")
            inherited = None if own is not None else getattr(cls, "__post_init__", None)
            redact_fields = _redactor(tuple(redacted))

            def __post_init__(self: Any) -> None:
                if inherited is not None:
                    inherited(self)
                redact_fields(self)
                if own is not None:
                    own(self)

            cls.__post_init__ = __post_init__  # type: ignore[attr-defined]
        # A class without a docstring is given one, which spares dataclasses writing its
        # signature as one (inspect.signature, about 80 µs a class).
        if not cls.__dict__.get("__doc__"):
            cls.__doc__ = f"The {cls.__name__} record."
        dataclasses.dataclass(frozen=True, kw_only=True)(cls)


def problems(error: ValidationError) -> str:
    """pydantic's errors as ``<field>: <what is wrong>``, joined by ``; ``. A ``ValueError`` a
    record raises itself (its ``__post_init__``) comes without a place, and its text names it."""
    parts = []
    for item in error.errors():
        where = ".".join(str(p) for p in item["loc"])
        message = item["msg"].removeprefix("Value error, ") if item["type"] == "value_error" else item["msg"]
        parts.append(f"{where}: {message}" if where else message)
    return "; ".join(parts)


_DEFAULTS: dict[type[Any], dict[str, Any]] = {}


def defaults(model: type[Record]) -> dict[str, Any]:
    """Each field's default of a record type, by field name (a factory's called once per type:
    the values are for comparing with, not for filling in)."""
    found = _DEFAULTS.get(model)
    if found is None:
        found = {}
        for item in dataclasses.fields(model):
            if item.default_factory is not dataclasses.MISSING:
                found[item.name] = item.default_factory()
            elif item.default is not dataclasses.MISSING:
                found[item.name] = item.default
        _DEFAULTS[model] = found
    return found


class StrictRecord(Record):
    """A record whose data from outside may hold no unknown key (rule files, rule params)."""

    __pydantic_config__: ClassVar[Mapping[str, Any]] = {"extra": "forbid"}
