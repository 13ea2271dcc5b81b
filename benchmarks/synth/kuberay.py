"""KubeRay's objects: RayCluster head and worker Pods, their Services, RayJobs and RayServices."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from benchmarks.synth.common import (
    DEFAULT_TOLERATIONS,
    GPU,
    GPU_TOLERATION,
    NODEPOOL,
    NOW,
    RAY_GPU_IMAGE,
    RAY_IMAGE,
    RAY_VERSION,
    GiB,
)
from benchmarks.synth.containers import container_spec, effective_requests, resource_requests
from benchmarks.synth.pods import PodFactory
from benchmarks.synth.ray_specs import RAY_CLUSTERS, RayClusterSpec, RayGroupSpec
from benchmarks.synth.recipe import POOL, Pool
from benchmarks.synth.state import cluster_ip
from bot.snapshot.kubernetes import (
    Endpoints,
    Pod,
    PodLog,
    RayClusterObject,
    RayJobObject,
    RayServiceObject,
    Service,
)
from bot.snapshot.ray import RayNode
from tests.support.cluster import ray_labels

HEAD_POOL = "cpu-highmem"  # every head Pod runs there
# The head Service's ports, by name.
HEAD_PORTS = (
    ("gcs-server", 6379),
    ("dashboard", 8265),
    ("client", 10001),
    ("metrics", 8080),
    ("serve", 8000),
)


class KubeRay(PodFactory):
    """Each RayCluster's head and Running workers, with the Ray node each one registers."""

    def ray_clusters(self) -> None:
        self.stats.ray_clusters = len(RAY_CLUSTERS)
        for spec in RAY_CLUSTERS:
            self.ray_cluster(spec)

    def ray_container(
        self, spec: RayClusterSpec, group: RayGroupSpec | None, image: str
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        env = [
            "RAY_CLUSTER_NAME",
            "RAY_CLOUD_INSTANCE_ID",
            "RAY_NODE_TYPE_NAME",
            "KUBERAY_GEN_RAY_START_CMD",
            "RAY_PORT",
            "RAY_ADDRESS",
            "RAY_USAGE_STATS_KUBERAY_IN_USE",
            "RAY_USAGE_STATS_EXTRA_TAGS",
            "REDIS_PASSWORD",
            "RAY_DASHBOARD_ENABLE_K8S_DISK_USAGE",
            "FQ_RAY_IP",
            "RAY_IP",
        ]
        if group is None:
            requests = resource_requests(8, 32)
            start = (
                "ray start --head --dashboard-host=0.0.0.0 --num-cpus=0 --metrics-export-port=8080 --block"
            )
            return (
                container_spec(
                    "ray-head",
                    image,
                    requests,
                    dict(requests),
                    env=env,
                    command=["/bin/bash", "-lc", "--", start],
                ),
                [],
            )
        requests = resource_requests(group.cpu, group.memory_gib)
        if group.gpus:
            requests[group.gpu_resource] = float(group.gpus)
        address = f"{spec.name}-head-svc.{spec.namespace}.svc.cluster.local:6379"
        start = f"ray start --address={address} --metrics-export-port=8080 --block"
        init = container_spec(
            "wait-gcs-ready",
            image,
            resource_requests(0.2, 0.25),
            resource_requests(0.2, 0.25),
            env=["FQ_RAY_IP", "RAY_IP"],
            command=[
                "/bin/bash",
                "-lc",
                "--",
                f"until ray health-check --address {address}; do sleep 5; done",
            ],
        )
        return (
            container_spec(
                "ray-worker",
                image,
                requests,
                dict(requests),
                env=env,
                command=["/bin/bash", "-lc", "--", start],
            ),
            [init],
        )

    def ray_resources(self, group: RayGroupSpec | None, pool: Pool, ip: str) -> dict[str, float]:
        if group is None:
            memory = 32 * GiB
            return {
                "memory": memory,
                "object_store_memory": round(memory * 0.3),
                f"node:{ip}": 1.0,
                "node:__internal_head__": 1.0,
            }
        params = dict(group.start_params)
        memory = group.memory_gib * GiB
        found = {"CPU": float(group.cpu), "memory": memory, "object_store_memory": round(memory * 0.3)}
        gpus = float(params.get("num-gpus", group.gpus if group.gpu_resource == GPU else 0))
        if gpus:
            found["GPU"] = gpus
            found[f"accelerator_type:{pool.ray_type}"] = 1.0
        if "resources" in params:
            found["accelerator_type:A100"] = 1.0
        found[f"node:{ip}"] = 1.0
        return found

    def ray_cluster(self, spec: RayClusterSpec) -> None:
        head_image = RAY_IMAGE
        workers: list[dict[str, Any]] = []
        head_container, _ = self.ray_container(spec, None, head_image)
        head_node = self.place(HEAD_POOL, effective_requests([head_container], []))
        assert head_node is not None
        head = self.pod(
            name=f"{spec.name}-head-{self.suffix()}",
            namespace=spec.namespace,
            labels=ray_labels("head", "headgroup", cluster=spec.name),
            owner=("RayCluster", spec.name),
            containers=[head_container],
            node=head_node,
            selector={NODEPOOL: HEAD_POOL},
        )
        self.add(head, "pods_ray")
        self.add_ray_node(head, None, POOL[HEAD_POOL], spec.name)
        ready = 0
        for group in spec.groups:
            pool = POOL[group.pool]
            image = spec.worker_image or (RAY_GPU_IMAGE if group.gpus else RAY_IMAGE)
            container, init = self.ray_container(spec, group, image)
            running = self.scaled(group.replicas) if group.replicas else 0
            tolerations = (
                [*DEFAULT_TOLERATIONS, GPU_TOLERATION] if group.gpus and group.tolerate_gpu else None
            )
            for _ in range(running):
                requests = effective_requests([container], init)
                node = self.place(group.pool, requests)
                if node is None:
                    raise RuntimeError(f"no room for a {spec.name}/{group.name} worker in {group.pool}")
                pod = self.pod(
                    name=f"{spec.name}-{group.name}-worker-{self.suffix()}",
                    namespace=spec.namespace,
                    labels=ray_labels("worker", group.name, cluster=spec.name),
                    owner=("RayCluster", spec.name),
                    containers=[dict(container)],
                    init=[dict(c) for c in init],
                    node=node,
                    tolerations=tolerations or DEFAULT_TOLERATIONS,
                    selector=dict(group.selector),
                )
                self.add(pod, "pods_ray")
                ready += 1
                if (
                    group.name == "cpu-workers"
                    and spec.name == "data-prep"
                    and len(self.not_joined) < self.scaled(3)
                ):
                    self.not_joined.append(pod)  # Running, never registered with the GCS
                    continue
                self.add_ray_node(pod, group, pool, spec.name)
            pending = self.pending_counts.get((spec.name, group.name), 0)
            desired = running + pending
            workers.append(
                {
                    "name": group.name,
                    "replicas": desired,
                    "min_replicas": 0,
                    "max_replicas": desired if group.at_max else desired + self.scaled(8),
                    "ray_start_params": dict(group.start_params),
                    "node_selector": dict(group.selector),
                    "tolerations": tolerations or [],
                    "containers": [container],
                }
            )
            if pending:
                self.ray_pending.append(
                    (spec, group, container, init, tolerations or list(DEFAULT_TOLERATIONS))
                )
        self.rayclusters.append(
            RayClusterObject.model_validate(
                {
                    "name": spec.name,
                    "namespace": spec.namespace,
                    "ray_version": RAY_VERSION,
                    "autoscaling": True,
                    "head": {
                        "name": "headgroup",
                        "is_head": True,
                        "replicas": 1,
                        "ray_start_params": {"dashboard-host": "0.0.0.0", "num-cpus": "0"},
                        "node_selector": {NODEPOOL: HEAD_POOL},
                        "containers": [head_container],
                    },
                    "worker_groups": workers,
                    "state": "ready",
                    "conditions": [
                        {"type": "HeadPodReady", "status": "True", "reason": "HeadPodRunningAndReady"},
                        {
                            "type": "RayClusterProvisioned",
                            "status": "True",
                            "reason": "AllPodRunningAndReadyFirstTime",
                        },
                    ],
                    "ready_workers": ready,
                    "desired_workers": sum(w["replicas"] for w in workers),
                    "owner": {"kind": spec.owner, "name": spec.name} if spec.owner else None,
                }
            )
        )
        service = f"{spec.name}-head-svc"
        self.services.append(
            Service.model_validate(
                {
                    "name": service,
                    "namespace": spec.namespace,
                    "cluster_ip": cluster_ip(len(self.services)),
                    "selector": {"ray.io/cluster": spec.name, "ray.io/node-type": "head"},
                    "ports": [
                        {"name": name, "port": port, "target_port": str(port)} for name, port in HEAD_PORTS
                    ],
                }
            )
        )
        self.endpoints.append(
            Endpoints.model_validate(
                {
                    "name": service,
                    "namespace": spec.namespace,
                    "addresses": [{"ip": head.pod_ip, "pod": head.name, "ready": True}],
                    "ports": [port for _, port in HEAD_PORTS],
                }
            )
        )
        self.logs.append(self.head_log(head))

    def add_ray_node(self, pod: Pod, group: RayGroupSpec | None, pool: Pool, cluster: str) -> None:
        assert pod.pod_ip is not None
        node_id = self.hex(224)
        total = self.ray_resources(group, pool, pod.pod_ip)
        name = group.name if group else "headgroup"
        self.ray_groups[f"{cluster}/{name}"] = self.ray_groups.get(f"{cluster}/{name}", 0) + 1
        self.ray_nodes.append(
            RayNode.model_validate(
                {
                    "node_id": node_id,
                    "node_ip": pod.pod_ip,
                    "state": "ALIVE",
                    "is_head": group is None,
                    "node_type": name,
                    "resources_total": total,
                    "resources_available": dict(total),  # actors take their share later
                    "labels": {"ray.io/node_id": node_id},
                }
            )
        )

    def head_log(self, head: Pod) -> PodLog:
        lines = []
        for i in range(150):
            stamp = (NOW - timedelta(seconds=150 - i)).strftime("%Y-%m-%d %H:%M:%S")
            lines.append(
                self.choose(
                    (
                        (
                            f"{stamp},{i:03d}\tINFO autoscaler.py:{400 + i % 50} -- Resized to {i % 97} CPUs",
                            3,
                        ),
                        (
                            f"{stamp},{i:03d}\tINFO gcs_server.cc:{200 + i} -- Node registered: {self.hex(64)}",
                            1,
                        ),
                        (f"{stamp},{i:03d}\tINFO monitor.py:{100 + i % 30} -- Monitor: Started", 1),
                        (
                            f"{stamp},{i:03d}\tINFO http_server_head.py:{50 + i} -- Dashboard head http server",
                            1,
                        ),
                    )
                )
            )
        return PodLog(pod=head.name, namespace=head.namespace, container="ray-head", lines=lines)

    def ray_objects(self) -> tuple[list[RayJobObject], list[RayServiceObject]]:
        jobs = []
        for i in range(self.scaled(60, 8)):
            spec = self.rng.choice(RAY_CLUSTERS)
            status = self.choose((("RUNNING", 0.5), ("SUCCEEDED", 0.4), ("FAILED", 0.05), ("PENDING", 0.05)))
            jobs.append(
                RayJobObject.model_validate(
                    {
                        "name": f"{spec.name}-job-{i}",
                        "namespace": spec.namespace,
                        "job_status": status,
                        "deployment_status": "Complete" if status in ("SUCCEEDED", "FAILED") else "Running",
                        "message": "Job entrypoint command failed with exit code 1"
                        if status == "FAILED"
                        else None,
                        "cluster_name": spec.name,
                        "submission_id": self.submission_id(),
                    }
                )
            )
        services = [
            RayServiceObject.model_validate(
                {
                    "name": "serve-prod",
                    "namespace": "ray-serve",
                    "service_status": "Running",
                    "cluster_name": "serve-prod",
                    "app_statuses": {
                        "text-gen": "RUNNING",
                        "ranker": "RUNNING",
                        "moderation": "DEPLOY_FAILED",
                    },
                    "app_messages": {"moderation": "Deploying app 'moderation' failed: ModuleNotFoundError"},
                }
            )
        ]
        return jobs, services
