"""Generated node-and-Pod cases for the fit replay's differential test: the real kube-scheduler
places (or refuses) a Pod, and ``bot.classify.fit`` judges the same objects read back the way
raydiag's collector reads them.

A case is 1-6 Nodes (cpu, memory, pods, sometimes ``nvidia.com/gpu`` and ephemeral storage, labels
from a small vocabulary so selectors sometimes match, taints of every effect, cordons), Pods
already bound to them (``spec.nodeName``, as after binding, some of them finished or still
Pending, some with a RuntimeClass overhead or required anti-affinity of their own), and one Pod
for the scheduler with requests spread over containers, init containers, sidecars or pod-level
resources, a node selector, tolerations, required node affinity (labels and ``metadata.name``
fields) and sometimes required pod (anti-)affinity. Requests are often drawn from a node's free
room (exactly all of it, one unit more, half), and selectors and tolerations often aim at that
node, so the boundaries and the later filters are tried, not only the easy refusals.

Every case runs on the one shared control plane, one after another: the previous case's Pods
and Nodes are deleted first. Before the Pod is created a barrier Pod proves the scheduler has
seen every Node in its final state (see ``FitBench._barrier``): its Node watch and its Pod watch
are separate streams, and a Pod judged against half-registered Nodes would be a disagreement of
the test, not of the replay.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from bot.classify.fit import FitExplainer, FitExplanation
from bot.collect.deadline import Deadline
from bot.collect.kubernetes import ApiCall, KubernetesObjects, KubernetesReader
from bot.read.scheduler_message import parse_scheduler_message
from bot.snapshot.node_filter import REASON_AFFINITY
from tests.support.controlplane import ControlPlane

NAMESPACE = "fit"
# Every Node of a case carries this label; its value (the case's id) is the last write to each Node.
CASE_LABEL = "raydiag.test/fit-case"
HOSTNAME = "kubernetes.io/hostname"
PAUSE = "registry.k8s.io/pause:3.10"
GPU = "nvidia.com/gpu"
WAIT_S = 30.0
POLL_S = 0.01
MI = 1024**2

# Label values of a small vocabulary, so that selectors and affinity sometimes match and sometimes
# do not; "gpu-memory-gb" is numeric for the Gt and Lt operators.
LABELS: dict[str, tuple[str, ...]] = {
    "pool": ("cpu", "gpu", "spot"),
    "topology.kubernetes.io/zone": ("zone-a", "zone-b", "zone-c"),
    "nvidia.com/gpu.product": ("A100", "H100"),
    "gpu-memory-gb": ("16", "40", "80"),
}
TAINT_KEYS = ("nvidia.com/gpu", "dedicated", "spot")
TAINT_VALUES = ("", "present", "ray")
EFFECTS = ("NoSchedule", "NoExecute", "PreferNoSchedule")
APPS = ("web", "ray", "batch")
# A RuntimeClass with a fixed overhead: its Pods get ``spec.overhead`` from the RuntimeClass
# admission plugin, and the scheduler adds it to their requests.
RUNTIME_CLASS = "kata-fc"
OVERHEAD = {"cpu": "250m", "memory": "160Mi"}


# -- quantities ----------------------------------------------------------------------------------


@st.composite
def cpu_quantity(draw: st.DrawFn, milli: int) -> str:
    """``milli`` millicores written as people write them: ``1500m``, ``1.5``, ``2``."""
    spellings = [f"{milli}m"]
    if milli % 1000 == 0:
        spellings.append(str(milli // 1000))
    elif milli % 100 == 0:
        spellings.append(f"{milli / 1000:g}")
    return draw(st.sampled_from(spellings))


@st.composite
def memory_quantity(draw: st.DrawFn, amount: int) -> str:
    """``amount`` bytes in a binary suffix, a decimal one, or plain bytes."""
    spellings = [str(amount)]
    for suffix, unit in (("Gi", 1024**3), ("Mi", MI), ("Ki", 1024), ("G", 10**9), ("M", 10**6)):
        if amount % unit == 0:
            spellings.append(f"{amount // unit}{suffix}")
    return draw(st.sampled_from(spellings))


def cpu_milli(text: str) -> int:
    return int(text[:-1]) if text.endswith("m") else round(float(text) * 1000)


def memory_bytes(text: str) -> int:
    for suffix, unit in (("Gi", 1024**3), ("Mi", MI), ("Ki", 1024), ("G", 10**9), ("M", 10**6)):
        if text.endswith(suffix):
            return int(text[: -len(suffix)]) * unit
    return int(text)


# -- the scenario --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    """Manifests, as created through the API (names without the case's suffix)."""

    nodes: tuple[dict[str, Any], ...]
    # Bound Pods and the phase each is given through the status subresource ("" leaves it Pending).
    bound: tuple[tuple[dict[str, Any], str], ...]
    pod: dict[str, Any]
    notes: tuple[str, ...] = field(default=(), compare=False)

    @property
    def features(self) -> set[str]:
        """What the Pod and its surroundings use, for the report and the known-difference checks."""
        spec = self.pod["spec"]
        found = set(self.notes)
        found |= {k for k in ("nodeSelector", "tolerations", "initContainers", "resources") if spec.get(k)}
        affinity = spec.get("affinity") or {}
        if "nodeAffinity" in affinity:
            terms = affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
            found.add("nodeAffinity")
            if any(t.get("matchFields") for t in terms["nodeSelectorTerms"]):
                found.add("matchFields")
        found |= {k for k in ("podAffinity", "podAntiAffinity") if k in affinity}
        if spec.get("runtimeClassName") or any(p["spec"].get("runtimeClassName") for p, _ in self.bound):
            found.add("overhead")
        if any("affinity" in p["spec"] for p, _ in self.bound):
            found.add("existingAntiAffinity")
        if any(n["spec"].get("taints") for n in self.nodes):
            found.add("taints")
        if any(n["spec"].get("unschedulable") for n in self.nodes):
            found.add("cordon")
        return found


def _node(
    name: str,
    allocatable: dict[str, str],
    labels: dict[str, str],
    taints: list[dict[str, str]],
    cordoned: bool,
) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": {**labels, HOSTNAME: name}},
        "spec": {"taints": taints, "unschedulable": cordoned},
        "status": {"capacity": allocatable, "allocatable": allocatable},
    }


