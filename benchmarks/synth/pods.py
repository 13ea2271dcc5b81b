"""Pods as the API returns them: Pending, Running, failing or finished."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from benchmarks.synth.common import DEFAULT_TOLERATIONS
from benchmarks.synth.containers import effective_requests
from benchmarks.synth.state import BuilderState, PlannedNode
from bot.snapshot.kubernetes import Pod


class PodFactory(BuilderState):
    """Makes every Pod, charging a bound one's requests to its node."""

    def pod(
        self,
        *,
        name: str,
        namespace: str,
        labels: Mapping[str, str],
        owner: tuple[str, str] | None,
        containers: list[dict[str, Any]],
        init: Sequence[dict[str, Any]] = (),
        node: PlannedNode | None = None,
        tolerations: Sequence[Mapping[str, Any]] = DEFAULT_TOLERATIONS,
        selector: Mapping[str, str] | None = None,
        terms: Sequence[Any] = (),
        affinity: Sequence[Mapping[str, Any]] = (),
        pvcs: Sequence[str] = (),
        phase: str | None = None,
        failure: str = "",
        deleting: bool = False,
        spread: bool = False,
        gates: Sequence[str] = (),
        scheduler_message: str = "",
        created: datetime | None = None,
        charge: bool = True,
    ) -> Pod:
        """A Pod as the API returns it: bound and Running (or failing) with a node, else Pending."""
        requests = effective_requests(containers, init)
        created = created or self.ago(300, 60 * 86400)
        ip = None
        if node is not None and charge:
            ip = node.take(requests)
        conditions: list[dict[str, Any]]
        statuses: list[dict[str, Any]] = []
        status_reason = None
        if node is None:
            phase = "Pending"
            conditions = [
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "SchedulingGated" if gates else "Unschedulable",
                    "message": "Scheduling is blocked due to non-empty scheduling gates"
                    if gates
                    else scheduler_message,
                    "last_transition": created,
                }
            ]
        elif phase in ("Succeeded", "Failed"):
            conditions = [
                {"type": kind, "status": "False", "reason": "PodCompleted", "last_transition": created}
                for kind in ("Ready", "ContainersReady")
            ]
            conditions.append({"type": "PodScheduled", "status": "True", "last_transition": created})
            evicted = phase == "Failed"
            status_reason = "Evicted" if evicted else None
            statuses = [
                {
                    "name": c["name"],
                    "state": "terminated",
                    "reason": "Error" if evicted else "Completed",
                    "exit_code": 137 if evicted else 0,
                    "image": c["image"],
                }
                for c in containers
            ]
        else:
            ready = not failure
            phase = "Pending" if failure in ("image-pull", "config") else "Running"
            started = created + timedelta(seconds=self.rng.randint(2, 90))
            conditions = [
                {"type": kind, "status": "True", "last_transition": started}
                for kind in ("PodReadyToStartContainers", "Initialized")
            ]
            conditions += [
                {
                    "type": kind,
                    "status": "True" if ready else "False",
                    "reason": None if ready else "ContainersNotReady",
                    "last_transition": started,
                }
                for kind in ("Ready", "ContainersReady")
            ]
            conditions.append({"type": "PodScheduled", "status": "True", "last_transition": created})
            statuses = [
                {
                    "name": c["name"],
                    "init": True,
                    "state": "terminated",
                    "reason": "Completed",
                    "exit_code": 0,
                }
                for c in init
            ]
            for position, c in enumerate(containers):
                status: dict[str, Any] = {
                    "name": c["name"],
                    "ready": ready,
                    "restart_count": self.choose(((0, 0.9), (1, 0.07), (2, 0.03))),
                    "state": "running",
                    "image": c["image"],
                }
                if failure and position == 0:
                    status.update(self.failure_status(failure, c["image"]))
                statuses.append(status)
        return Pod.model_validate(
            {
                "name": name,
                "namespace": namespace,
                "uid": self.uid(),
                "phase": phase,
                "node_name": node.name if node else None,
                "pod_ip": ip,
                "host_ip": node.ip if node and ip else None,
                "labels": labels,
                "owner": {"kind": owner[0], "name": owner[1]} if owner else None,
                "created": created,
                "deleting": deleting,
                "scheduler_name": "default-scheduler",
                "scheduling_gates": list(gates),
                "containers": containers,
                "init_containers": list(init),
                "requests": requests,
                "node_selector": dict(selector or {}),
                "required_node_terms": [
                    {
                        "match_expressions": [
                            {"key": k, "operator": op, "values": list(v)} for k, op, v in terms
                        ]
                    }
                ]
                if terms
                else [],
                "tolerations": list(tolerations),
                "pvc_names": list(pvcs),
                "pod_affinity_terms": list(affinity),
                "has_topology_spread": spread,
                "conditions": conditions,
                "container_statuses": statuses,
                "status_reason": status_reason,
            }
        )

    def failure_status(self, failure: str, image: str) -> dict[str, Any]:
        if failure == "crash-loop":
            return {
                "state": "waiting",
                "reason": "CrashLoopBackOff",
                "message": f"back-off 5m0s restarting failed container=app pod=({image})",
                "restart_count": self.rng.randint(5, 400),
                "last_terminated_reason": self.choose((("Error", 0.7), ("OOMKilled", 0.3))),
                "exit_code": None,
            }
        if failure == "image-pull":
            return {
                "state": "waiting",
                "reason": "ImagePullBackOff",
                "message": f'Back-off pulling image "{image}"',
                "restart_count": 0,
            }
        return {
            "state": "waiting",
            "reason": "CreateContainerConfigError",
            "message": 'configmap "app-config" not found',
            "restart_count": 0,
        }
