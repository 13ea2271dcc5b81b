"""Manifest files read for ``raydiag lint``: the RayClusters they would create, and where each is.

Files, directories (every ``*.yaml`` and ``*.yml`` under them, in name order) and standard input
are read as multi-document YAML, which is also what ``kustomize build`` and ``helm template``
print. Each RayCluster, RayJob (``spec.rayClusterSpec``) and RayService (``spec.rayClusterConfig``)
becomes one RayCluster through the same reader as a pasted manifest
(``bot.read.manifests``); other kinds, and a RayJob that runs on an existing cluster, are
left out. The location kept for each object is its file and the line of its ``metadata.name``, so
that a finding can point at it.

A path that does not exist or cannot be read, and a file that is not YAML, raise ``ManifestError``:
the command cannot say a file is fine when it could not read it.

The nodes the groups are held against come from files (``--nodes``: ``kubectl get nodes -o json``,
a List, or YAML of Node objects, read by the snapshot's node reader) or from the live cluster
(``--cluster``: one paginated list of nodes under the collection deadline); a live list that cannot
be read is a ``CollectionError``, which the command reports as a finding, not a usage error.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from bot.collect.deadline import Deadline
from bot.collect.kubernetes import ApiCall, KubernetesReader
from bot.read.found import Found
from bot.read.kubernetes_json import items, node_from_json
from bot.read.manifests import read_document
from bot.read.quantity import parse_quantity
from bot.read.yaml_blocks import safe_loader
from bot.snapshot.kubernetes import KubernetesState, Node, RayClusterObject
from bot.snapshot.model import CollectionError, Snapshot

if TYPE_CHECKING:
    from bot.collect.live import Target

STDIN = "-"
STDIN_NAME = "<stdin>"
YAML_SUFFIXES = (".yaml", ".yml")
MAX_FILE_BYTES = 64 * 1024 * 1024
# Where each kind keeps the RayCluster spec it creates.
CLUSTER_SPEC: dict[str, tuple[str, ...]] = {
    "RayCluster": ("spec",),
    "RayJob": ("spec", "rayClusterSpec"),
    "RayService": ("spec", "rayClusterConfig"),
}
UNNAMED = "(unnamed)"


class ManifestError(Exception):
    """A path that cannot be read as YAML manifests."""


@dataclass(frozen=True)
class Manifest:
    """One Ray object of a manifest file and the RayCluster it describes."""

    path: str  # as given on the command line (``<stdin>`` for ``-``)
    line: int  # 1-based: the line of ``metadata.name``, else of the document's start
    kind: str
    name: str
    namespace: str | None
    cluster: RayClusterObject

    @property
    def label(self) -> str:
        return f"{self.kind}/{self.name}"


def expand_paths(paths: Sequence[str]) -> list[str]:
    """The files to read: each file as given, each directory's YAML files, ``-`` once."""
    files: list[str] = []
    for given in paths:
        if given == STDIN:
            files.append(STDIN)
            continue
        path = Path(given)
        if path.is_dir():
            found = sorted(
                str(p) for p in path.rglob("*") if p.suffix.lower() in YAML_SUFFIXES and p.is_file()
            )
            files.extend(found)
        elif path.exists():
            files.append(given)
        else:
            raise ManifestError(f"{given}: no such file or directory")
    return list(dict.fromkeys(files))


def read_bytes(path: str, data: bytes | None = None) -> str:
    if data is None:
        try:
            with open(path, "rb") as handle:
                data = handle.read(MAX_FILE_BYTES + 1)
        except OSError as error:
            raise ManifestError(f"{path}: cannot read: {error.strerror or error}") from error
    if len(data) > MAX_FILE_BYTES:
        raise ManifestError(f"{path}: larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB")
    return data.decode("utf-8", errors="replace")


def _child(node: Any, key: str) -> Any:
    """The value node under ``key`` of a mapping node, or None."""
    if not isinstance(node, yaml.MappingNode):
        return None
    for key_node, value_node in node.value:
        if isinstance(key_node, yaml.ScalarNode) and key_node.value == key:
            return value_node
    return None


