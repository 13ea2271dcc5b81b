"""Record what ``ray.cluster_resources()`` and ``ray.available_resources()`` print on a real local Ray.

    .venv/bin/python tools/record_resource_printouts.py     # writes tests/read/ray-state/<case>.txt

Why: people paste these values in two shapes, a whole dict after a label (``Available resources:
{...}``) and one figure picked out and labelled (``Available GPUs:  2.0``), and the reader cases
must carry what Ray really returns (floats, ``node:<ip>`` keys, memory in bytes), not dicts typed
by hand. The script starts a one-node local cluster with four logical GPUs (``ray.init(num_gpus=4)``
declares them; no GPU hardware is needed), keeps two one-GPU actors alive so that what is free
differs from the totals, prints both shapes the way users' scripts do, and stops the cluster with
``ray.shutdown()``: only what it started is stopped, and ``ray stop`` is never used.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CASE = REPO / "tests" / "read" / "ray-state" / "recorded-2-60-labelled-totals-and-available-gpu-actors.txt"

SNIPPET = textwrap.dedent(
    """\
    import ray

    ray.init(num_cpus=8, num_gpus=4, include_dashboard=False)

    @ray.remote(num_gpus=1)
    class Holder:
        def ready(self):
            return True

    holders = [Holder.remote() for _ in range(2)]
    ray.get([h.ready.remote() for h in holders])

    print("Total GPUs: ", ray.cluster_resources().get("GPU", 0))
    print("Available GPUs: ", ray.available_resources().get("GPU", 0))
    print("Cluster resources:", ray.cluster_resources())
    print("Available resources:", ray.available_resources())
    ray.shutdown()
    """
)


def main() -> int:
    result = subprocess.run(
        [sys.executable, "-c", SNIPPET], capture_output=True, text=True, timeout=300, check=False
    )
    if result.returncode != 0:
        sys.stderr.write(result.stderr)
        return result.returncode
    CASE.write_text(result.stdout)
    print(f"wrote {CASE.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
