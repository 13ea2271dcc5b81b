"""Run an actor created with arguments its ``__init__`` cannot take on a real local Ray, and record
what the driver prints.

    .venv/bin/python tools/record_constructor_cases.py      # writes the cases listed in SCENARIOS

Why: the rule case that pairs such code with Ray's own words must carry the words Ray really
prints, not ones typed by hand. Each scenario is a snippet as a user would paste it; it runs here
as the driver (its ``ray.init(...)`` starts a one-node local cluster, which Ray shuts down when the
driver exits: nothing else is stopped, and ``ray stop`` is never used). The case is the snippet,
then ``$ python driver.py`` and the driver's output. Ray binds the constructor's arguments on the
driver before it submits the creation (``ray/_common/signature.py``), so the output is the
``TypeError`` raised at the ``.remote()`` line.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TESTS = REPO / "tests"

SCENARIOS = [
    (
        "cases/ray-actor-constructor-arguments-unbound/fires/ray-2-60-actor-created-without-required-arg.txt",
        textwrap.dedent(
            """\
            import ray

            ray.init(num_cpus=2)

            @ray.remote(num_cpus=1)
            class Loader:
                def __init__(self, path, batch_size=32):
                    self.path = path

                def ping(self):
                    return self.path

            loaders = [Loader.remote(batch_size=64) for _ in range(2)]
            print(ray.get([loader.ping.remote() for loader in loaders]))
            """
        ),
    ),
]


def main() -> int:
    for name, snippet in SCENARIOS:
        done = subprocess.run(
            [sys.executable, "-c", snippet],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        output = (done.stdout + done.stderr).strip()
        if done.returncode == 0 or "TypeError" not in output:
            print(f"{name}: no TypeError recorded (exit {done.returncode})\n{output[-2000:]}")
            return 1
        path = TESTS / name
        path.write_text(f"```python\n{snippet}```\n\n$ python driver.py\n{output}\n", encoding="utf-8")
        print(f"wrote {path.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
