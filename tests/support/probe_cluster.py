"""The demo's real Ray cluster as the probe tests need it: three raylets on 127.0.0.2-.4 (CPU head,
an A100 and a T4 worker, one logical GPU each), with this venv's ``bin`` first on their PATH so that a
probe job's ``python`` has Ray, as it does in Ray's images."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from bot.demo.local_ray import LocalCluster, running_cluster


@contextlib.contextmanager
def probe_cluster() -> Iterator[LocalCluster]:
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    with running_cluster(say=lambda _: None, extra_env={"PATH": path}) as cluster:
        yield cluster
