"""Run pasted-code scenarios on a real local Ray and record the ``ray status`` they leave.

    .venv/bin/python tools/record_code_cases.py            # writes the cases listed in SCENARIOS

Why: a rule case that pairs code with cluster output must carry the output Ray really prints for
that code, not one typed by hand. Each scenario is a snippet as a user would paste it. It runs here
as the driver (its own ``ray.init(...)`` starts a one-node local cluster), waits until the work it
creates has either started or is still waiting, runs the real ``ray status`` against that cluster,
and stops the cluster with ``ray.shutdown()``: only what this script started is stopped, and
``ray stop`` is never used. The case is the snippet, then ``$ ray status`` and its output; the
same text goes to the corpus (``tests/corpus/recorded-code/``, whose ``expected.json`` says why).

The fractional-GPU scenario is what ``bot/read/python_code.py`` models: Ray places a fractional GPU
request inside one GPU, so four 0.4-GPU actors on two GPUs leave 0.2 on each and the fifth waits
although the status shows 0.4 GPU free.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TESTS = REPO / "tests"

# (where the recording goes, under tests/: a rule case and the same text as a corpus case; the
# snippet as pasted, whose last line blocks and whose ``workers`` are the actors it waits for)
SCENARIOS = [
    (
        (
            "cases/ray-resources-held/fires/code-five-0.4-gpu-actors-recorded-ray-status.txt",
            "corpus/recorded-code/fractional-gpu-actors-fifth-waits-code-and-ray-status.txt",
        ),
        textwrap.dedent(
            """\
            import ray

            ray.init(num_gpus=2, num_cpus=16)

            @ray.remote(num_gpus=0.4)
            class Worker:
                def ping(self):
                    return "pong"

            workers = [Worker.remote() for _ in range(5)]
            print(ray.get([w.ping.remote() for w in workers]))  # never prints
            """
        ),
    ),
]

# Runs the snippet up to its last line (the blocking ``ray.get``), then records ``ray status``.
DRIVER = """
import os, subprocess, sys, time
import ray
snippet = sys.stdin.read()
lines = snippet.rstrip().splitlines()
exec(compile("\\n".join(lines[:-1]), "<snippet>", "exec"))
refs = [w.ping.remote() for w in workers]
ray.wait(refs, num_returns=len(refs), timeout=20)
time.sleep(8)  # the autoscaler's report, which ray status prints, is refreshed every few seconds
address = ray.get_runtime_context().gcs_address
ray_bin = os.path.join(os.path.dirname(sys.executable), "ray")
args = [ray_bin, "status", f"--address={address}"]
done = subprocess.run(args, capture_output=True, text=True, timeout=120)
sys.stdout.write(done.stdout)
ray.shutdown()
"""


def main() -> int:
    for names, snippet in SCENARIOS:
        done = subprocess.run(
            [sys.executable, "-c", DRIVER],
            input=snippet,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        status = done.stdout
        if done.returncode != 0 or "Autoscaler status" not in status:
            print(f"{names[0]}: no status recorded (exit {done.returncode})\n{done.stderr[-2000:]}")
            return 1
        for name in names:
            path = TESTS / name
            path.write_text(f"```python\n{snippet}```\n\n$ ray status\n{status}", encoding="utf-8")
            print(f"wrote {path.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
