"""What the image's Python environment holds: every library raydiag imports, none of the dev tools,
and every data file the package reads.

The build stage installs the whole lock (tests and linters included) and then removes whatever the
installed metadata says ``raydiag`` does not need (tools/image/prune_to_runtime.py). These tests
run that same computation on this checkout's environment, so a new import whose library only
arrives through a dev tool, or a data file left out of the wheel, fails here and not in a Pod.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
import tomllib
from importlib import metadata
from pathlib import Path
from types import ModuleType

import pytest
from packaging.utils import canonicalize_name

from tests.deploy.manifests import REPO

BOT = REPO / "bot"


def _prune_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "prune_to_runtime", REPO / "tools/image/prune_to_runtime.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


prune = _prune_module()


@pytest.fixture(scope="module")
def removed() -> set[str]:
    return set(prune.unneeded("raydiag", prune.installed_distributions()))


def third_party_imports() -> dict[str, Path]:
    """Top-level modules imported anywhere in bot/ that are neither stdlib nor bot itself."""
    found: dict[str, Path] = {}
    for path in sorted(BOT.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top != "bot" and top not in sys.stdlib_module_names:
                    found.setdefault(top, path)
    return found


def test_dev_and_build_tools_are_removed(removed: set[str]) -> None:
    for tool in ("pytest", "mypy", "ruff", "hypothesis", "kubernetes-validate", "setuptools", "wheel", "pip"):
        assert tool in removed, f"{tool} would stay in the image"


def test_every_library_raydiag_imports_stays(removed: set[str]) -> None:
    providers = metadata.packages_distributions()
    for module, where in third_party_imports().items():
        dists = {canonicalize_name(d) for d in providers.get(module, [])}
        assert dists, f"{module} (imported in {where.relative_to(REPO)}) is not installed at all"
        assert dists - removed, (
            f"{module} (imported in {where.relative_to(REPO)}) would be removed: {sorted(dists)}"
        )


def test_extras_of_dependencies_are_followed(removed: set[str]) -> None:
    # ray[default] brings the dashboard client's aiohttp; psycopg[binary] brings its compiled libpq.
    assert "aiohttp" not in removed
    assert "psycopg-binary" not in removed
    assert "raydiag" not in removed


def test_an_unknown_distribution_is_a_clear_error() -> None:
    with pytest.raises(LookupError, match="not-raydiag is not installed"):
        prune.unneeded("not-raydiag", prune.installed_distributions())
    assert prune.main([]) == 2


def test_every_data_file_in_the_package_ships_in_the_wheel() -> None:
    """Non-Python files under bot/ must match package-data, or the installed image lacks them."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    # setuptools globs each pattern relative to the package directory, as Path.glob does.
    shipped = {
        path for pattern in config["tool"]["setuptools"]["package-data"]["bot"] for path in BOT.glob(pattern)
    }
    missing = [
        str(path.relative_to(BOT))
        for path in sorted(BOT.rglob("*"))
        if path.is_file()
        and path.suffix not in (".py", ".pyc")
        and "__pycache__" not in path.parts
        and path not in shipped
    ]
    assert missing == [], f"add these to [tool.setuptools.package-data] in pyproject.toml: {missing}"
