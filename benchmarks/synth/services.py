"""The rest of the Kubernetes layer: Services, Endpoints, PVCs, quotas, NetworkPolicies, worker logs."""

from __future__ import annotations

from benchmarks.synth.common import GiB
from benchmarks.synth.ray_specs import RAY_CLUSTERS
from benchmarks.synth.recipe import ML_NAMESPACES, WORDS
from benchmarks.synth.state import BuilderState, cluster_ip
from bot.snapshot.kubernetes import Endpoints, NetworkPolicy, PodLog, ResourceQuota, Service


class Services(BuilderState):
    """Services, claims, quotas, policies and logs, made after every Pod exists."""

    def services_and_more(self) -> tuple[list[ResourceQuota], list[NetworkPolicy]]:
        for deployment in self.app_deployments:
            if not deployment.service:
                continue
            index = len(self.services)
            self.services.append(
                Service.model_validate(
                    {
                        "name": deployment.name,
                        "namespace": deployment.namespace,
                        "cluster_ip": cluster_ip(index),
                        "selector": {"app": deployment.name},
                        "ports": [{"name": "http", "port": 80, "target_port": "8080"}],
                    }
                )
            )
            self.endpoints.append(
                Endpoints.model_validate(
                    {
                        "name": deployment.name,
                        "namespace": deployment.namespace,
                        "addresses": [
                            {"ip": ip, "pod": pod, "ready": True} for ip, pod in deployment.addresses
                        ],
                        "ports": [8080],
                    }
                )
            )
        for _ in range(self.scaled(3000)):
            namespace = self.rng.choice(self.app_namespaces)
            self.add_pvc(
                f"data-{namespace.split('-')[0]}-{self.rng.choice(WORDS)}-{self.suffix(4)}",
                namespace,
                self.rng.choice(("standard-rwo", "premium-rwo", "filestore")),
            )
        quotas = []
        for namespace in self.app_namespaces + list(ML_NAMESPACES):
            hard = {"requests.cpu": 400.0, "requests.memory": 1600 * GiB, "requests.nvidia.com/gpu": 32.0}
            used = {k: round(v * self.rng.uniform(0.1, 0.95), 2) for k, v in hard.items()}
            quotas.append(
                ResourceQuota.model_validate(
                    {"name": "compute-quota", "namespace": namespace, "hard": hard, "used": used}
                )
            )
        policies = []
        for namespace in self.app_namespaces:
            policies.append(
                NetworkPolicy.model_validate(
                    {
                        "name": "default-deny-ingress",
                        "namespace": namespace,
                        "selects_all": True,
                        "policy_types": ["Ingress"],
                    }
                )
            )
            policies.append(
                NetworkPolicy.model_validate(
                    {
                        "name": "allow-same-namespace",
                        "namespace": namespace,
                        "selects_all": True,
                        "policy_types": ["Ingress"],
                        "ingress_rules": 1,
                    }
                )
            )
        for spec in RAY_CLUSTERS:
            policies.append(
                NetworkPolicy.model_validate(
                    {
                        "name": "allow-ray",
                        "namespace": spec.namespace,
                        "pod_selector": {"ray.io/is-ray-node": "yes"},
                        "policy_types": ["Ingress"],
                        "ingress_rules": 3,
                    }
                )
            )
        # One team copied the default-deny policy into its Ray namespace.
        policies.append(
            NetworkPolicy.model_validate(
                {
                    "name": "default-deny-ingress",
                    "namespace": "ray-rl",
                    "selects_all": True,
                    "policy_types": ["Ingress"],
                }
            )
        )
        for pod in self.not_joined:
            self.logs.append(
                PodLog(
                    pod=pod.name,
                    namespace=pod.namespace,
                    container="ray-worker",
                    lines=[
                        f"[2025-06-02 09:{10 + i:02d}:00,000 W 1 1] gcs_client.cc:{100 + i}: Failed to connect to GCS "
                        f"at address data-prep-head-svc.ray-data.svc.cluster.local:6379 within 5 seconds."
                        for i in range(20)
                    ],
                )
            )
        return quotas, policies