@st.composite
def node_manifest(draw: st.DrawFn, name: str) -> dict[str, Any]:
    milli = draw(st.sampled_from([1000, 2000, 4000, 7500, 8000, 16000, 32000]))
    memory = draw(st.sampled_from([2048, 4096, 8192, 16384, 32768, 65536])) * MI
    allocatable = {
        "cpu": draw(cpu_quantity(milli)),
        "memory": draw(memory_quantity(memory)),
        "pods": str(draw(st.sampled_from([1, 2, 3, 4, 110, 110]))),
    }
    gpus = draw(st.sampled_from([0, 0, 0, 1, 2, 4, 8]))
    if gpus:
        allocatable[GPU] = str(gpus)
    if draw(st.booleans()):
        allocatable["ephemeral-storage"] = draw(st.sampled_from(["20Gi", "100Gi"]))
    keys = draw(st.lists(st.sampled_from(sorted(LABELS)), unique=True, max_size=3))
    labels = {key: draw(st.sampled_from(LABELS[key])) for key in keys}
    tainted = draw(st.integers(0, 2)) == 0
    taint_keys = draw(st.lists(st.sampled_from(TAINT_KEYS), unique=True, max_size=2)) if tainted else []
    taints = [
        {"key": key, "value": draw(st.sampled_from(TAINT_VALUES)), "effect": draw(st.sampled_from(EFFECTS))}
        for key in taint_keys
    ]
    for taint in taints:
        if not taint["value"]:
            del taint["value"]
    cordoned = draw(st.integers(0, 7)) == 0
    return _node(name, allocatable, labels, taints, cordoned)


