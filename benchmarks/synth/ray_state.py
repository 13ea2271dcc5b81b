"""The Ray dashboard's answers: nodes, actors, placement groups, jobs, Serve and the demands."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from benchmarks.synth.common import RAY_VERSION, GiB
from benchmarks.synth.state import BuilderState
from bot.snapshot.ray import Demand, RayActor, RayJobInfo, RayNode, RayState, RayTask, ServeApplication


class RayDashboard(BuilderState):
    """What the Ray dashboard answers, from the Ray nodes the KubeRay part registered."""

    def ray_state(self) -> RayState:
        rng = self.rng
        jobs = []
        for _ in range(self.scaled(150, 12)):
            status = self.choose((("RUNNING", 0.4), ("SUCCEEDED", 0.45), ("FAILED", 0.1), ("PENDING", 0.05)))
            jobs.append(
                {
                    "job_id": f"{rng.randint(1, 0xFFFF):04x}0000",
                    "submission_id": self.submission_id(),
                    "status": status,
                    "message": "Job failed due to an application error, last available logs: ..."
                    if status == "FAILED"
                    else None,
                    "entrypoint": f"python {rng.choice(('train.py', 'infer.py', 'prep.py'))} --config cfg.yaml",
                }
            )
        running = [j["job_id"] for j in jobs if j["status"] == "RUNNING"] or [jobs[0]["job_id"]]
        done = [j["job_id"] for j in jobs if j["status"] == "SUCCEEDED"] or running
        groups: list[dict[str, Any]] = []
        for _ in range(self.scaled(300, 20)):
            gpus = rng.choice((1, 2, 4, 8))
            state = self.choose((("CREATED", 0.8), ("PENDING", 0.13), ("REMOVED", 0.07)))
            groups.append(
                {
                    "placement_group_id": self.hex(144),
                    "name": f"pg-{self.suffix(6)}" if rng.random() < 0.5 else "",
                    "state": state,
                    "strategy": rng.choice(("PACK", "STRICT_PACK", "SPREAD")),
                    "bundles": [{"GPU": float(gpus), "CPU": float(8 * gpus)}] * rng.choice((1, 2, 4, 8)),
                    "creator_job_id": rng.choice(running),
                }
            )
        created_groups = [g["placement_group_id"] for g in groups if g["state"] == "CREATED"]
        actors: list[RayActor] = []
        nodes: list[RayNode] = []
        for node in self.ray_nodes:
            total = node.resources_total
            available = dict(total)
            node_gpus = total.get("GPU", 0.0)
            free_gpus = 0.0 if rng.random() < 0.85 else float(rng.randint(1, max(1, int(node_gpus // 2))))
            used_gpus = max(0.0, node_gpus - free_gpus)
            while used_gpus > 0:
                take = min(used_gpus, float(rng.choice((1, 1, 1, 2))))
                self.actor(
                    actors,
                    node,
                    {"GPU": take, "CPU": min(available.get("CPU", 0.0), 2.0 * take)},
                    job=rng.choice(running),
                    groups=created_groups,
                    available=available,
                )
                used_gpus -= take
            busy = available.get("CPU", 0.0) * rng.uniform(0.5, 1.0)
            share = float(max(1, int(busy / rng.randint(1, 8))))
            while busy >= share:
                self.actor(
                    actors, node, {"CPU": share}, job=rng.choice(running), groups=[], available=available
                )
                busy -= share
            if total.get("object_store_memory"):
                available["object_store_memory"] = round(total["object_store_memory"] * rng.uniform(0.2, 0.9))
            if total.get("memory"):
                available["memory"] = round(total["memory"] * rng.uniform(0.1, 0.8))
            nodes.append(node.model_copy(update={"resources_available": available}))
        # Detached GPU actors left by someone, and GPU actors of jobs that have finished.
        holding = [i for i, a in enumerate(actors) if "GPU" in a.required_resources]
        chosen = rng.sample(holding, self.scaled(12) + self.scaled(6))
        for i in chosen[: self.scaled(12)]:
            actors[i] = actors[i].model_copy(update={"detached": True, "name": f"cache-{self.suffix()}"})
        for i in chosen[self.scaled(12) :]:
            actors[i] = actors[i].model_copy(update={"job_id": rng.choice(done)})
        dead = []
        for actor in rng.sample(actors, len(actors) // 4):
            dead.append(actor.model_copy(update={"state": "DEAD", "actor_id": self.hex(128)}))
        actors += dead
        for _ in range(len(nodes) // 10):
            nodes.append(
                RayNode.model_validate(
                    {
                        "node_id": self.hex(224),
                        "node_ip": f"10.250.{rng.randint(0, 255)}.{rng.randint(2, 254)}",
                        "state": "DEAD",
                        "node_type": "cpu-workers",
                        "resources_total": {"CPU": 4.0, "memory": 16 * GiB},
                        "labels": {},
                    }
                )
            )
        alive = [n for n in nodes if n.state == "ALIVE"]
        totals: dict[str, float] = {}
        used: dict[str, float] = {}
        for node in alive:
            for key, amount in node.resources_total.items():
                if key.startswith("node:"):
                    continue
                totals[key] = totals.get(key, 0.0) + amount
                free = (node.resources_available or {}).get(key, amount)
                used[key] = used.get(key, 0.0) + amount - free
        demands = self.demands(alive)
        tasks = [
            RayTask.model_validate(
                {
                    "task_id": self.hex(192),
                    "name": rng.choice(("preprocess", "tokenize", "rollout", "evaluate", "map_batches")),
                    "state": "PENDING_NODE_ASSIGNMENT",
                    "job_id": rng.choice(running),
                    "required_resources": rng.choice(({"CPU": 1.0}, {"CPU": 1.0, "GPU": 1.0}, {"CPU": 4.0})),
                }
            )
            for _ in range(self.scaled(1000))
        ]
        self.stats.counts.update(
            ray_nodes=len(nodes),
            ray_actors=len(actors),
            ray_placement_groups=len(groups),
            ray_jobs=len(jobs),
            ray_demand_entries=len(demands),
        )
        return RayState.model_validate(
            {
                "version": RAY_VERSION,
                "nodes": nodes,
                "totals": totals,
                "used": used,
                "node_count": len(alive),
                "node_groups": self.ray_groups,
                "pending_nodes": [f"h100-workers: {self.scaled(4)} launching"],
                "recent_failures": [
                    "h200-workers: NodeLaunchException: no nodes match the worker group's node selector "
                    "nvidia.com/gpu.product=NVIDIA-H200"
                ],
                "demands": demands,
                "actors": actors,
                "pending_tasks": tasks,
                "placement_groups": groups,
                "serve_applications": [
                    ServeApplication.model_validate(
                        {
                            "name": name,
                            "status": status,
                            "message": message,
                            "deployments": [
                                {
                                    "name": f"{name.title()}Deployment",
                                    "status": status,
                                    "message": message,
                                    "replica_states": {"RUNNING": 4},
                                }
                            ],
                        }
                    )
                    for name, status, message in (
                        ("text-gen", "RUNNING", ""),
                        ("ranker", "RUNNING", ""),
                        ("moderation", "DEPLOY_FAILED", "ModuleNotFoundError: No module named 'detoxify'"),
                    )
                ],
                "jobs": [RayJobInfo.model_validate(j) for j in jobs],
            }
        )

    def actor(
        self,
        actors: list[RayActor],
        node: RayNode,
        resources: dict[str, float],
        *,
        job: str,
        groups: Sequence[str],
        available: dict[str, float],
    ) -> None:
        for key, amount in resources.items():
            available[key] = available.get(key, 0.0) - amount
        gpu = "GPU" in resources
        name = self.choose(
            (
                ("TrainWorker", 3),
                ("LLMEngine", 1),
                ("RolloutWorker", 2),
                ("EmbeddingModel", 1),
                ("ServeReplica:text-gen:TextGen", 1),
            )
            if gpu
            else (("MapWorker", 3), ("_StatsActor", 1), ("RolloutWorker", 2), ("DataShardReader", 2))
        )
        actors.append(
            RayActor.model_validate(
                {
                    "actor_id": self.hex(128),
                    "class_name": name,
                    "name": None,
                    "state": "ALIVE",
                    "node_id": node.node_id,
                    "job_id": job,
                    "pid": self.rng.randint(1000, 60000),
                    "required_resources": {k: v for k, v in resources.items() if v},
                    "ray_namespace": "serve" if name.startswith("ServeReplica") else self.hex(128)[:8],
                    "start_time": self.ago(60, 3 * 86400),
                    "placement_group_id": self.rng.choice(groups)
                    if groups and self.rng.random() < 0.5
                    else None,
                }
            )
        )

    def demands(self, nodes: Sequence[RayNode]) -> list[Demand]:
        shapes = demand_shapes()
        self.stats.demand_shapes = len(shapes)
        ranks = list(range(len(shapes)))
        random.Random(7).shuffle(ranks)  # the same popularity order at every size
        weights = [1.0 / (1 + r) ** 0.8 for r in ranks]
        biggest: dict[str, float] = {}
        for node in nodes:
            for key, amount in node.resources_total.items():
                biggest[key] = max(biggest.get(key, 0.0), amount)
        found = []
        for shape in self.rng.choices(shapes, weights, k=self.size.demands):
            count = min(500, int(self.rng.paretovariate(1.2)))
            need = shape["shape"]
            if shape["bundles"] and shape["strategy"] == "STRICT_PACK":
                need = {k: sum(b.get(k, 0.0) for b in shape["bundles"]) for k in shape["bundles"][0]}
            infeasible = any(amount > biggest.get(key, 0.0) for key, amount in need.items())
            shown = "{" + ", ".join(f"'{k}': {v}" for k, v in need.items()) + "}"
            if shape["bundles"]:
                text = f"{shown} * {len(shape['bundles'])} ({shape['strategy']}): {count}+ pending placement groups"
            else:
                text = f"{shown}: {count}+ pending tasks/actors"
            found.append(
                Demand.model_validate(
                    {**shape, "count": count, "infeasible": infeasible, "source_text": text}
                )
            )
        return found


def demand_shapes() -> list[dict[str, Any]]:
    """About three hundred distinct demand shapes: tasks, GPU actors, custom resources, placement groups."""
    shapes: list[dict[str, Any]] = []

    def add(
        shape: dict[str, float],
        kind: str,
        bundles: Sequence[dict[str, float]] = (),
        strategy: str | None = None,
    ) -> None:
        shapes.append({"shape": shape, "kind": kind, "bundles": list(bundles), "strategy": strategy})

    for cpu in (0.25, 0.5, 1, 2, 4, 8, 16, 32, 64):
        for memory in (0, 2, 8, 32, 128):
            add({"CPU": float(cpu), **({"memory": memory * GiB} if memory else {})}, "task")
    for gpu in (0.25, 0.5, 1, 2, 4, 8, 16):
        for cpu in (1, 4, 8, 16):
            for accelerator in ("", "A100", "H100", "L4", "T4", "H200"):
                shape = {"CPU": float(cpu), "GPU": float(gpu)}
                if accelerator:
                    shape[f"accelerator_type:{accelerator}"] = 0.001
                add(shape, "actor" if gpu >= 1 else "task_or_actor")
    for name in ("TPU", "spot_node", "high_mem_node", "preemptible"):
        for amount in (1, 4):
            add({"CPU": 1.0, name: float(amount)}, "task")
    for count in (2, 4, 8, 16):
        for gpu in (1, 2, 4, 8):
            for strategy in ("PACK", "STRICT_PACK", "SPREAD", "STRICT_SPREAD"):
                bundle = {"CPU": float(8 * gpu), "GPU": float(gpu)}
                add(dict(bundle), "placement_group", [dict(bundle) for _ in range(count)], strategy)
    for count in (4, 16, 64):
        for cpu in (1, 4):
            for strategy in ("PACK", "SPREAD"):
                bundle = {"CPU": float(cpu)}
                add(dict(bundle), "placement_group", [dict(bundle) for _ in range(count)], strategy)
    return shapes
