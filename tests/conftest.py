"""Fixtures shared by several test folders."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator

import pytest

from tests.support.figures import FIGURE
from tests.support.postgres import PostgresServer, PostgresUnavailable, shared


def pytest_configure(config: pytest.Config) -> None:
    """The compiled-catalogue cache of this run lives in a temporary folder, not in ~/.cache: tests
    copy the rules into many temporary folders, and each would leave a cache file behind."""
    if "RAYDIAG_CACHE_DIR" not in os.environ:
        os.environ["RAYDIAG_CACHE_DIR"] = tempfile.mkdtemp(prefix="raydiag-test-cache-")
        config.stash[_CACHE_KEY] = os.environ["RAYDIAG_CACHE_DIR"]


def pytest_unconfigure(config: pytest.Config) -> None:
    made = config.stash.get(_CACHE_KEY, None)
    if made is not None:
        shutil.rmtree(made, ignore_errors=True)
        os.environ.pop("RAYDIAG_CACHE_DIR", None)


_CACHE_KEY = pytest.StashKey[str]()


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under ``--dist loadgroup`` each worker's items of an ``xdist_group`` must carry the group in
    their id (``...@real-ray``): that suffix is all the scheduler groups by. A pytest or xdist
    release that loses it would run the real-Ray modules on several workers at once, each starting
    raylets on the same loopback addresses; stop the run instead of letting it be slow and flaky."""
    if not getattr(config.option, "loadgroup", False):
        return
    lost = [i.nodeid for i in items if i.get_closest_marker("xdist_group") and "@" not in i.nodeid]
    if lost:
        raise pytest.UsageError(
            f"--dist loadgroup did not group {len(lost)} test(s) (e.g. {lost[0]}): pytest-xdist cannot "
            "rename test ids with this pytest; see the pin in pyproject.toml"
        )


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Figures tests measured (the fit replay's agreement with the real scheduler), recorded with
    ``record_property(FIGURE, line)``: the line travels with the test's report, from an xdist
    worker too, and is printed once at the end of the run."""
    lines = [
        str(value)
        for outcome in ("passed", "failed")
        for report in terminalreporter.stats.get(outcome, [])
        for name, value in getattr(report, "user_properties", [])
        if name == FIGURE
    ]
    if lines:
        terminalreporter.section("figures")
        for line in lines:
            terminalreporter.write_line(line)


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """One real PostgreSQL server for the session (Debian's `postgresql`; `make postgres` installs it)."""
    try:
        server = shared.acquire()
    except PostgresUnavailable as error:
        pytest.fail(str(error), pytrace=False)
    yield server
    shared.release()
