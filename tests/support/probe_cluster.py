"""The demo's real Ray cluster as the probe tests need it: three raylets on 127.0.0.2-.4 (CPU head,
an A100 and a T4 worker, one logical GPU each), with this venv's ``bin`` first on their PATH so that a
probe job's ``python`` has Ray, as it does in Ray's images."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from bot.collect.deadline import Deadline
from bot.collect.ray_dashboard import DashboardReader, collect_ray
from bot.demo.local_ray import LocalCluster, running_cluster
from bot.read.ray_json import ray_state
from bot.snapshot.ray import Demand


@contextlib.contextmanager
def probe_cluster() -> Iterator[LocalCluster]:
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    with running_cluster(say=lambda _: None, extra_env={"PATH": path}) as cluster:
        yield cluster


def ray_demands(dashboard_url: str) -> list[Demand]:
    """What the cluster's Ray reports as waiting for resources, read the way raydiag reads it."""
    return ray_state(collect_ray(DashboardReader(dashboard_url, Deadline(10)))).demands


def wait_for_demands(dashboard_url: str, done: Callable[[list[Demand]], bool], timeout_s: float = 60) -> None:
    """Poll the demands until ``done`` holds. Ray reports a task's demand a few seconds after it is
    placed or gone, so a test that reads the cluster right after probes waits for the report to
    settle (``done=lambda found: not found``)."""
    deadline = time.monotonic() + timeout_s
    while not done(ray_demands(dashboard_url)):
        if time.monotonic() >= deadline:
            raise AssertionError(f"Ray's demands did not settle in {timeout_s:g}s")
        time.sleep(0.5)