def _objects(node: Any, data: object) -> Iterator[tuple[Any, Mapping[str, Any]]]:
    """Each object of a document with its node: the document itself, or a ``List``'s items."""
    if not isinstance(data, Mapping):
        return
    items = data.get("items")
    kind = data.get("kind")
    if isinstance(items, list) and isinstance(kind, str) and kind.endswith("List"):
        item_nodes = _child(node, "items")
        nodes = list(item_nodes.value) if item_nodes is not None else []
        for index, item in enumerate(items):
            if isinstance(item, Mapping):
                yield (nodes[index] if index < len(nodes) else node), item
        return
    yield node, data


def _dig(data: object, *keys: str) -> object:
    for key in keys:
        if not isinstance(data, Mapping):
            return None
        data = data.get(key)
    return data


def _group_resources(group: object) -> object:
    """A group with its ``resources`` (KubeRay 1.5: the Ray resources of its nodes) folded into
    ``rayStartParams`` the way the operator does (``updateRayStartParamsResources``): ``cpu``,
    ``memory`` and a name ending in ``gpu`` set ``num-cpus``, ``memory`` and ``num-gpus``; any other
    name goes into the ``resources`` JSON, which replaces the one in rayStartParams."""
    if not isinstance(group, Mapping) or not isinstance(group.get("resources"), Mapping):
        return group
    raw_params = group.get("rayStartParams")
    params: dict[str, Any] = dict(raw_params) if isinstance(raw_params, Mapping) else {}
    custom: dict[str, float] = {}
    for name, quantity in group["resources"].items():
        amount = parse_quantity(str(quantity))
        if amount is None:
            continue
        lower = str(name).lower()
        if lower == "cpu":
            params["num-cpus"] = str(math.ceil(amount))
        elif lower == "memory":
            params["memory"] = str(math.ceil(amount))
        elif lower.endswith("gpu"):
            params["num-gpus"] = str(math.ceil(amount))
        else:
            custom[str(name)] = amount
    if custom:
        params["resources"] = "'" + json.dumps(custom) + "'"
    return {**group, "rayStartParams": params}


def _cluster(kind: str, obj: Mapping[str, Any]) -> RayClusterObject | None:
    spec = _dig(obj, *CLUSTER_SPEC[kind])
    if not isinstance(spec, Mapping):
        return None  # a RayJob on an existing cluster (clusterSelector) creates none
    metadata = obj.get("metadata")
    metadata = dict(metadata) if isinstance(metadata, Mapping) else {}
    if not isinstance(metadata.get("name"), str) or not metadata["name"]:
        metadata["name"] = UNNAMED
    spec = dict(spec)
    spec["headGroupSpec"] = _group_resources(spec.get("headGroupSpec"))
    if isinstance(spec.get("workerGroupSpecs"), list):
        spec["workerGroupSpecs"] = [_group_resources(group) for group in spec["workerGroupSpecs"]]
    found = Found(source="manifest")
    read_document({"kind": "RayCluster", "metadata": metadata, "spec": spec}, found)
    clusters = found.objects.get("rayclusters", [])
    return clusters[0] if clusters else None


def read_manifests(text: str, path: str) -> list[Manifest]:
    """The Ray objects of one file's text; ``ManifestError`` when the text is not YAML."""
    shown = STDIN_NAME if path == STDIN else path
    manifests: list[Manifest] = []
    loader = safe_loader()(text)
    try:
        while loader.check_node():
            node = loader.get_node()
            data = loader.construct_document(node)
            for obj_node, obj in _objects(node, data):
                kind = obj.get("kind")
                # The Ray 1.x operator's ``cluster.ray.io`` RayCluster is another object altogether.
                api = str(obj.get("apiVersion", "ray.io/"))
                if kind not in CLUSTER_SPEC or not api.startswith("ray.io/"):
                    continue
                cluster = _cluster(kind, obj)
                if cluster is None:
                    continue
                name_node = _child(_child(obj_node, "metadata"), "name")
                line = (name_node or obj_node).start_mark.line + 1
                namespace = _dig(obj, "metadata", "namespace")
                manifests.append(
                    Manifest(
                        path=shown,
                        line=line,
                        kind=kind,
                        name=cluster.name,
                        namespace=namespace if isinstance(namespace, str) else None,
                        cluster=cluster,
                    )
                )
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise ManifestError(f"{shown}: not YAML{where}: {error.problem or error}") from error
    except yaml.YAMLError as error:
        raise ManifestError(f"{shown}: not YAML: {error}") from error
    except RecursionError as error:
        raise ManifestError(f"{shown}: not YAML: nested too deeply") from error
    finally:
        loader.dispose()
    return manifests