def _pod(name: str, containers: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    labels = spec.pop("labels", {})
    return {
        "metadata": {"name": name, "labels": labels},
        "spec": {"containers": containers, "terminationGracePeriodSeconds": 0, **spec},
    }


def _container(name: str, requests: Mapping[str, str], **extra: Any) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    if requests:
        resources["requests"] = dict(requests)
        # Extended resources cannot be overcommitted: their limit must equal the request.
        extended = {r: q for r, q in requests.items() if "/" in r}
        if extended:
            resources["limits"] = extended
    return {"name": name, "image": PAUSE, "resources": resources, **extra}


@st.composite
def bound_pods(draw: st.DrawFn, nodes: list[dict[str, Any]]) -> list[tuple[dict[str, Any], str]]:
    found = []
    for node in nodes:
        for _ in range(draw(st.integers(0, 3))):
            requests = {
                "cpu": draw(cpu_quantity(draw(st.sampled_from([100, 250, 500, 1000, 2000, 4000])))),
                "memory": draw(memory_quantity(draw(st.sampled_from([128, 512, 1024, 4096, 8192])) * MI)),
            }
            gpus = draw(st.sampled_from([0, 0, 1, 2]))
            if gpus:
                requests[GPU] = str(gpus)
            app = draw(st.sampled_from(["ray", *APPS]))
            phase = draw(st.sampled_from(["", "", "Running", "Running", "Succeeded", "Failed"]))
            name = f"bound-{len(found)}"
            extra: dict[str, Any] = {}
            if draw(st.integers(0, 3)) == 0:
                # Required anti-affinity of a bound Pod keeps the Pods it selects out of its domain.
                term = {
                    "labelSelector": {"matchLabels": {"app": draw(st.sampled_from(["ray", *APPS]))}},
                    "topologyKey": draw(st.sampled_from([HOSTNAME, "topology.kubernetes.io/zone"])),
                }
                extra["affinity"] = {
                    "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
                }
            if draw(st.integers(0, 7)) == 0:
                extra["runtimeClassName"] = RUNTIME_CLASS
            pod = _pod(
                name,
                [_container("main", requests)],
                nodeName=node["metadata"]["name"],
                labels={"app": app},
                **extra,
            )
            found.append((pod, phase))
    return found


def _free(node: dict[str, Any], bound: list[tuple[dict[str, Any], str]]) -> dict[str, int]:
    """What the Pods bound to ``node`` leave of its cpu (milli), memory (bytes) and GPUs."""
    allocatable = node["status"]["allocatable"]
    free = {
        "cpu": cpu_milli(allocatable["cpu"]),
        "memory": memory_bytes(allocatable["memory"]),
        GPU: int(allocatable.get(GPU, "0")),
    }
    for pod, phase in bound:
        if pod["spec"]["nodeName"] != node["metadata"]["name"] or phase in ("Succeeded", "Failed"):
            continue
        requests = pod["spec"]["containers"][0]["resources"]["requests"]
        free["cpu"] -= cpu_milli(requests["cpu"])
        free["memory"] -= memory_bytes(requests["memory"])
        if pod["spec"].get("runtimeClassName"):
            free["cpu"] -= cpu_milli(OVERHEAD["cpu"])
            free["memory"] -= memory_bytes(OVERHEAD["memory"])
        free[GPU] -= int(requests.get(GPU, "0"))
    return free


@st.composite
def _amount(draw: st.DrawFn, free: int, unit: int, choices: list[int]) -> int:
    """A request: a node's free room exactly, one unit more, half of it, or a common size."""
    mode = draw(st.sampled_from(["exact", "over", "half", "half", "any", "any"]))
    if free > unit and mode == "exact":
        return free
    if free > 0 and mode == "over":
        return free + unit
    if free > 2 * unit and mode == "half":
        return (free // (2 * unit)) * unit
    return draw(st.sampled_from(choices))


@st.composite
def _requirement(draw: st.DrawFn, node_names: list[str]) -> tuple[str, dict[str, Any]]:
    """One node-selector requirement: ("matchExpressions" or "matchFields", requirement)."""
    if draw(st.integers(0, 5)) == 0:
        # The API allows one name per field requirement; two requirements in a term intersect.
        return "matchFields", {
            "key": "metadata.name",
            "operator": draw(st.sampled_from(["In", "NotIn"])),
            "values": [draw(st.sampled_from(node_names))],
        }
    key = draw(st.sampled_from(sorted(LABELS)))
    operator = draw(st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]))
    if operator in ("Exists", "DoesNotExist"):
        return "matchExpressions", {"key": key, "operator": operator}
    if operator in ("Gt", "Lt"):
        key = "gpu-memory-gb"
        return "matchExpressions", {
            "key": key,
            "operator": operator,
            "values": [draw(st.sampled_from(["16", "40", "64"]))],
        }
    values = draw(st.lists(st.sampled_from(LABELS[key]), min_size=1, max_size=2, unique=True))
    return "matchExpressions", {"key": key, "operator": operator, "values": values}


