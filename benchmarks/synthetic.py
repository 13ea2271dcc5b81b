"""Synthetic snapshots of a large, busy, shared GPU cluster, for the classifier benchmark.

``build_snapshot(SIZES["full"])`` returns a ``Snapshot`` shaped like one collected live from a
production Kubernetes cluster that also runs several KubeRay clusters:

* node pools as GKE lays them out: general, high-memory, small and local-SSD CPU pools, a cordoned
  legacy pool, A100/H100/L4/T4 GPU pools (``nvidia.com/gpu.product`` and friends, the
  ``nvidia.com/gpu`` taint), three control-plane nodes, a few NotReady nodes and GPU nodes whose
  device plugin is down;
* every node carries its own ``kubernetes.io/hostname`` label, as real nodes do, so no two nodes
  look alike to the fit explainer;
* bound Pods fill the nodes from the DaemonSets up: Ray heads and workers, GPU jobs, then
  Deployments from a catalogue of request shapes until each node reaches a drawn fill level
  (a quarter of the CPU nodes end up nearly full; most GPUs are taken);
* Pending Pods come from a few dozen templates, as real ones come from ReplicaSets, Jobs and Ray
  worker groups: the Pods of one template share requests, selectors and tolerations, and each has
  a FailedScheduling event whose message is replayed from the generated node state;
* the Ray layer lists a Ray node (matched by Pod IP) for every Running Ray Pod of every RayCluster
  (a few workers never joined), ALIVE and DEAD actors, placement groups, jobs, Serve applications
  and ``demands`` entries drawn from a few hundred distinct shapes.

Every object is validated (``load(Model, data)`` on a plain dict, as a snapshot file is
loaded), and each Pod gets its own nested objects. The output is deterministic for a seed.

The parts live in ``benchmarks/synth/``, one concept to a module: ``common`` (units, label keys,
sizes), ``recipe`` (pools, DaemonSets, request shapes, namespaces), ``ray_specs`` and
``pending_specs`` (the KubeRay clusters and the waiting controllers), ``state`` and ``pods`` (what the
builder keeps, and a Pod as the API returns it), then one builder part per layer: ``nodes``,
``workloads``, ``kuberay``, ``pending``, ``events``, ``services`` and ``ray_state``. This module
puts them together in the order that keeps the output the same for a seed.
"""

from __future__ import annotations

from benchmarks.synth.common import FULL_NODES, NOW, SIZES, Size
from benchmarks.synth.kuberay import KubeRay
from benchmarks.synth.nodes import Nodes
from benchmarks.synth.pending import Pending
from benchmarks.synth.ray_state import RayDashboard, demand_shapes
from benchmarks.synth.services import Services
from benchmarks.synth.state import Stats
from benchmarks.synth.workloads import Workloads
from bot.snapshot.kubernetes import KubernetesState
from bot.snapshot.model import Snapshot

__all__ = ["FULL_NODES", "NOW", "SIZES", "Size", "Stats", "build_snapshot", "demand_shapes"]


class _Builder(Nodes, Workloads, KubeRay, Pending, Services, RayDashboard):
    """Every part of the builder over one state: the steps below call them in a fixed order."""


def build_snapshot(size: Size, seed: int = 20250602) -> tuple[Snapshot, Stats]:
    """The synthetic cluster at ``size``; deterministic for a given seed."""
    b = _Builder(size, seed)
    b.make_namespaces()
    b.make_nodes()
    b.allot_pending()
    b.daemonsets()
    b.control_plane()
    b.ray_clusters()
    b.gpu_workloads()
    b.anti_affinity_replicas()
    finished = round(size.pods * 0.02)
    room = size.pods - size.pending - finished - len(b.pods)
    if room < 0:
        raise ValueError(f"{size.name}: {size.pods} Pods leave no room for applications")
    b.applications(room)
    b.finished(finished)
    b.pending_pods()
    b.churn_events()
    quotas, policies = b.services_and_more()
    rayjobs, rayservices = b.ray_objects()
    ray = b.ray_state()
    pods = sorted(b.pods, key=lambda p: (p.namespace, p.name))
    b.stats.counts.update(
        pods=len(pods),
        pods_unscheduled=sum(1 for p in pods if p.unscheduled),
        services=len(b.services),
        endpoint_addresses=sum(len(e.addresses) for e in b.endpoints),
        pvcs=len(b.pvcs),
        log_lines=sum(len(log.lines) for log in b.logs),
    )
    kube = KubernetesState(
        nodes=b.node_models_(),
        pods=pods,
        events=b.events,
        services=b.services,
        endpoints=b.endpoints,
        rayclusters=b.rayclusters,
        rayjobs=rayjobs,
        rayservices=rayservices,
        resource_quotas=quotas,
        pvcs=b.pvcs,
        network_policies=policies,
        device_plugin_pods=b.plugin_pods,
        logs=b.logs,
    )
    snapshot = Snapshot(collected_at=NOW, origin="live", kubernetes=kube, ray=ray)
    return snapshot, b.stats
