"""Reading kubectl's aligned tables by the column positions of their header.

kubectl pads every column to the widest cell and starts each one at the same offset as its
header, so a header tells where each value starts even when values contain spaces (``LAST SEEN``,
``13 (68s ago)``, event messages) or are empty (``SUBOBJECT``). Pasting through chat or a browser
can break that alignment; ``slice_row`` then returns None and callers fall back to reading tokens.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Header names are upper-case words separated by single spaces; columns by two or more.
_HEADER_NAME = re.compile(r"\S+(?: \S+)*")


@dataclass(frozen=True)
class Column:
    name: str
    start: int


def header_columns(header: str) -> list[Column]:
    return [Column(match.group(), match.start()) for match in _HEADER_NAME.finditer(header)]


def slice_row(row: str, columns: list[Column]) -> dict[str, str] | None:
    """Values of one row by position, or None when the row does not line up with the header."""
    if not columns or not row.strip():
        return None
    values: dict[str, str] = {}
    for index, column in enumerate(columns):
        start = column.start
        end = columns[index + 1].start if index + 1 < len(columns) else len(row)
        if 0 < start < len(row) and row[start - 1] != " ":
            return None
        values[column.name] = row[start:end].strip() if start < len(row) else ""
    first = columns[0].name
    return values if values.get(first) else None
