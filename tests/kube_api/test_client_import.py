"""The Kubernetes client loads without its package's ``__init__``, and still works in full.

Loopback API server: no fault; any API server would do (the test counts the client modules a read
loads), and this one starts in milliseconds.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support import scenarios
from tests.support.kube_api import ObjectStore, serve

REPO = Path(__file__).resolve().parents[2]

# In a fresh process: read one cluster, then say which parts of the client were loaded, and that
# a part raydiag does not use still imports afterwards (as another library in the process might).
SCRIPT = r"""
import json, sys
from bot.collect.live import Target, collect_live
snapshot = collect_live(Target(cluster="raycluster-gpu", namespace="ml", kubeconfig=sys.argv[1], context="loopback",
                               dashboard_url="http://127.0.0.1:9"))
loaded = sorted({name.split(".")[1] for name in sys.modules if name.startswith("kubernetes.")})
import kubernetes
from kubernetes import dynamic, watch
from kubernetes.dynamic.discovery import Discoverer
print(json.dumps({
    "pods": len(snapshot.kubernetes.pods) if snapshot.kubernetes else 0,
    "errors": [e.source for e in snapshot.errors],
    "loaded": loaded,
    "version": kubernetes.__version__,
    "later": [dynamic.__name__, watch.__name__, Discoverer.__name__],
}))
"""


def test_reading_a_cluster_loads_only_the_client_and_its_config(tmp_path: Path) -> None:
    with serve(ObjectStore.from_bundle(scenarios.third_gpu_worker_no_free_gpu())) as api:
        kubeconfig = api.kubeconfig(tmp_path / "kubeconfig")
        done = subprocess.run(
            [sys.executable, "-c", SCRIPT, str(kubeconfig)],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
        )
    result = json.loads(done.stdout.strip().splitlines()[-1])

    assert result["pods"] > 0
    assert [e for e in result["errors"] if e.startswith("kubernetes")] == []
    assert {"client", "config"} <= set(result["loaded"])
    assert not {"dynamic", "watch", "stream", "informer", "leaderelection"} & set(result["loaded"])
    from importlib.metadata import version

    assert result["version"] == version("kubernetes")
    assert result["later"] == ["kubernetes.dynamic", "kubernetes.watch", "Discoverer"]
