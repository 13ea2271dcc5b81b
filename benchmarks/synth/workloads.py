"""The bound Pods: DaemonSets, the control plane, GPU jobs, Deployments and finished Jobs."""

from __future__ import annotations

import bisect

from benchmarks.synth.common import (
    ACCELERATOR,
    DEFAULT_TOLERATIONS,
    GPU,
    GPU_TOLERATION,
    ISTIO_IMAGE,
    PRODUCT,
    WEB_SELECTOR,
    WEB_TOLERATION,
    GiB,
    MiB,
)
from benchmarks.synth.containers import container_spec, effective_requests, resource_requests
from benchmarks.synth.pods import PodFactory
from benchmarks.synth.recipe import DAEMONSETS, ML_NAMESPACES, POOLS, SHAPES, TEAMS, WEB_NAMESPACES, WORDS
from benchmarks.synth.state import AppDeployment, PlannedNode
from bot.snapshot.kubernetes import Pod


class Workloads(PodFactory):
    """Fills the nodes: DaemonSets and control plane first, then GPU jobs, Deployments, finished Jobs."""

    def daemonsets(self) -> None:
        for namespace, name, gpu_only, specs in DAEMONSETS:
            revision = self.template_hash()
            containers = [
                container_spec(
                    c,
                    image,
                    resource_requests(cpu, memory / 1024),
                    {"memory": memory * MiB * 2} if memory else {},
                )
                for c, image, cpu, memory in specs
            ]
            tolerations = (
                [GPU_TOLERATION, {"key": "CriticalAddonsOnly", "operator": "Exists"}]
                if gpu_only
                else [{"operator": "Exists"}]
            )
            for node in self.nodes:
                is_gpu = node.pool is not None and node.pool.gpus > 0
                if gpu_only and not is_gpu:
                    continue
                broken = gpu_only and GPU not in node.allocatable and name.startswith("nvidia-device-plugin")
                pod = self.pod(
                    name=f"{name}-{self.suffix()}",
                    namespace=namespace,
                    labels={
                        "k8s-app": name,
                        "controller-revision-hash": revision,
                        "pod-template-generation": "4",
                    },
                    owner=("DaemonSet", name),
                    containers=[dict(c) for c in containers],
                    node=node,
                    tolerations=tolerations,
                    selector={"nvidia.com/gpu.present": "true"} if gpu_only else None,
                    failure="crash-loop" if broken else "",
                    created=self.ago(86400, 90 * 86400),
                )
                self.add(pod, "pods_daemonset")
                if name.startswith("nvidia-device-plugin"):
                    self.plugin_pods.append(pod)

    def control_plane(self) -> None:
        for node in self.by_pool["control-plane"]:
            for component, cpu, memory in (
                ("etcd", 0.1, 0.1),
                ("kube-apiserver", 0.25, 1.0),
                ("kube-controller-manager", 0.2, 0.25),
                ("kube-scheduler", 0.1, 0.125),
            ):
                container = container_spec(
                    component, f"registry.k8s.io/{component}:v1.29.4", resource_requests(cpu, memory)
                )
                pod = self.pod(
                    name=f"{component}-{node.name}",
                    namespace="kube-system",
                    labels={"component": component, "tier": "control-plane"},
                    owner=("Node", node.name),
                    containers=[container],
                    node=node,
                    tolerations=[{"operator": "Exists", "effect": "NoExecute"}],
                    created=self.ago(86400, 90 * 86400),
                )
                self.add(pod, "pods_control_plane")

    def gpu_workloads(self) -> None:
        catalogue: dict[tuple[str, int], list[tuple[str, str, str, dict[str, str]]]] = {}
        gpu_pools = [p for p in POOLS if p.gpus]
        for _ in range(self.scaled(120, 20)):
            pool = self.choose([(p, p.share) for p in gpu_pools])
            gpus = self.rng.choice(pool.gpu_sizes)
            kind = self.choose((("Job", 0.5), ("ReplicaSet", 0.35), ("StatefulSet", 0.15)))
            name = f"{self.rng.choice(TEAMS)}-{self.rng.choice(('train', 'infer', 'eval', 'embed', 'tune'))}"
            name = f"{name}-{self.suffix(4)}"
            selector = {PRODUCT: pool.product} if self.rng.random() < 0.5 else {ACCELERATOR: pool.accelerator}
            catalogue.setdefault((pool.name, gpus), []).append(
                (self.rng.choice(ML_NAMESPACES), kind, name, selector)
            )
        for pool in gpu_pools:
            for gpus in pool.gpu_sizes:
                if (pool.name, gpus) not in catalogue:
                    catalogue[(pool.name, gpus)] = [
                        ("ml-training", "Job", f"{pool.name}-x{gpus}", {PRODUCT: pool.product})
                    ]
            for node in self.by_pool[pool.name]:
                free = int(node.free(GPU)) if GPU in node.allocatable else 0
                keep = min(free, self.choose(pool.keep_free))  # never all of them: no node is empty
                to_fill = free - keep
                cpu_per_gpu = node.allocatable["cpu"] * 0.8 / pool.gpus
                memory_per_gpu = node.allocatable["memory"] * 0.8 / pool.gpus
                while to_fill > 0:
                    sizes = [g for g in pool.gpu_sizes if g <= to_fill]
                    gpus = self.rng.choice(sizes)
                    namespace, kind, owner, selector = self.rng.choice(catalogue[(pool.name, gpus)])
                    requests = {
                        "cpu": round(cpu_per_gpu * gpus, 1),
                        "memory": float(int(memory_per_gpu * gpus / GiB) * GiB),
                        GPU: float(gpus),
                    }
                    if not node.fits(requests):
                        break
                    container = container_spec(
                        "trainer" if kind == "Job" else "server",
                        f"us-docker.pkg.dev/acme-ml/images/{owner.rsplit('-', 1)[0]}:v{self.rng.randint(1, 40)}",
                        requests,
                        {GPU: float(gpus), "memory": requests["memory"]},
                        env=["NCCL_DEBUG", "CUDA_VISIBLE_DEVICES", "WANDB_PROJECT", "HF_HOME", "MODEL_ID"],
                        command=[
                            "python",
                            "-m",
                            "torch.distributed.run",
                            "--nproc_per_node",
                            str(gpus),
                            "main.py",
                        ],
                    )
                    pod_name = (
                        f"{owner}-{self.suffix()}" if kind != "StatefulSet" else f"{owner}-{self.suffix(3)}"
                    )
                    if kind == "ReplicaSet":
                        pod_name = f"{owner}-{self.template_hash()}-{self.suffix()}"
                    pod = self.pod(
                        name=pod_name,
                        namespace=namespace,
                        labels={"app": owner, "team": owner.split("-")[0], "workload": "gpu"},
                        owner=(kind, owner),
                        containers=[container],
                        node=node,
                        tolerations=[*DEFAULT_TOLERATIONS, GPU_TOLERATION],
                        selector=selector,
                    )
                    self.add(pod, "pods_gpu")
                    to_fill -= gpus

    # --- applications -----------------------------------------------------------------------------
    def deployments(self) -> list[AppDeployment]:
        found = []
        weights = [1.0 / (1 + 0.12 * abs(i - 16)) for i in range(len(SHAPES))]
        shapes = list(range(len(SHAPES)))
        web_namespaces = [n for n in self.app_namespaces if n in WEB_NAMESPACES or n.endswith("-prod")]
        for i in range(self.scaled(3000, 300)):
            # The first of each kind cover every shape; the rest are drawn, web ones one in ten.
            web = i % (2 * len(SHAPES)) >= len(SHAPES) if i < 4 * len(SHAPES) else self.rng.random() < 0.1
            shape = i % len(SHAPES) if i < 4 * len(SHAPES) else self.rng.choices(shapes, weights)[0]
            cpu, memory = SHAPES[shape]
            namespace = self.rng.choice(web_namespaces if web else self.app_namespaces)
            if web and self.rng.random() < 0.5:
                namespace = self.rng.choice(WEB_NAMESPACES)
            name = f"{namespace.split('-')[0]}-{self.rng.choice(WORDS)}-{self.suffix(3)}"
            extra = {"ephemeral-storage": 2 * GiB} if self.rng.random() < 0.1 else {}
            limits = {"memory": memory * GiB * self.rng.choice((1, 1, 2))}
            if self.rng.random() < 0.3:
                limits["cpu"] = cpu * 2
            image = f"us-docker.pkg.dev/acme/{namespace}/{name}:{self.hex(28)}"
            containers = [
                container_spec(
                    "app",
                    image,
                    resource_requests(cpu, memory, **extra),
                    limits,
                    env=[
                        "LOG_LEVEL",
                        "PORT",
                        "OTEL_EXPORTER_OTLP_ENDPOINT",
                        "DATABASE_URL",
                        "POD_NAME",
                        "POD_IP",
                    ],
                    command=["/app/server", "--port=8080"],
                )
            ]
            init = []
            if namespace in self.istio:
                containers.append(
                    container_spec(
                        "istio-proxy",
                        ISTIO_IMAGE,
                        resource_requests(0.1, 0.125),
                        {"cpu": 2.0, "memory": 1 * GiB},
                        env=[
                            "PILOT_CERT_PROVIDER",
                            "CA_ADDR",
                            "POD_NAME",
                            "POD_NAMESPACE",
                            "INSTANCE_IP",
                            "ISTIO_META_POD_PORTS",
                        ],
                        command=["/usr/local/bin/pilot-agent", "proxy", "sidecar"],
                    )
                )
                init.append(
                    container_spec(
                        "istio-init",
                        ISTIO_IMAGE,
                        resource_requests(0.01, 0.04),
                        {},
                        command=["istio-iptables"],
                    )
                )
            rs_hash = self.template_hash()
            labels = {
                "app": name,
                "app.kubernetes.io/name": name,
                "app.kubernetes.io/part-of": namespace.split("-")[0],
                "pod-template-hash": rs_hash,
                "version": f"v{self.rng.randint(1, 9)}",
            }
            if namespace in self.istio:
                labels["security.istio.io/tlsMode"] = "istio"
                labels["service.istio.io/canonical-name"] = name
            found.append(
                AppDeployment(
                    name=name,
                    namespace=namespace,
                    rs_hash=rs_hash,
                    containers=containers,
                    init=init,
                    labels=labels,
                    requests=effective_requests(containers, init),
                    spread=self.rng.random() < 0.2,
                    service=self.rng.random() < 0.7,
                    web=web,
                )
            )
        found.sort(key=lambda d: d.requests.get("cpu", 0.0))
        return found

    def applications(self, room: int) -> None:
        """Fill the CPU nodes with ``room`` Pods from Deployments, each node up to a drawn level."""
        self.app_deployments = self.deployments()
        catalogues = {web: ([d for d in self.app_deployments if d.web == web]) for web in (False, True)}
        cpus = {web: [d.requests.get("cpu", 0.0) for d in found] for web, found in catalogues.items()}
        targets = [n for n in self.nodes if n.pool is not None and n.pool.name.startswith("cpu")]
        weights = [n.pool.count_weight * self.rng.uniform(0.6, 1.4) for n in targets if n.pool is not None]
        total = sum(weights)
        counts = [int(room * w / total) for w in weights]
        caps = [int(n.allocatable["pods"]) - n.pods for n in targets]
        counts = [min(c, cap) for c, cap in zip(counts, caps, strict=True)]
        short = room - sum(counts)
        while short > 0:
            i = self.rng.randrange(len(targets))
            if counts[i] < caps[i]:
                counts[i] += 1
                short -= 1
        for node, count in zip(targets, counts, strict=True):
            assert node.pool is not None
            web = bool(node.pool.taint)
            deployments = catalogues[web]
            full = self.rng.random() < 0.25
            level = self.rng.uniform(0.93, 0.995) if full else self.rng.uniform(0.35, 0.9)
            if node.pool.fill:
                level = self.rng.uniform(*node.pool.fill)
            budget_cpu = node.allocatable["cpu"] * level - node.used.get("cpu", 0.0)
            budget_memory = node.allocatable["memory"] * min(1.0, level * 1.02) - node.used.get("memory", 0.0)
            for left in range(count, 0, -1):
                desired = max(0.0, budget_cpu) / left * self.rng.uniform(0.5, 1.6)
                index = bisect.bisect_right(cpus[web], desired) - 1 - self.rng.randint(0, 25)
                index = max(index, self.rng.randint(0, 30))  # a node over its level still gets small Pods
                if left == 1 and node.pool.fill:  # a pool run at its limit: the last Pod takes what is left
                    index = max(0, bisect.bisect_right(cpus[web], budget_cpu) - 1)
                deployment = None
                for candidate in range(index, max(index - 60, -1), -1):
                    option = deployments[candidate]
                    light = option.requests.get("memory", 0.0) <= max(0.0, budget_memory) / left * 2.5
                    if (light or candidate < 30) and node.fits(option.requests):
                        deployment = option
                        break
                if self.rng.random() < 0.02 and not web:
                    deployment = None  # a BestEffort Pod someone started by hand
                pod = self.app_pod(node, deployment)
                budget_cpu -= pod.requests.get("cpu", 0.0)
                budget_memory -= pod.requests.get("memory", 0.0)

    def app_pod(self, node: PlannedNode, deployment: AppDeployment | None) -> Pod:
        if deployment is None:  # a BestEffort Pod: no requests at all
            name = f"debug-{self.suffix(6)}"
            container = container_spec(
                "shell", "docker.io/library/busybox:1.36", {}, {}, command=["sleep", "infinity"]
            )
            pod = self.pod(
                name=name,
                namespace=self.rng.choice(self.app_namespaces),
                labels={"run": name},
                owner=None,
                containers=[container],
                node=node,
                tolerations=[*DEFAULT_TOLERATIONS, WEB_TOLERATION]
                if node.pool and node.pool.taint
                else DEFAULT_TOLERATIONS,
                selector=WEB_SELECTOR if node.pool and node.pool.taint else None,
            )
            return self.add(pod, "pods_app")
        roll = self.rng.random()
        failure = ""
        if roll < 0.0003:
            failure = "crash-loop"
        elif roll < 0.0004:
            failure = "image-pull"
        elif roll < 0.00045:
            failure = "config"
        pod = self.pod(
            name=f"{deployment.name}-{deployment.rs_hash}-{self.suffix()}",
            namespace=deployment.namespace,
            labels=deployment.labels,
            owner=("ReplicaSet", f"{deployment.name}-{deployment.rs_hash}"),
            containers=[dict(c) for c in deployment.containers],
            init=[dict(c) for c in deployment.init],
            node=node,
            tolerations=[*DEFAULT_TOLERATIONS, WEB_TOLERATION] if deployment.web else DEFAULT_TOLERATIONS,
            selector=WEB_SELECTOR if deployment.web else None,
            failure=failure,
            deleting=self.rng.random() < 0.0005,
            spread=deployment.spread,
        )
        if pod.pod_ip:
            deployment.addresses.append((pod.pod_ip, pod.name))
        if failure:
            self.failing.append((pod, failure))
        return self.add(pod, "pods_app")

    def finished(self, count: int) -> None:
        """Completed and evicted Pods: still listed, bound to a node, holding nothing."""
        cpu_nodes = [n for n in self.by_pool["cpu-general"] + self.by_pool["cpu-highmem"]]
        jobs = [
            f"{self.rng.choice(TEAMS)}-{self.rng.choice(('report', 'backup', 'sync', 'etl'))}"
            for _ in range(50)
        ]
        for _ in range(count):
            job = self.rng.choice(jobs)
            namespace = self.rng.choice(self.app_namespaces)
            container = container_spec(
                "job", f"us-docker.pkg.dev/acme/jobs/{job}:latest", resource_requests(0.5, 1)
            )
            phase = "Failed" if self.rng.random() < 0.1 else "Succeeded"
            pod = self.pod(
                name=f"{job}-{self.rng.randint(28_000_000, 29_000_000)}-{self.suffix()}",
                namespace=namespace,
                labels={"job-name": job, "batch.kubernetes.io/job-name": job},
                owner=("Job", job),
                containers=[container],
                node=self.rng.choice(cpu_nodes),
                phase=phase,
                charge=False,
                created=self.ago(600, 86400),
            )
            self.add(pod, "pods_finished")
