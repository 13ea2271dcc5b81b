"""The import contracts of pyproject.toml hold, and they catch the imports they are there to stop.

``lint-imports`` (import-linter) checks the layers, and which packages may use the Slack, Kubernetes
and Ray libraries, over the real import graph of ``bot``, with no exceptions listed. The second
half proves each contract works: a copy of the package gets one new import that the contract
forbids, and the check must fail and name it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _lint(root: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(root), "NO_COLOR": "1", "COLUMNS": "200"}
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", str(root / "pyproject.toml")],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_contracts_hold_on_the_code() -> None:
    done = _lint(REPO)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout, done.stdout


@pytest.fixture(scope="module")
def package_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The package and its pyproject.toml, copied: the place to add a forbidden import."""
    root = tmp_path_factory.mktemp("contracts")
    shutil.copytree(REPO / "bot", root / "bot", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    return root


@pytest.mark.parametrize(
    ("module", "line", "broken"),
    [
        # Upward: a snapshot model reaching for a renderer.
        (
            "bot/snapshot/_upward.py",
            "import bot.render.text_report",
            "bot.snapshot is not allowed to import bot.render",
        ),
        # Sideways: one trigger importing another.
        (
            "bot/schedule/_sideways.py",
            "import bot.demo.workload",
            "bot.schedule is not allowed to import bot.demo",
        ),
        # A classifier talking Slack.
        ("bot/classify/_chatty.py", "import slack_sdk", "bot.classify is not allowed to import slack_sdk"),
        # A collector judging what it read.
        (
            "bot/collect/_judges.py",
            "import bot.classify.fit",
            "bot.collect is not allowed to import bot.classify",
        ),
        # A renderer calling the Kubernetes API.
        (
            "bot/render/_reads.py",
            "import kubernetes.client",
            "bot.render is not allowed to import kubernetes",
        ),
    ],
)
def test_a_new_forbidden_import_breaks_the_contracts(
    package_copy: Path, module: str, line: str, broken: str
) -> None:
    added = package_copy / module
    added.write_text(f'"""Added by the contract test."""\n\n{line}\n', encoding="utf-8")
    try:
        done = _lint(package_copy)
    finally:
        added.unlink()
    assert done.returncode == 1, done.stdout + done.stderr
    assert broken in done.stdout, done.stdout
    assert added.stem in done.stdout, done.stdout
