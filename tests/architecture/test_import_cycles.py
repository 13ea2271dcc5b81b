"""No module of ``bot`` imports itself round a circle, not even through type-only imports.

A runtime circle makes the order of imports matter (a name is missing from a half-loaded module,
depending on which module some caller happened to import first). A circle of ``TYPE_CHECKING``
imports does not fail at run time, but it says two modules each need the other's types, which a
small split settles; both kinds are counted. The graph (``import_graph``) is read from the source
with ``ast``; the second half shows it finds a circle planted in a small package of its own.
"""

from __future__ import annotations

from pathlib import Path

from tests.architecture.import_graph import circle, cycles, import_graph

REPO = Path(__file__).resolve().parents[2]


def test_bot_has_no_import_cycle() -> None:
    graph = import_graph(REPO, "bot", type_checking=True)
    found = [" -> ".join(circle(graph, component)) for component in cycles(graph)]
    assert found == [], "import cycles in bot/:\n" + "\n".join(found)


def _package(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / "pkg" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_a_runtime_cycle_is_found(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "__init__.py": "",
            "models.py": "from pkg.rules import Rule\n",
            "rules/__init__.py": "",
            # A relative import, inside a try block: both still run at import.
            "rules/check.py": "try:\n    from ..models import Model\nexcept ImportError:\n    pass\n",
            "rules/rule.py": "from . import check\n",
            "leaf.py": "import pkg.models\n",
        },
    )
    (root / "pkg" / "rules" / "__init__.py").write_text("from pkg.rules.rule import Rule\n")

    graph = import_graph(root, "pkg")

    assert cycles(graph) == [["pkg.models", "pkg.rules", "pkg.rules.check", "pkg.rules.rule"]]
    assert circle(graph, cycles(graph)[0]) == [
        "pkg.models",
        "pkg.rules",
        "pkg.rules.rule",
        "pkg.rules.check",
        "pkg.models",
    ]


def test_a_type_only_cycle_is_found_only_when_type_imports_count(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.b import B\n",
            "b.py": "from pkg import a\n",
        },
    )

    assert cycles(import_graph(root, "pkg")) == []
    assert cycles(import_graph(root, "pkg", type_checking=True)) == [["pkg.a", "pkg.b"]]


def test_an_import_inside_a_function_is_no_edge(tmp_path: Path) -> None:
    # Deferred to the call: it runs after both modules have loaded, so it closes no circle.
    root = _package(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": "import pkg.b\n",
            "b.py": "def late():\n    from pkg import a\n    return a\n",
        },
    )

    graph = import_graph(root, "pkg", type_checking=True)

    assert graph["pkg.a"] == {"pkg.b"} and graph["pkg.b"] == set()
    assert cycles(graph) == []
