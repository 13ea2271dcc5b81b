"""The boundary of raydiag's data: plain dataclasses in, plain data and JSON out.

Models are frozen, keyword-only standard dataclasses (``bot.snapshot.base.Record``); code that
builds them passes typed values and pays for nothing more than ``__init__``. Data from outside —
a snapshot file, a stored diagnosis, a rule's YAML, the config — is checked and converted here by
pydantic, which validates standard dataclasses (and its own models) by their annotations:
``load(Type, data)``, ``load_json(Type, text)``; ``dump(obj)`` and ``dump_json(obj)`` write them
back. Copies are ``dataclasses.replace``.

pydantic is imported on first use only: a paste explained from the terminal never loads it. Each
type's ``TypeAdapter`` is built once per process (two threads asking at once may both build it;
either answer is the same). Errors are pydantic's ``ValidationError`` (a ``ValueError``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from pydantic import TypeAdapter

T = TypeVar("T")

_ADAPTERS: dict[Any, TypeAdapter[Any]] = {}


def adapter(model: Any) -> TypeAdapter[Any]:
    """pydantic's validator and serialiser of ``model``, built once per process on first use."""
    found = _ADAPTERS.get(model)
    if found is None:
        from pydantic import TypeAdapter  # noqa: PLC0415 - lazy: only data from outside needs pydantic

        found = _ADAPTERS[model] = TypeAdapter(model)
    return found


def load(model: type[T], data: Any) -> T:
    """``data`` (a mapping, or an instance of ``model`` already) checked and converted into a
    ``model``; raises pydantic's ``ValidationError``. Unknown keys are ignored unless the type
    forbids them (``StrictRecord``)."""
    if type(data) is model:
        return data
    return adapter(model).validate_python(data)  # type: ignore[no-any-return]


def load_json(model: type[T], text: str | bytes) -> T:
    """JSON ``text`` checked and converted into a ``model``; raises pydantic's ``ValidationError``."""
    return adapter(model).validate_json(text)  # type: ignore[no-any-return]


def dump(obj: Any, **options: Any) -> Any:
    """``obj`` as plain data (``mode="json"`` for JSON types); options as ``TypeAdapter.dump_python``."""
    return adapter(type(obj)).dump_python(obj, **options)


def dump_json(obj: Any, **options: Any) -> str:
    """``obj`` as JSON text; options as ``TypeAdapter.dump_json`` (``indent=1``, ...)."""
    return adapter(type(obj)).dump_json(obj, **options).decode()
