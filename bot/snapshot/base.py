"""The base of raydiag's data models: frozen dataclasses, checked where data enters.

Snapshot, diagnosis and rule models are plain ``dataclasses`` (frozen, keyword-only). Code that
builds them passes typed values and pays for nothing more than ``__init__``; data from outside —
a snapshot file, a stored diagnosis, a rule's YAML — is checked and converted by pydantic, which
validates standard dataclasses with their annotations (``Record.model_validate``) and writes them
as JSON (``model_dump_json``). pydantic is imported only then: a paste explained from the terminal
never loads it (importing it and building a hundred models cost more than the whole answer).

The methods keep the names of pydantic's model API that the code and tests use, with the same
meaning: ``model_validate``, ``model_validate_json``, ``model_dump``, ``model_dump_json`` and
``model_copy``. Unknown keys are ignored when validating, as pydantic does for dataclasses.

Two behaviours pydantic gave through annotations are done here, so that every way of making a
record has them: ``Redacted`` and ``RedactedLines`` fields are redacted in ``__post_init__``
(pydantic calls it too after validating), and a record's own ``__post_init__`` derives what it
derives. Attributes set there with ``object.__setattr__`` that are not fields (derived flags,
caches) are not written out.
"""

from __future__ import annotations

import dataclasses
import inspect
import operator
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Self, dataclass_transform

from bot.snapshot.redact import redact, redact_lines

if TYPE_CHECKING:
    from pydantic import TypeAdapter, ValidationError

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


_ADAPTERS: dict[type[Any], TypeAdapter[Any]] = {}


def adapter(model: type[Any]) -> TypeAdapter[Any]:
    """pydantic's validator and serialiser of a record type, built once per process on first use
    (two threads asking at once may both build it; either answer is the same)."""
    found = _ADAPTERS.get(model)
    if found is None:
        from pydantic import TypeAdapter  # noqa: PLC0415 - lazy: only data from outside needs pydantic

        found = _ADAPTERS[model] = TypeAdapter(model)
    return found


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


def _no_values(record: Any) -> tuple[()]:
    return ()


@dataclass_transform(frozen_default=True, kw_only_default=True, field_specifiers=(dataclasses.field,))
class Record:
    """A frozen, keyword-only dataclass; each subclass is made one when it is defined."""

    __record_fields__: ClassVar[frozenset[str]] = frozenset()
    __record_names__: ClassVar[tuple[str, ...]] = ()
    __record_values__: ClassVar[Callable[[Any], Any]]

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
        # dataclasses writes a class's methods as source and runs it, about 80 µs a method: a
        # paste's hundred-odd record types cost 50 ms so. ``__eq__``, ``__hash__`` and ``__repr__``
        # are therefore Record's own, over the fields' values (as the generated ones compare and
        # show them), and a class without a docstring is given one, which spares dataclasses
        # writing its signature as one.
        if not cls.__dict__.get("__doc__"):
            cls.__doc__ = f"The {cls.__name__} record."
        dataclasses.dataclass(frozen=True, kw_only=True, eq=False, repr=False)(cls)
        names = tuple(f.name for f in dataclasses.fields(cls))  # type: ignore[arg-type]
        cls.__record_fields__ = frozenset(names)
        cls.__record_names__ = names
        cls.__record_values__ = operator.attrgetter(*names) if names else _no_values

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        values = type(self).__record_values__
        return bool(values(self) == values(other))

    def __hash__(self) -> int:
        return hash(type(self).__record_values__(self))

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__record_names__)
        return f"{self.__class__.__qualname__}({shown})"

    @classmethod
    def model_validate(cls, data: Any) -> Self:
        """``data`` (a mapping, or a record already) checked and converted; raises pydantic's
        ``ValidationError``."""
        if type(data) is cls:
            return data
        return adapter(cls).validate_python(data)  # type: ignore[no-any-return]

    @classmethod
    def model_validate_json(cls, text: str | bytes) -> Self:
        return adapter(cls).validate_json(text)  # type: ignore[no-any-return]

    def model_dump(self, **options: Any) -> Any:
        """The record as plain data (``mode="json"`` for JSON types), as pydantic's ``model_dump``."""
        return adapter(type(self)).dump_python(self, **options)

    def model_dump_json(self, **options: Any) -> str:
        return adapter(type(self)).dump_json(self, **options).decode()

    def model_copy(self, *, update: Mapping[str, Any] | None = None) -> Self:
        """A copy with ``update`` applied; the copy is made again (``__post_init__`` runs), so what
        a record derives follows the new values. Keys that are not fields set attributes after."""
        if not update:
            return dataclasses.replace(self)  # type: ignore[type-var]
        fields = self.__record_fields__
        copy = dataclasses.replace(self, **{k: v for k, v in update.items() if k in fields})  # type: ignore[type-var]
        for key, value in update.items():
            if key not in fields:
                object.__setattr__(copy, key, value)
        return copy


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
        for item in dataclasses.fields(model):  # type: ignore[arg-type]
            if item.default_factory is not dataclasses.MISSING:
                found[item.name] = item.default_factory()
            elif item.default is not dataclasses.MISSING:
                found[item.name] = item.default
        _DEFAULTS[model] = found
    return found


class StrictRecord(Record):
    """A record whose data from outside may hold no unknown key (rule files, rule params)."""

    __pydantic_config__: ClassVar[Mapping[str, Any]] = {"extra": "forbid"}
