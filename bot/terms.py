"""The words the rule catalogue and a diagnosis share: which layer, how severe.

A leaf with no imports of its own, so that reading the catalogue (``raydiag rules``) does not build
the diagnosis models.
"""

from __future__ import annotations

from typing import Literal

Severity = Literal["critical", "warning", "info"]
Layer = Literal["kubernetes", "ray", "application"]

SEVERITY_ORDER: dict[str, int] = {"critical": 0, "warning": 1, "info": 2}
