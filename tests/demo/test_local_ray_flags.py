"""LocalCluster passes another Ray release's ``ray start`` only the flags that release knows."""

from __future__ import annotations

import shutil
from pathlib import Path

from bot.demo.local_ray import DEMO_NODES, RAY, LocalCluster, start_flags

# An older `ray start --help`, cut down: no --labels, --runtime-env-agent-port,
# --dashboard-agent-grpc-port.
OLD_HELP = """\
Usage: ray start [OPTIONS]
  --node-ip-address TEXT  the IP address of this node
  --address TEXT          the address to use for Ray
  --port INTEGER          the port of the head ray process.
  --object-manager-port INTEGER
  --node-manager-port INTEGER
  --min-worker-port INTEGER
  --max-worker-port INTEGER
  --ray-client-server-port INTEGER
  --object-store-memory INTEGER
  --num-cpus INTEGER
  --num-gpus INTEGER
  --resources TEXT        a JSON serialized dictionary mapping resource name to quantity
  --head                  provide this argument for the head node
  --include-dashboard BOOLEAN
  --dashboard-host TEXT
  --dashboard-port INTEGER
  --dashboard-agent-listen-port INTEGER
  --metrics-export-port INTEGER
  --block                 provide this argument to block forever in this command
  --temp-dir TEXT
  --disable-usage-stats
"""


def fake_ray(tmp_path: Path) -> Path:
    script = tmp_path / "bin" / "ray"
    script.parent.mkdir()
    (tmp_path / "help.txt").write_text(OLD_HELP)
    script.write_text(f"#!/bin/sh\ncat {tmp_path / 'help.txt'}\n")
    script.chmod(0o755)
    return script


def node_args(cluster: LocalCluster) -> tuple[list[str], list[str]]:
    try:
        return cluster._node_args(cluster.nodes[0], head=True), cluster._node_args(
            cluster.nodes[1], head=False
        )
    finally:
        shutil.rmtree(cluster.temp_dir, ignore_errors=True)


def flag_names(args: list[str]) -> set[str]:
    return {arg.split("=", 1)[0] for arg in args if arg.startswith("--")}


def test_an_older_ray_gets_only_the_flags_its_help_lists(tmp_path: Path) -> None:
    ray = fake_ray(tmp_path)
    head, worker = node_args(LocalCluster(DEMO_NODES, ray=ray))

    assert head[0] == str(ray)
    known = start_flags(str(ray))
    assert known is not None
    assert flag_names(head) | flag_names(worker) <= known
    for missing in ("--labels", "--runtime-env-agent-port", "--dashboard-agent-grpc-port"):
        assert missing not in flag_names(head) | flag_names(worker)
    assert {"--head", "--dashboard-port", "--resources"} <= flag_names(head) | flag_names(worker)
    assert f"--address={DEMO_NODES[0].ip}:" in " ".join(worker)


def test_the_projects_own_ray_still_gets_every_flag() -> None:
    head, worker = node_args(LocalCluster(DEMO_NODES))

    assert head[0] == (str(RAY) if RAY.exists() else "ray")
    assert {"--labels", "--runtime-env-agent-port", "--dashboard-agent-grpc-port"} <= flag_names(head)
    assert "--labels=node-group=gpu-a100,gpu-model=A100" in worker