def _node_objects(data: object) -> Iterator[Mapping[str, Any]]:
    """The Node objects of one document: a Node, or the items of a ``List``/``NodeList`` (whose
    items the API leaves without a ``kind``)."""
    if not isinstance(data, Mapping):
        return
    kind = data.get("kind")
    if kind == "Node":
        yield data
    elif isinstance(kind, str) and kind.endswith("List"):
        for item in items(data):
            if isinstance(item, Mapping) and item.get("kind", "Node") == "Node":
                yield item


def read_nodes(text: str, path: str) -> list[Node]:
    """The nodes of one file: JSON (``kubectl get nodes -o json``) or YAML, one or several
    documents; ``ManifestError`` when it is neither, or holds no Node."""
    try:
        documents: list[object] = [json.loads(text)]
    except ValueError:
        try:
            documents = list(yaml.load_all(text, Loader=safe_loader()))
        except yaml.YAMLError as error:
            raise ManifestError(f"{path}: neither JSON nor YAML: {str(error).splitlines()[0]}") from error
        except RecursionError as error:
            raise ManifestError(f"{path}: not YAML: nested too deeply") from error
    nodes = [node for doc in documents for raw in _node_objects(doc) if (node := node_from_json(raw))]
    if not nodes:
        raise ManifestError(f"{path}: no Node objects (expected the output of `kubectl get nodes -o json`)")
    return nodes


def read_node_files(paths: Sequence[str]) -> list[Node]:
    """The nodes of every file, each node once (by name: the last file that lists it wins)."""
    nodes: dict[str, Node] = {}
    for path in paths:
        for node in read_nodes(read_bytes(path), path):
            nodes[node.name] = node
    return list(nodes.values())


def read_live_nodes(
    target: Target, deadline_s: float, call_timeout_s: float, api_client: Any = None
) -> tuple[list[Node] | None, list[CollectionError]]:
    """The live cluster's nodes, read page by page within ``deadline_s``; None and the errors when
    they could not be read (no credentials, forbidden, the API server failing or too slow)."""
    from bot.collect.live import credentials_failure, kubernetes_client  # noqa: PLC0415 - lazy: loads the Kubernetes client

    try:
        client = api_client if api_client is not None else kubernetes_client(target)
    except Exception as error:  # a missing or broken kubeconfig is a finding, not a traceback
        return None, [credentials_failure(error)]
    reader = KubernetesReader(client, Deadline(deadline_s), call_timeout_s)
    raw = reader.try_items(ApiCall("list", "", "v1", "nodes"))
    if raw is None:
        return None, reader.errors
    return [node for item in raw if (node := node_from_json(item)) is not None], reader.errors


def snapshot_of(manifest: Manifest, nodes: Sequence[Node] | None = None, live: bool = False) -> Snapshot:
    """A snapshot holding the manifest's RayCluster and, when given, the whole node list (from
    files, or ``live`` from the cluster): no Pods, no Ray state."""
    return Snapshot(
        cluster=manifest.cluster.name,
        namespace=manifest.cluster.namespace,
        origin="live" if live else "file",
        kubernetes=KubernetesState(
            rayclusters=[manifest.cluster], nodes=list(nodes or ()), nodes_complete=nodes is not None
        ),
    )
