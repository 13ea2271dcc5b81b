"""The real control plane as a module-scoped fixture, for every integration test that needs one."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest

from tests.support.controlplane import ControlPlane, ControlPlaneUnavailable, pid_alive, running_controlplane


@pytest.fixture(scope="module")
def plane() -> Iterator[ControlPlane]:
    with contextlib.ExitStack() as stack:
        try:
            started = stack.enter_context(running_controlplane())
        except ControlPlaneUnavailable as error:  # a build that fails is a failure, never a skip
            pytest.fail(str(error), pytrace=False)
        pids = started.running()
        yield started
    # The fixture's promise: every process it started is gone once it is done.
    left = {name: pid for name, pid in pids.items() if pid_alive(pid)}
    assert not left, f"still running after stop: {left}"
