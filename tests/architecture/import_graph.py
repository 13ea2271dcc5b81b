"""The import graph of a package, read from its source with ``ast``, and the cycles in it.

An edge is an import that runs when its module is imported: a statement at module level (inside
``if``, ``try`` or a class body too), not one inside a function. ``from package import name`` is
an edge to ``package.name`` when that is a module of the package, else to ``package``; relative
imports are resolved. Imports under ``if TYPE_CHECKING:`` never run; ``type_checking=True`` counts
them as well, so that a circle of type-only imports is found too (the ``else`` branch always counts).
Only modules of the package are nodes: the standard library and third parties cannot close a circle
through it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path


def module_names(root: Path, package: str) -> dict[str, Path]:
    """Every module of ``root/package``, by dotted name (a package by its ``__init__``)."""
    found: dict[str, Path] = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _run_at_import(body: list[ast.stmt], type_checking: bool) -> Iterator[ast.Import | ast.ImportFrom]:
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If):
            if type_checking or not _is_type_checking(node.test):
                yield from _run_at_import(node.body, type_checking)
            yield from _run_at_import(node.orelse, type_checking)
        elif isinstance(node, ast.Try):
            for block in (node.body, *(h.body for h in node.handlers), node.orelse, node.finalbody):
                yield from _run_at_import(block, type_checking)
        elif isinstance(node, ast.With | ast.ClassDef):
            yield from _run_at_import(node.body, type_checking)


def _targets(node: ast.Import | ast.ImportFrom, name: str, is_package: bool, known: set[str]) -> set[str]:
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names} & known
    base = node.module or ""
    if node.level:
        anchor = name.split(".") if is_package else name.split(".")[:-1]
        anchor = anchor[: len(anchor) - (node.level - 1)]
        base = ".".join([*anchor, base] if base else anchor)
    found = set()
    for alias in node.names:
        child = f"{base}.{alias.name}"
        found.add(child if child in known else base)
    return found & known


def import_graph(root: Path, package: str, *, type_checking: bool = False) -> dict[str, set[str]]:
    """Each module of the package and the modules of the package it imports when imported."""
    modules = module_names(root, package)
    known = set(modules)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        is_package = path.name == "__init__.py"
        edges: set[str] = set()
        for node in _run_at_import(tree.body, type_checking):
            edges |= _targets(node, name, is_package, known)
        edges.discard(name)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(start: str) -> None:
        # Iterative, so that a deep package cannot reach Python's recursion limit.
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return sorted(found)


def circle(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """One way round a cycle, from its first module back to it, to name in a failure."""
    members = set(component)
    start = component[0]
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for child in sorted(graph[node] & members):
                if child == start:
                    return [*paths[node], start]
                if child not in paths:
                    paths[child] = [*paths[node], child]
                    following.append(child)
        frontier = following
    return component
