"""GPUs one machine shows (``nvidia-smi``, a Kubernetes node's capacity) against what code asks and
what Ray registers.

Hardware figures are not Ray's figures: Ray schedules on the GPUs each raylet registered, and a
machine can hold more than that (``num-gpus: 0``, a driver error at raylet start, a container that
was given fewer). So they are used only where Ray's own figures cannot answer:

* **Code that asks more than one machine holds** (cause 6). Pasted code declares what each task,
  actor, Serve replica, Train worker or strictly packed placement group needs on one node. Where
  the paste shows no Ray node, no ``ray status`` and no template (those are judged by
  :mod:`bot.classify.detectors.ray_resources`), but does show machines, a request for more GPUs
  than the largest machine shown can never start on it. A paste shows some machines, never
  provably all, so this is a warning that names the command listing every node.
* **Ray registers fewer GPUs than a machine shows** (cause 4). ``nvidia-smi`` lists N GPUs where it
  ran, and the ``ray status`` beside it counts fewer in the whole cluster: if it ran in a Ray node's
  container, or on the host a Ray node runs on directly, some of those GPUs were never registered.
  Where it ran is what the text cannot say, so the finding says so and names the command that
  settles it. A Kubernetes node's capacity is not used here: Pods share a node's GPUs, so a Ray
  total below it is normal; the Pods' GPU limits against Ray's total are
  ``gpu_total_registration``'s question.

When ``ray.init()`` starts a one-node cluster on the machine ``nvidia-smi`` describes, the code's
own instances are placed on that machine's GPUs while the paste is read
(:func:`bot.read.python_code.settle`), and the usual rules judge what waits.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from bot.catalogue import Rule
from bot.classify.context import Context
from bot.classify.detectors.ray_resources import demand_label, demand_params
from bot.classify.registry import Hit, detector
from bot.diagnosis import Evidence, Subject
from bot.snapshot.gpu import installed_gpus
from bot.snapshot.nvidia_smi import SmiOutput

__all__ = ["Machine", "machines_shown"]

_MAX_GPU_LINES = 4
_MAX_QUOTE = 600


@dataclass(frozen=True)
class Machine:
    """One machine the paste shows GPUs of: ``source`` is ``nvidia-smi`` or ``node``; ``gpus`` is
    only a lower bound where ``complete`` is False (a table cut after its first rows)."""

    source: str
    name: str
    gpus: float
    evidence: tuple[Evidence, ...]
    complete: bool = True


def _smi_evidence(output: SmiOutput) -> tuple[Evidence, ...]:
    lines = [output.quote] if output.quote and output.layout == "table" else []
    lines += [gpu.line for gpu in output.gpus[:_MAX_GPU_LINES] if gpu.line]
    if len(output.gpus) > _MAX_GPU_LINES:
        lines.append(output.gpus[-1].line)
    return tuple(Evidence(source="nvidia-smi", text=line[:_MAX_QUOTE]) for line in dict.fromkeys(lines))


def machines_shown(ctx: Context) -> list[Machine]:
    """Every machine whose GPUs the paste shows, largest first."""
    found: list[Machine] = []
    for output in ctx.snapshot.nvidia_smi:
        count = output.gpu_count
        if count:
            found.append(
                Machine("nvidia-smi", output.quote, float(count), _smi_evidence(output), output.complete)
            )
    for node in ctx.kube.nodes:
        gpus = installed_gpus(node)
        if gpus > 0:
            evidence = Evidence(source=f"node {node.name}", text=f"nvidia.com/gpu: {gpus:g}")
            found.append(Machine("node", node.name, gpus, (evidence,)))
    return sorted(found, key=lambda machine: -machine.gpus)


def _ray_figures_shown(ctx: Context) -> bool:
    """Whether the paste shows any figure of Ray's own for a node or a template to hold work."""
    ray = ctx.ray
    return bool(ctx.ray_nodes or (ray is not None and (ray.totals or ray.node_types)) or ctx.kube.rayclusters)


@detector(
    "declared_exceeds_machine",
    ("demand", "demand_kind", "demand_strategy", "needed", "total", "machines", "machine"),
)
def declared_exceeds_machine(ctx: Context, rule: Rule) -> Iterable[Hit]:
    """A request in pasted code for more GPUs on one node than the largest machine shown holds."""
    ray = ctx.ray
    if ray is None or not ray.declared_demands or _ray_figures_shown(ctx):
        return
    machines = machines_shown(ctx)
    if not machines or not all(machine.complete for machine in machines):
        return  # a machine whose GPUs were cut off may be larger than any count shown
    largest = machines[0]
    seen: set[str] = set()
    for demand in ray.declared_demands:
        needed = demand.largest_single_request.get("GPU", 0.0)
        label = demand_label(demand)
        if needed <= largest.gpus + 1e-9 or label in seen:
            continue
        seen.add(label)
        evidence = [Evidence(source=demand.code_source or "python code", text=demand.source_text or label)]
        evidence += largest.evidence
        params = {
            **demand_params(demand),
            "needed": f"{needed:g}",
            "total": f"{largest.gpus:g}",
            "machines": str(len(machines)),
            "machine": largest.name if largest.source == "node" else "nvidia-smi",
        }
        yield Hit(Subject(kind="RayDemand", name=label), tuple(evidence), params)


@detector("ray_gpus_below_machine", ("machine_gpus", "ray_gpus", "models", "ray_nodes"))
def ray_gpus_below_machine(ctx: Context, rule: Rule) -> Iterable[Hit]:
    """``nvidia-smi`` shows more GPUs on one machine than Ray registers in the whole cluster."""
    registered = ctx.ray_gpus_registered
    if registered is None or ctx.ray is None:
        return
    if any(pod.gpu_limit() > 0 for pod in ctx.ray_pods):
        return  # the Pods' GPU limits against Ray's total: gpu_total_registration judges that
    count = ctx.ray_node_count
    if count is not None and count[0] == 0:
        return  # no Ray node at all: nothing registered anything, the connectivity rules judge that
    shown = [m for m in machines_shown(ctx) if m.source == "nvidia-smi" and m.gpus > registered + 1e-9]
    if not shown:
        return
    machine = shown[0]
    output = next(o for o in ctx.snapshot.nvidia_smi if o.quote == machine.name)
    models = ", ".join(dict.fromkeys(g.name for g in output.gpus if g.name))
    ray = ctx.ray
    if ray.totals:
        used = ray.used.get("GPU", 0.0)
        ray_line = Evidence(
            source="ray status",
            text=f"GPU {used:g}/{registered:g} used",
            phrase="evidence.used_of_total",
            values={"1.resource": "GPU", "1.used": f"{used:g}", "1.total": f"{registered:g}"},
        )
    else:
        ray_line = Evidence(
            source="ray nodes",
            text=f"{len(ctx.ray_nodes)} Ray node(s)",
            phrase="evidence.ray_node_count",
            values={"count": str(len(ctx.ray_nodes))},
        )
    yield Hit(
        Subject(kind="Text", name="nvidia-smi"),
        (*machine.evidence, ray_line),
        {
            "machine_gpus": f"{machine.gpus:g}",
            "ray_gpus": f"{registered:g}",
            "models": models,
            "ray_nodes": str(count[0]) if count else "",
        },
    )
