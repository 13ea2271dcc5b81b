"""LocalCluster grows node by node through ``start_node`` (the stand-in kubelet's use): what it
refuses before any ``ray start`` runs. Starting real raylets this way is exercised by
tests/integration/test_standin_kubelet.py and test_compound_real_stack.py."""

from __future__ import annotations

import shutil

import pytest

from bot.demo.local_ray import LocalCluster, NodeSpec

HEAD = NodeSpec("127.0.0.2", num_cpus=1)


def test_a_cluster_cannot_be_made_for_fewer_nodes_than_it_is_given() -> None:
    with pytest.raises(ValueError, match="max_nodes=1 is fewer than the 2 nodes given"):
        LocalCluster([HEAD, NodeSpec("127.0.0.3", num_cpus=1)], max_nodes=1)


def test_the_head_dials_no_other_gcs() -> None:
    cluster = LocalCluster([HEAD], max_nodes=1, say=lambda _: None)
    try:
        assert len(cluster._worker_ports) == 100  # one node's range reserved
        with pytest.raises(ValueError, match="gcs_address is for workers"):
            cluster.start_node(HEAD, gcs_address="127.0.0.2:1")
        assert cluster.procs == []
    finally:
        shutil.rmtree(cluster.temp_dir, ignore_errors=True)


def test_room_is_reserved_for_the_nodes_it_may_grow_to() -> None:
    cluster = LocalCluster([HEAD], max_nodes=8, say=lambda _: None)
    try:
        assert len(cluster._worker_ports) == 8 * 100
        assert cluster.node_log("127.0.0.9") == cluster.temp_dir / "ray-start-127.0.0.9.log"
    finally:
        shutil.rmtree(cluster.temp_dir, ignore_errors=True)
