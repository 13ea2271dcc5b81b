"""Kubernetes events: the scheduler's and autoscaler's verdicts and the churn of a busy hour."""

from __future__ import annotations

from datetime import datetime, timedelta

from benchmarks.synth.state import BuilderState
from bot.snapshot.kubernetes import Event, Pod


class Events(BuilderState):
    """Records Kubernetes events as the API lists them."""

    def event(
        self,
        namespace: str | None,
        kind: str,
        name: str,
        reason: str,
        message: str,
        *,
        warning: bool = False,
        source: str = "kubelet",
        count: int = 1,
        seen: datetime | None = None,
    ) -> None:
        last = seen or self.ago(0, 3600)
        self.events.append(
            Event.model_validate(
                {
                    "namespace": namespace,
                    "object_kind": kind,
                    "object_name": name,
                    "type": "Warning" if warning else "Normal",
                    "reason": reason,
                    "message": message,
                    "count": count,
                    "source": source,
                    "first_seen": last - timedelta(seconds=self.rng.randint(0, 3600) * (count > 1)),
                    "last_seen": last,
                }
            )
        )
        self.stats.add("events")

    def failed_scheduling(self, pod: Pod, message: str) -> None:
        self.event(
            pod.namespace,
            "Pod",
            pod.name,
            "FailedScheduling",
            message,
            warning=True,
            source="default-scheduler",
            count=self.rng.randint(1, 40),
            seen=self.ago(0, 300),
        )

    def scale_up_event(self, pod: Pod, message: str) -> None:
        self.event(
            pod.namespace,
            "Pod",
            pod.name,
            "NotTriggerScaleUp",
            message,
            source="cluster-autoscaler",
            count=self.rng.randint(1, 30),
        )

    def churn_events(self) -> None:
        """The last hour of a busy cluster: Pods started, probes failing, containers restarting."""
        running = [p for p in self.pods if p.phase == "Running" and p.owner and p.owner.kind == "ReplicaSet"]
        for pod in self.rng.sample(running, int(len(running) * 0.012)):
            container = pod.containers[0]
            image = container.image or ""
            self.event(
                pod.namespace,
                "Pod",
                pod.name,
                "Scheduled",
                f"Successfully assigned {pod.namespace}/{pod.name} to {pod.node_name}",
                source="default-scheduler",
            )
            self.event(pod.namespace, "Pod", pod.name, "Pulling", f'Pulling image "{image}"')
            seconds = self.rng.uniform(0.5, 40)
            self.event(
                pod.namespace,
                "Pod",
                pod.name,
                "Pulled",
                f'Successfully pulled image "{image}" in {seconds:.3f}s ({seconds:.3f}s including waiting)',
            )
            self.event(pod.namespace, "Pod", pod.name, "Created", f"Created container {container.name}")
            self.event(pod.namespace, "Pod", pod.name, "Started", f"Started container {container.name}")
        for pod in self.rng.sample(running, int(len(running) * 0.002)):
            self.event(
                pod.namespace,
                "Pod",
                pod.name,
                "Unhealthy",
                "Readiness probe failed: HTTP probe failed with statuscode: 503",
                warning=True,
                count=self.rng.randint(1, 200),
            )
        for pod, failure in self.failing:
            container = pod.containers[0]
            if failure == "crash-loop":
                self.event(
                    pod.namespace,
                    "Pod",
                    pod.name,
                    "BackOff",
                    f"Back-off restarting failed container {container.name} in pod {pod.name}_{pod.namespace}"
                    f"({pod.uid})",
                    warning=True,
                    count=self.rng.randint(10, 2000),
                )
            elif failure == "image-pull":
                self.event(
                    pod.namespace,
                    "Pod",
                    pod.name,
                    "Failed",
                    f'Failed to pull image "{container.image}": rpc error: code = NotFound desc = failed to '
                    f'pull and unpack image "{container.image}": not found',
                    warning=True,
                    count=self.rng.randint(3, 60),
                )
            else:
                self.event(
                    pod.namespace,
                    "Pod",
                    pod.name,
                    "Failed",
                    'Error: configmap "app-config" not found',
                    warning=True,
                )
        for node in self.nodes:
            if not node.ready:
                self.event(
                    None,
                    "Node",
                    node.name,
                    "NodeNotReady",
                    f"Node {node.name} status is now: NodeNotReady",
                    source="node-controller",
                )
        for cluster in self.rayclusters:
            for group in cluster.worker_groups[:2]:
                self.event(
                    cluster.namespace,
                    "RayCluster",
                    cluster.name,
                    "CreatedWorkerPod",
                    f"Created worker Pod {cluster.namespace}/{cluster.name}-{group.name}-worker-{self.suffix()}",
                    source="raycluster-controller",
                )
        for namespace, gpus in (("ml-research", 4), ("ml-training", 8)):
            self.event(
                namespace,
                "ReplicaSet",
                f"quota-bound-{self.template_hash()}",
                "FailedCreate",
                f'Error creating: pods "quota-bound-{self.suffix()}" is forbidden: exceeded quota: gpu-quota, '
                f"requested: requests.nvidia.com/gpu={gpus}, used: requests.nvidia.com/gpu=32, "
                "limited: requests.nvidia.com/gpu=32",
                warning=True,
                source="replicaset-controller",
                count=self.rng.randint(5, 50),
            )