@st.composite
def _toleration(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["exists-key", "equal", "equal", "all", "cordon"]))
    if kind == "all":
        return {"operator": "Exists"}
    if kind == "cordon":
        return {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}
    toleration: dict[str, Any] = {"key": draw(st.sampled_from(TAINT_KEYS))}
    if kind == "exists-key":
        toleration["operator"] = "Exists"
    else:
        toleration["operator"] = "Equal"
        toleration["value"] = draw(st.sampled_from(TAINT_VALUES))
    effect = draw(st.sampled_from(["", "", *EFFECTS]))
    if effect:
        toleration["effect"] = effect
    return toleration


@st.composite
def scenarios(draw: st.DrawFn) -> Scenario:
    count = draw(st.integers(1, 6))
    nodes = [draw(node_manifest(f"n{i}")) for i in range(count)]
    bound = draw(bound_pods(nodes))
    names = [n["metadata"]["name"] for n in nodes]
    target = draw(st.sampled_from(nodes))
    free = _free(target, bound)
    notes: list[str] = []

    milli = draw(_amount(free["cpu"], 1, [0, 100, 500, 1000, 2000, 16000]))
    memory = draw(_amount(free["memory"], MI, [0, 256 * MI, 1024 * MI, 4096 * MI, 65536 * MI]))
    gpus = draw(_amount(free[GPU], 1, [0, 0, 0, 1, 2, 4])) if draw(st.booleans()) else 0
    wanted: dict[str, str] = {}
    if milli:
        wanted["cpu"] = draw(cpu_quantity(milli))
    if memory:
        wanted["memory"] = draw(memory_quantity(memory))
    if gpus:
        wanted[GPU] = str(gpus)
    if draw(st.integers(0, 15)) == 0:
        wanted["example.com/fpga"] = "1"  # a resource no node offers
    if draw(st.integers(0, 7)) == 0:
        wanted["ephemeral-storage"] = draw(st.sampled_from(["10Gi", "50Gi"]))

    spec: dict[str, Any] = {}
    shape = draw(st.sampled_from(["one", "one", "two", "init", "sidecar", "pod-level"]))
    containers = [_container("main", wanted)]
    if shape == "two" and milli >= 2:
        # The same total over two containers: the scheduler adds them up.
        first = milli // 2
        containers = [
            _container("main", {**wanted, "cpu": f"{first}m"}),
            _container("helper", {"cpu": f"{milli - first}m"}),
        ]
    elif shape == "init":
        # An init container runs before the others: the Pod needs the larger of the two.
        init = draw(st.sampled_from([500, 4000, 16000]))
        spec["initContainers"] = [_container("setup", {"cpu": f"{init}m"})]
    elif shape == "sidecar":
        # A sidecar (an init container that keeps running) adds to the app containers.
        spec["initContainers"] = [
            _container("proxy", {"cpu": "250m", "memory": "64Mi"}, restartPolicy="Always")
        ]
    elif shape == "pod-level" and (milli or memory):
        # Pod-level resources (beta and on by default in 1.34) replace the containers' cpu and memory.
        level = {k: v for k, v in wanted.items() if k in ("cpu", "memory")}
        spec["resources"] = {"requests": level}
        containers = [_container("main", {k: v for k, v in wanted.items() if k not in level})]

    # Constraints aimed at the target node as often as not, so that Pods reach the later filters
    # (resources, pod affinity) instead of all stopping at the first ones.
    target_labels = {k: v for k, v in target["metadata"]["labels"].items() if k in LABELS}
    selector: dict[str, str] = {}
    aim = draw(st.sampled_from(["none", "none", "target", "any"]))
    if aim == "target" and target_labels:
        keys = draw(st.lists(st.sampled_from(sorted(target_labels)), unique=True, min_size=1, max_size=2))
        selector = {key: target_labels[key] for key in keys}
    elif aim == "any":
        keys = draw(st.lists(st.sampled_from(sorted(LABELS)), unique=True, min_size=1, max_size=2))
        selector = {key: draw(st.sampled_from(LABELS[key])) for key in keys}
    if draw(st.integers(0, 9)) == 0:
        selector[HOSTNAME] = draw(st.sampled_from(names))
    if selector:
        spec["nodeSelector"] = selector
    tolerations = draw(st.lists(_toleration(), max_size=2))
    for taint in target["spec"]["taints"]:
        if draw(st.integers(0, 2)) > 0:
            tolerations.append(
                {
                    "key": taint["key"],
                    "operator": "Equal",
                    "value": taint.get("value", ""),
                    "effect": taint["effect"],
                }
            )
    if tolerations:
        spec["tolerations"] = tolerations
    affinity: dict[str, Any] = {}
    if draw(st.integers(0, 4)) == 0:
        terms = []
        for _ in range(draw(st.integers(1, 2))):
            term: dict[str, list[dict[str, Any]]] = {}
            for _ in range(draw(st.integers(1, 2))):
                kind, requirement = draw(_requirement(names))
                term.setdefault(kind, []).append(requirement)
            terms.append(term)
        affinity["nodeAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}
        }
    labels = {"app": draw(st.sampled_from(["ray", *APPS]))}
    if draw(st.integers(0, 2)) == 0:
        kind = draw(st.sampled_from(["podAffinity", "podAntiAffinity"]))
        term = {
            "labelSelector": {"matchLabels": {"app": draw(st.sampled_from(["ray", *APPS]))}},
            "topologyKey": draw(st.sampled_from([HOSTNAME, "topology.kubernetes.io/zone"])),
        }
        affinity[kind] = {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
    if affinity:
        spec["affinity"] = affinity
    if draw(st.integers(0, 7)) == 0:
        spec["runtimeClassName"] = RUNTIME_CLASS
    pod = _pod("pending", containers, labels=labels, **spec)
    return Scenario(tuple(nodes), tuple(bound), pod, tuple(notes))


# -- running a case ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Round:
    """One placement: what the scheduler did with the Pod and what the replay said about it."""

    excluded: tuple[str, ...]  # Nodes the Pod was kept off (the earlier rounds' placements)
    bound_to: str | None  # the Node the scheduler bound the Pod to, or None when it refused it
    message: str | None  # the scheduler's refusal (the PodScheduled condition's message)
    explanation: FitExplanation

    @property
    def agrees(self) -> bool:
        """A placement on a Node the replay finds room on; a refusal counted reason by reason as
        the replay counts it (in the release's wording, see ``FitExplanation.agrees_with``)."""
        if self.bound_to is not None:
            return self.bound_to in self.explanation.fitting_nodes
        return bool(self.message) and self.explanation.agrees_with(self.message or "") is True


@dataclass(frozen=True)
class Verdict:
    """Every round of one case: the Pod, then the same Pod kept off each Node it was placed on,
    until the scheduler refuses it. The last refusal names every Node the scheduler found no room
    on, so the replay's whole set of fitting Nodes is checked, not only the one the scheduler chose."""

    case: int
    scenario: Scenario
    rounds: tuple[Round, ...]

    @property
    def agrees(self) -> bool:
        return all(r.agrees for r in self.rounds)

    @property
    def scheduled(self) -> bool:
        return self.rounds[0].bound_to is not None


def excluding(pod: dict[str, Any], names: list[str]) -> dict[str, Any]:
    """A copy of the Pod's manifest whose required node affinity also keeps it off ``names``: a
    ``metadata.name NotIn`` field requirement (one name each, as the API wants) in every term."""
    copy: dict[str, Any] = json.loads(json.dumps(pod))
    if not names:
        return copy
    node_affinity = copy["spec"].setdefault("affinity", {}).setdefault("nodeAffinity", {})
    required = node_affinity.setdefault(
        "requiredDuringSchedulingIgnoredDuringExecution", {"nodeSelectorTerms": [{}]}
    )
    for term in required["nodeSelectorTerms"]:
        term.setdefault("matchFields", []).extend(
            {"key": "metadata.name", "operator": "NotIn", "values": [name]} for name in names
        )
    return copy


class FitBench:
    """Runs cases one after another on one control plane."""

    def __init__(self, plane: ControlPlane) -> None:
        from kubernetes import client

        self.api = plane.client()
        self.core = client.CoreV1Api(self.api)
        plane.namespace(NAMESPACE)
        runtime_class = {
            "metadata": {"name": RUNTIME_CLASS},
            "handler": RUNTIME_CLASS,
            "overhead": {"podFixed": OVERHEAD},
        }
        client.NodeV1Api(self.api).create_runtime_class(body=runtime_class)
        self._case = 0
        self._nodes: list[str] = []

    def _suffix(self, name: str) -> str:
        return f"{name}-c{self._case}"

    def run(self, scenario: Scenario) -> Verdict:
        self._case += 1
        self._clear()
        nodes = self._create_nodes(scenario)
        self._create_bound(scenario)
        self._barrier(scenario, nodes)
        nodes_raw, pods_raw = self._read_back()
        manifest = json.loads(json.dumps(scenario.pod))
        self._rename_fields(manifest)
        rounds: list[Round] = []
        excluded: list[str] = []
        while True:
            pod = excluding(manifest, excluded)
            name = pod["metadata"]["name"] = self._suffix(f"pending-r{len(rounds)}")
            raw = json.loads(
                self.core.create_namespaced_pod(NAMESPACE, body=pod, _preload_content=False).data
            )
            bound_to, message = self._outcome(name)
            rounds.append(Round(tuple(excluded), bound_to, message, self._replay(nodes_raw, pods_raw, raw)))
            if bound_to is None or len(excluded) + 1 == len(nodes):
                break
            excluded.append(bound_to)
            self.core.delete_namespaced_pod(name, NAMESPACE, grace_period_seconds=0)
        return Verdict(self._case, scenario, tuple(rounds))

    @staticmethod
    def _replay(nodes_raw: list[Any], pods_raw: list[Any], raw: dict[str, Any]) -> FitExplanation:
        """The replay as raydiag's detector builds it, on the objects as its collector reads them
        (the Pod as the API server answered its creation: defaults applied, not yet bound)."""
        found = KubernetesObjects()
        found.add("nodes", nodes_raw)
        found.add("pods", [*pods_raw, raw])
        state = found.state()
        pod = next(p for p in state.pods if p.name == raw["metadata"]["name"])
        index = state.pod_index
        explainer = FitExplainer(state.nodes, index.requested, index.by_node)
        return explainer.explain(pod)

    # -- the steps, in order

    def _clear(self) -> None:
        """The previous case's Pods, then its Nodes, deleted at once (no kubelet to wait for)."""
        self.core.delete_collection_namespaced_pod(NAMESPACE, grace_period_seconds=0)
        if self._nodes:
            self.core.delete_collection_node(label_selector=CASE_LABEL)

    def _rename_fields(self, pod: dict[str, Any]) -> None:
        """Node names in a Pod's spec get the case's suffix, as the Nodes do."""
        spec = pod["spec"]
        if "nodeName" in spec:
            spec["nodeName"] = self._suffix(spec["nodeName"])
        if HOSTNAME in spec.get("nodeSelector", {}):
            spec["nodeSelector"][HOSTNAME] = self._suffix(spec["nodeSelector"][HOSTNAME])
        for term in (
            spec.get("affinity", {})
            .get("nodeAffinity", {})
            .get("requiredDuringSchedulingIgnoredDuringExecution", {})
            .get("nodeSelectorTerms", [])
        ):
            for requirement in term.get("matchFields", []):
                requirement["values"] = [self._suffix(v) for v in requirement["values"]]

    def _create_nodes(self, scenario: Scenario) -> list[str]:
        """Each Node created Ready, then its last write: its taints (kube-apiserver's admission adds
        ``node.kubernetes.io/not-ready`` on create, which the node lifecycle controller would lift)
        and the case label. Nodes with room for one more Pod go last (the barrier's Node)."""
        ready = {
            "type": "Ready",
            "status": "True",
            "reason": "KubeletReady",
            "message": "kubelet is posting ready status",
        }
        names = []
        for manifest in scenario.nodes:
            body = json.loads(json.dumps(manifest))
            name = body["metadata"]["name"] = self._suffix(body["metadata"]["name"])
            body["metadata"]["labels"][HOSTNAME] = name
            body["status"]["conditions"] = [ready]
            self.core.create_node(body=body)
            names.append(name)
        order = sorted(range(len(names)), key=lambda i: self._room(scenario, i) > 0)
        for i in order:
            taints = scenario.nodes[i]["spec"]["taints"] or None
            self.core.patch_node(
                names[i],
                body={"metadata": {"labels": {CASE_LABEL: str(self._case)}}, "spec": {"taints": taints}},
            )
        self._nodes = [names[i] for i in order]
        return self._nodes

    @staticmethod
    def _room(scenario: Scenario, position: int) -> int:
        node = scenario.nodes[position]
        name = node["metadata"]["name"]
        held = sum(
            1
            for pod, phase in scenario.bound
            if pod["spec"]["nodeName"] == name and phase not in ("Succeeded", "Failed")
        )
        return int(node["status"]["allocatable"]["pods"]) - held

    def _create_bound(self, scenario: Scenario) -> None:
        for manifest, phase in scenario.bound:
            body = json.loads(json.dumps(manifest))
            body["metadata"]["name"] = self._suffix(body["metadata"]["name"])
            self._rename_fields(body)
            self.core.create_namespaced_pod(NAMESPACE, body=body)
            if phase:
                self.core.patch_namespaced_pod_status(
                    body["metadata"]["name"], NAMESPACE, body={"status": {"phase": phase}}
                )

    def _barrier(self, scenario: Scenario, nodes: list[str]) -> None:
        """Wait until the scheduler has seen every Node of this case as it now is.

        A Pod that tolerates everything and selects the Node written last by name and by this
        case's label (its last write) can only be placed, or refused with every other Node failing
        its selector, once the scheduler's Node watch has delivered that write, and so every write
        before it. Deleting it before the case's Pod is created keeps it out of the Pod's way: the
        scheduler's Pod watch delivers the deletion first."""
        last = nodes[-1]
        name = self._suffix("barrier")
        body = _pod(
            name,
            [_container("pause", {})],
            nodeSelector={CASE_LABEL: str(self._case), HOSTNAME: last},
            tolerations=[{"operator": "Exists"}],
        )
        self.core.create_namespaced_pod(NAMESPACE, body=body)

        def seen() -> bool:
            bound_to, message = self._state(name)
            if bound_to:
                return True
            parsed = parse_scheduler_message(message or "")
            return bool(parsed) and parsed[0] == len(nodes) and parsed[1][REASON_AFFINITY] == len(nodes) - 1

        _wait(f"the scheduler to see the nodes of case {self._case}", seen)
        self.core.delete_namespaced_pod(name, NAMESPACE, grace_period_seconds=0)

    def _read_back(self) -> tuple[list[Any], list[Any]]:
        """Nodes and Pods as raydiag's collector reads them: its reader, page by page."""
        reader = KubernetesReader(self.api, Deadline(WAIT_S))
        return reader.items(ApiCall("list", "", "v1", "nodes")), reader.items(
            ApiCall("list", "", "v1", "pods")
        )

    def _state(self, name: str) -> tuple[str | None, str | None]:
        pod = self.core.read_namespaced_pod(name, NAMESPACE)
        if pod.spec.node_name:
            return pod.spec.node_name, None
        for condition in (pod.status and pod.status.conditions) or []:
            if condition.type == "PodScheduled" and condition.status == "False" and condition.message:
                return None, str(condition.message)
        return None, None

    def _outcome(self, name: str) -> tuple[str | None, str | None]:
        result: list[tuple[str | None, str | None]] = []

        def decided() -> bool:
            state = self._state(name)
            if state == (None, None):
                return False
            result.append(state)
            return True

        _wait(f"the scheduler to place or refuse {name}", decided)
        return result[-1]

    def close(self) -> None:
        self._clear()


def _wait(what: str, ready: Callable[[], bool]) -> None:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if ready():
            return
        time.sleep(POLL_S)
    raise AssertionError(f"timed out waiting for {what}")
