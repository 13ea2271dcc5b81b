"""Record the corpus's quiet cases from real tools: what a healthy cluster's outputs look like.

A diagnosis tool earns trust as much by staying quiet on healthy output as by naming a cause on a
broken one. These cases are the outputs people paste "just in case": a ``describe`` of a Running
Pod or of a GPU node that advertises its GPUs, and a Python traceback that has nothing to do with
scheduling. They are made by the real programs, never typed:
``kubectl`` (the installed binary) against the project's loopback Kubernetes API serving the demo
cluster with its faults removed, and the Python interpreter raising an error of its own.

    .venv/bin/python tools/record_quiet_corpus.py            # writes tests/corpus/quiet/

Each run rewrites the same files; ages and timestamps that kubectl prints move with the clock.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bot.demo import kuberay_state as state  # noqa: E402
from tests.integration.test_live_ray import healthy_state, to_bundle  # noqa: E402
from tests.support.kube_api import ObjectStore, serve  # noqa: E402

OUT = ROOT / "tests" / "corpus" / "quiet"
COMMAND = "tools/record_quiet_corpus.py"

# file stem → (kubectl arguments, format tags, what it shows). Only ``describe``: it is printed by
# kubectl itself, while ``kubectl get`` tables are printed by the API server (Table responses), which
# the loopback server does not render; its ``get`` output would not be what a real cluster gives.
KUBECTL: dict[str, tuple[list[str], list[str], str]] = {
    "kubectl-describe-running-head-pod": (
        ["describe", "pod", state.HEAD_POD, "-n", state.NAMESPACE],
        ["kubectl-describe-pod"],
        "kubectl describe pod of a Running, Ready Ray head Pod",
    ),
    "kubectl-describe-running-gpu-worker": (
        ["describe", "pod", state.A100_POD, "-n", state.NAMESPACE],
        ["kubectl-describe-pod"],
        "kubectl describe pod of a Running GPU worker that was scheduled and started",
    ),
    "kubectl-describe-gpu-node-advertising-gpus": (
        ["describe", "node", "gpu-a100-1"],
        ["kubectl-describe-node"],
        "kubectl describe node of a GPU node that advertises its nvidia.com/gpu",
    ),
}

# An unrelated failure: the interpreter's own traceback of a user's data-loading bug.
TRACEBACK_SCRIPT = """
import json

def load_config(text):
    return json.loads(text)["model"]["layers"]

load_config('{"model": {"name": "resnet50"}}')
"""


def _kubectl(kubeconfig: Path, home: Path, args: list[str]) -> str:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        raise SystemExit("kubectl is not installed")
    result = subprocess.run(
        [kubectl, "--kubeconfig", str(kubeconfig), "--cache-dir", str(home / "cache"), *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "HOME": str(home), "KUBECONFIG": str(kubeconfig)},
        check=False,
    )
    if result.returncode != 0:
        raise SystemExit(f"kubectl {' '.join(args)} failed: {result.stderr.strip()}")
    return result.stdout


def _traceback() -> str:
    result = subprocess.run(
        [sys.executable, "-c", TRACEBACK_SCRIPT], capture_output=True, text=True, timeout=60, check=False
    )
    return result.stderr


def _entry(stem: str, formats: list[str], what: str, source: str) -> dict[str, Any]:
    return {
        "file": f"{stem}.txt",
        "kind": "quiet",
        "causes": [],
        "also_ok": [],
        "layer": "healthy",
        "source": source,
        "title": what,
        "formats": formats,
        "format": what,
        "ray_version": "n/a",
        "what_happened": "Nothing is wrong: this is a healthy or irrelevant paste and must raise no warning.",
    }


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    entries: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="raydiag-quiet-") as tmp:
        home = Path(tmp)
        with serve(ObjectStore.from_bundle(to_bundle(healthy_state()))) as api:
            kubeconfig = api.kubeconfig(home / "kubeconfig")
            for stem, (args, formats, what) in KUBECTL.items():
                (OUT / f"{stem}.txt").write_text(_kubectl(kubeconfig, home, args), encoding="utf-8")
                source = f"{COMMAND}: kubectl {' '.join(args)} (loopback API, healthy demo cluster)"
                entries.append(_entry(stem, formats, what, source))
    (OUT / "python-traceback-unrelated-keyerror.txt").write_text(_traceback(), encoding="utf-8")
    entries.append(
        _entry(
            "python-traceback-unrelated-keyerror",
            ["traceback"],
            "a Python traceback of a user's config bug (KeyError), unrelated to scheduling",
            f"{COMMAND}: python -c <a script that indexes a missing key>",
        )
    )
    (OUT / "expected.json").write_text(json.dumps(entries, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {len(entries)} quiet cases into {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
