"""Print the installed distributions the application does not need at run time, one per line.

The image installs the whole hashed lock (``requirements.lock``), which also holds the test and
lint tools (pytest, mypy, ruff, kubernetes-validate...) and the build tools (pip, setuptools,
wheel). Rather than keep a second, hand-made lock or a list of names that drifts, the build stage
asks the installed metadata itself: everything reachable from the application's requirements
(extras and environment markers included) stays, the rest is printed for ``pip uninstall``.

    python prune_to_runtime.py raydiag > unneeded.txt && pip uninstall -y -r unneeded.txt

Standard library and ``packaging`` only (``packaging`` is a run-time dependency of Ray).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from importlib import metadata

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name


def _requirements(dist: metadata.Distribution, extras: Iterable[str]) -> list[Requirement]:
    wanted: list[Requirement] = []
    for line in dist.requires or []:
        try:
            requirement = Requirement(line)
        except InvalidRequirement:
            continue
        if requirement.marker is None:
            wanted.append(requirement)
            continue
        # A requirement guarded by `extra == "x"` counts only when extra x was asked for.
        if any(requirement.marker.evaluate({"extra": extra}) for extra in (*extras, "")):
            wanted.append(requirement)
    return wanted


def runtime_closure(root: str, installed: dict[str, metadata.Distribution]) -> set[str]:
    """Canonical names of ``root`` and everything its requirements pull in, extras included."""
    needed: set[str] = set()
    pending: list[tuple[str, frozenset[str]]] = [(canonicalize_name(root), frozenset())]
    seen: set[tuple[str, frozenset[str]]] = set()
    while pending:
        name, extras = pending.pop()
        if (name, extras) in seen or name not in installed:
            continue
        seen.add((name, extras))
        needed.add(name)
        for requirement in _requirements(installed[name], extras):
            pending.append((canonicalize_name(requirement.name), frozenset(requirement.extras)))
    return needed


def installed_distributions() -> dict[str, metadata.Distribution]:
    return {canonicalize_name(d.metadata["Name"]): d for d in metadata.distributions() if d.metadata["Name"]}


def unneeded(root: str, installed: dict[str, metadata.Distribution]) -> list[str]:
    if canonicalize_name(root) not in installed:
        raise LookupError(f"{root} is not installed in this environment")
    keep = runtime_closure(root, installed)
    return sorted(name for name in installed if name not in keep)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: prune_to_runtime.py DISTRIBUTION", file=sys.stderr)
        return 2
    try:
        names = unneeded(argv[0], installed_distributions())
    except LookupError as error:
        print(f"prune_to_runtime: {error}", file=sys.stderr)
        return 1
    print("\n".join(names))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
