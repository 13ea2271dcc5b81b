"""`raydiag lint` with what the manifests alone do not say: a node list, the team's conventions, and
the live cluster (--nodes FILE, --config FILE, --cluster NAME).

The rule cases are files beside the paste rules' cases: tests/cases/<rule-id>/fires/*.yaml (a
manifest; ``*.scenario.yaml`` are the scenarios of tests/support/scenarios.py) must make that rule
fire and nothing else, .../quiet/*.yaml must not make it fire. The first line
of each, ``# lint options: ...``, holds the options it runs with; ``{demo_nodes}`` is the demo's
recorded GKE node list (bot/demo/kuberay_state.json, a v1 NodeList as ``kubectl get nodes -o json``
prints it), ``{corpus_node}`` the ``kubectl get node -o yaml`` of a one-GPU node pasted in
NVIDIA/k8s-device-plugin#112 (tests/corpus), ``{conventions}`` tests/fixtures/lint/context/
conventions.yaml, and ``--cluster`` runs against the loopback Kubernetes API server serving the
GKE cluster of tests/support/cluster.py.

Loopback API server: for node lists that cannot be read (403, 500 injected) and a hung API server;
the live-node cases serve the recorded GKE nodes of tests/support/cluster.py.
"""

from __future__ import annotations

import io
import json
import re
import shlex
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.catalogue import default_catalogue
from bot.classify.detectors.group_lint import ray_accelerator_type
from bot.classify.lint import lint_rules, lint_snapshot
from bot.cli import main, run
from bot.collect.manifests_lint import ManifestError, read_manifests, read_node_files, read_nodes, snapshot_of
from bot.config import ConfigError, load_config
from bot.diagnosis import Finding
from bot.render.rules_doc import SCENARIO_SUFFIX
from bot.snapshot.data import dump
from tests.support import cluster
from tests.support.kube_api import Fault, KubeAPI, ObjectStore, serve

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "lint"
CASES = REPO / "tests" / "cases"
SAMPLES = sorted((FIXTURES / "kuberay-samples").glob("*.yaml"))
CONVENTIONS = FIXTURES / "context" / "conventions.yaml"
DEMO_STATE = REPO / "bot" / "demo" / "kuberay_state.json"
CORPUS_NODE = (
    REPO
    / "tests"
    / "corpus"
    / "found-quiet"
    / "k8s-device-plugin-112-node-yaml-gpu-allocatable-equals-capacity.txt"
)
OUTCOMES = ("fires", "quiet")
LINT_CASES = [
    (path.parents[1].name, path.parent.name, path)
    for outcome in OUTCOMES
    for path in sorted(CASES.glob(f"*/{outcome}/*.yaml"))
    if not path.name.endswith(SCENARIO_SUFFIX)
]
OPTIONS = re.compile(r"^# lint options: (?P<options>.*)$")


def _run(args: list[str], stdin: str = "") -> tuple[int, str]:
    out = io.StringIO()
    source = io.TextIOWrapper(io.BytesIO(stdin.encode()), encoding="utf-8")
    return run(args, source, out), out.getvalue()


def _json(args: list[str]) -> tuple[int, dict[str, Any]]:
    code, text = _run([*args, "--format", "json"])
    report: dict[str, Any] = json.loads(text)
    return code, report


def _findings(path: Path, nodes_file: Path | None = None, conventions: bool = False) -> list[Finding]:
    """The findings of one file with their params (which the JSON leaves out), as `lint` makes them."""
    nodes = read_node_files([str(nodes_file)]) if nodes_file else None
    models = [dump(e) for e in load_config(CONVENTIONS).conventions.gpu_models] if conventions else []
    rules = lint_rules(default_catalogue(), models)
    manifests = read_manifests(path.read_text(encoding="utf-8"), str(path))
    return [f for m in manifests for f in lint_snapshot(snapshot_of(m, nodes), rules).findings]


@pytest.fixture(scope="module")
def node_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The recorded node lists as the files a user would pass to --nodes."""
    folder = tmp_path_factory.mktemp("nodes")
    demo = folder / "gke-nodes.json"
    demo.write_text(json.dumps(json.loads(DEMO_STATE.read_text())["kubernetes"]["nodes"]), encoding="utf-8")
    corpus = folder / "node-112.yaml"
    # The paste starts with the shell prompt and the command; the rest is kubectl's YAML as printed.
    lines = CORPUS_NODE.read_text(encoding="utf-8").splitlines()
    assert lines[0].endswith("kubectl get node 192.168.13.64 -o yaml")
    corpus.write_text("\n".join(lines[1:]) + "\n", encoding="utf-8")
    return {"demo_nodes": demo, "corpus_node": corpus}


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[KubeAPI, Path]]:
    with serve(ObjectStore.from_bundle(cluster.healthy())) as api:
        yield api, api.kubeconfig(tmp_path_factory.mktemp("kube") / "kubeconfig")


def _target(kubeconfig: Path) -> list[str]:
    return ["--kubeconfig", str(kubeconfig), "--context", "loopback"]


def _case_args(path: Path, node_files: dict[str, Path], kubeconfig: Path) -> list[str]:
    match = OPTIONS.match(path.read_text(encoding="utf-8").splitlines()[0])
    assert match, f"{path}: the first line must be '# lint options: ...'"
    places = {**{k: str(v) for k, v in node_files.items()}, "conventions": str(CONVENTIONS)}
    options = shlex.split(match.group("options").format(**places))
    if "--cluster" in options:
        options += _target(kubeconfig)
    return ["lint", str(path), *options]


# The rule cases -----------------------------------------------------------------------------------


def test_every_rule_of_these_checks_has_cases_and_every_case_a_rule() -> None:
    catalogue = default_catalogue()
    covered: dict[str, set[str]] = {}
    for rule, outcome, _ in LINT_CASES:
        covered.setdefault(rule, set()).add(outcome)
    ours = {r.id for r in catalogue if r.detector in ("group_nodes", "group_conventions")}
    assert {rule: set(OUTCOMES) for rule in ours} == covered
    misplaced = [p for p in CASES.rglob("*") if p.is_file() and p.parent.name not in OUTCOMES]
    assert not misplaced


@pytest.mark.parametrize(
    ("rule", "outcome", "path"), LINT_CASES, ids=[f"{r}:{o}:{p.stem}" for r, o, p in LINT_CASES]
)
def test_lint_case(
    rule: str, outcome: str, path: Path, node_files: dict[str, Path], live: tuple[KubeAPI, Path]
) -> None:
    code, report = _json(_case_args(path, node_files, live[1]))
    assert report["errors"] == []
    fired = {f["rule"] for f in report["findings"]}
    if outcome == "quiet":
        assert rule not in fired, report["findings"]
        return
    assert fired == {rule}, fired
    expected = default_catalogue()[rule]
    for finding in report["findings"]:
        assert (finding["code"], finding["cause"], finding["severity"]) == (
            expected.code,
            expected.cause,
            expected.severity,
        )
        assert finding["evidence"][0]["source"] == "manifest"
        assert finding["evidence"][1]["source"].startswith("raycluster ")
    assert code == 1


# The node list ------------------------------------------------------------------------------------


def test_node_files_are_read_as_kubectl_prints_them(node_files: dict[str, Path], tmp_path: Path) -> None:
    demo = read_node_files([str(node_files["demo_nodes"])])
    assert [n.name for n in demo] == ["control-plane-1", "cpu-node-1", "gpu-a100-1", "gpu-t4-1", "gpu-a100-2"]
    t4 = next(n for n in demo if n.name == "gpu-t4-1")
    assert t4.allocatable["nvidia.com/gpu"] == 1
    assert t4.taints[0].key == "nvidia.com/gpu"
    (node,) = read_node_files([str(node_files["corpus_node"])])
    assert node.name == "192.168.13.64"
    assert node.allocatable["cpu"] == 8
    assert node.allocatable["memory"] == 49192996 * 1024
    # Several files: every node once.
    both = read_node_files([str(node_files["demo_nodes"]), str(node_files["corpus_node"])])
    assert len(both) == 6
    # YAML: a List of Nodes, and Node documents beside other kinds.
    listed = tmp_path / "nodes.yaml"
    items = yaml.safe_load(node_files["corpus_node"].read_text(encoding="utf-8"))
    listed.write_text(
        yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [items]})
        + "---\n"
        + yaml.safe_dump({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "not-a-node"}}),
        encoding="utf-8",
    )
    assert [n.name for n in read_nodes(listed.read_text(encoding="utf-8"), str(listed))] == ["192.168.13.64"]
    with pytest.raises(ManifestError, match="no Node objects"):
        read_nodes("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n", "pods.yaml")
    with pytest.raises(ManifestError, match="neither JSON nor YAML"):
        read_nodes("items: [unclosed\n", "broken.json")


def test_the_finding_gives_the_largest_node_and_its_allocatable(node_files: dict[str, Path]) -> None:
    path = CASES / "k8s-group-exceeds-every-node" / "fires" / "batch-inference-head-on-gke-t4.yaml"
    (finding,) = _findings(path, node_files["demo_nodes"])
    params = finding.params
    assert params["group"] == "head"
    assert params["requests"] == "cpu=54, memory=54Gi, nvidia.com/gpu=4"
    # Only the T4 node passes the nodeSelector (its GPU taint is tolerated for a Pod that asks for
    # nvidia.com/gpu, as the ExtendedResourceToleration admission plugin does on GKE).
    assert (params["eligible"], params["nodes"]) == ("1", "5")
    assert params["largest_node"] == "gpu-t4-1"
    assert params["node_allocatable"] == "cpu=7.91, memory=25.65Gi, nvidia.com/gpu=1"
    assert params["short_of"] == "cpu, memory, nvidia.com/gpu"
    code, text = _run(["lint", str(path), "--nodes", str(node_files["demo_nodes"])])
    assert code == 1
    first, evidence = text.splitlines()[:2]
    assert first == (
        f"{path}:9: critical RD0109 k8s-group-exceeds-every-node RayJob/rayjob-sample: "
        "Group head asks for more per Pod than any node it may use has"
    )
    assert "the closest is gpu-t4-1 with allocatable cpu=7.91, memory=25.65Gi, nvidia.com/gpu=1" in evidence
    _, chinese = _run(["lint", str(path), "--nodes", str(node_files["demo_nodes"]), "--lang", "zh"])
    assert "组 head 每个 Pod 申请的资源超过了它能去的任何节点" in chinese


def test_a_pods_request_counts_init_containers_by_the_largest_and_sidecars_added() -> None:
    quiet = CASES / "k8s-group-exceeds-every-node" / "quiet" / "init-container-within-the-node.yaml"
    fires = CASES / "k8s-group-exceeds-every-node" / "fires" / "init-container-larger-than-the-node.yaml"
    ((_, quiet_group),) = [
        (m, g) for m in read_manifests(quiet.read_text(), str(quiet)) for g in m.cluster.worker_groups
    ]
    # App containers 2 CPUs + the sidecar's 1; memory 4Gi + 256Mi, below the init container's 44Gi.
    assert quiet_group.requests["cpu"] == 3
    assert quiet_group.requests["memory"] == 44 * 2**30
    ((_, fires_group),) = [
        (m, g) for m in read_manifests(fires.read_text(), str(fires)) for g in m.cluster.worker_groups
    ]
    assert fires_group.requests["memory"] == 64 * 2**30
    assert fires_group.requests["cpu"] == 2


def test_template_rules_still_speak_with_a_node_list(node_files: dict[str, Path]) -> None:
    # Without the groups' Pods nothing is replayed, so the template alone is still judged.
    for rule in ("k8s-group-gpu-taint-untolerated", "k8s-group-unknown-gpu-resource"):
        path = FIXTURES / "broken" / f"{rule}.yaml"
        _, report = _json(["lint", str(path), "--nodes", str(node_files["demo_nodes"])])
        assert rule in {f["rule"] for f in report["findings"]}


def test_a_node_file_that_is_not_a_node_list_is_bad_usage(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sample = str(SAMPLES[0])
    pods = tmp_path / "pods.json"
    pods.write_text(json.dumps({"apiVersion": "v1", "kind": "PodList", "items": []}), encoding="utf-8")
    for args, message in [
        (["lint", sample, "--nodes", str(pods)], f"{pods}: no Node objects"),
        (["lint", sample, "--nodes", str(tmp_path / "missing.json")], "cannot read"),
        (["lint", sample, "--nodes", str(pods), "--cluster", "gpu-prod"], "not allowed with argument"),
    ]:
        assert main(args) == 2, args
        err = capsys.readouterr().err
        assert err.startswith("raydiag: error: ") and message in err, err
        assert err.count("\n") == 1


# The conventions ----------------------------------------------------------------------------------


def test_kuberay_samples_follow_the_conventions() -> None:
    code, report = _json(["lint", *map(str, SAMPLES), "--config", str(CONVENTIONS)])
    assert (code, report["findings"], report["errors"]) == (0, [], [])


def test_a_misspelt_label_value_names_the_closest_entry() -> None:
    path = CASES / "k8s-group-label-value-unconventional" / "fires" / "misspelt-product-label.yaml"
    (finding,) = _findings(path, conventions=True)
    assert finding.params["selector_value"] == "NVIDIA-A100-SXM4-80G"
    assert finding.params["suggestion"] == "NVIDIA-A100-SXM4-80GB"
    assert finding.params["ray_resource"] == "accelerator_type:A100"
    _, text = _run(["lint", str(path), "--config", str(CONVENTIONS)])
    assert "closest: NVIDIA-A100-SXM4-80GB (accelerator_type:A100)" in text
    assert "fix: If it is a misspelling, select NVIDIA-A100-SXM4-80GB" in text


def test_a_misspelt_ray_resource_is_named_beside_the_conventions_one() -> None:
    path = CASES / "ray-group-convention-resource-mismatch" / "fires" / "misspelt-accelerator-type.yaml"
    (finding,) = _findings(path, conventions=True)
    assert finding.params["ray_resource"] == "accelerator_type:A100"
    assert finding.params["misspelt"] == "accelerator_type:A10O"
    assert "accelerator_type:A10O looks like a misspelling of it" in finding.evidence[0].text
    _, report = _json(["lint", str(path), "--config", str(CONVENTIONS)])
    assert (
        "does not register accelerator_type:A100 as the conventions spell it"
        in report["findings"][0]["title"]
    )
    # Without --config no convention is known, and nothing fires.
    assert _json(["lint", str(path)])[1]["findings"] == []


# Device names as NVML reports them; GPU feature discovery puts them into nvidia.com/gpu.product with
# hyphens for spaces.
DEVICES = [
    "NVIDIA A100-SXM4-80GB",
    "NVIDIA A100-SXM4-40GB",
    "NVIDIA H100 80GB HBM3",
    "NVIDIA L4",
    "NVIDIA A10G",
    "Tesla T4",
    "Tesla V100-SXM2-16GB",
    "NVIDIA L40S",
    "NVIDIA RTX PRO 6000 Blackwell Server Edition",
]


@pytest.mark.parametrize("device", DEVICES)
def test_the_accelerator_type_is_the_one_ray_registers(device: str) -> None:
    from ray._private.accelerators.nvidia_gpu import NvidiaGPUAcceleratorManager

    rays = NvidiaGPUAcceleratorManager._gpu_name_to_accelerator_type(device)
    assert ray_accelerator_type(device.replace(" ", "-")) == rays


def test_a_name_rays_rule_does_not_cover_is_not_guessed() -> None:
    # Ray falls back to the whole product name for consumer cards; the check then compares models.
    assert ray_accelerator_type("NVIDIA-GeForce-RTX-4090") is None


def test_conventions_are_validated_with_the_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert len(load_config(CONVENTIONS).conventions.gpu_models) == 7
    config = tmp_path / "config.yaml"
    for body, message in [
        (
            "conventions:\n  gpu_models:\n    - {label: 'nvidia.com/gpu product', value: x, ray_resource: A100}\n",
            "conventions.gpu_models.0.label: String should match pattern",
        ),
        (
            "conventions:\n  gpu_models:\n"
            "    - {label: nvidia.com/gpu.product, value: NVIDIA-L4, ray_resource: 'accelerator_type:L4'}\n"
            "    - {label: nvidia.com/gpu.product, value: NVIDIA-L4, ray_resource: L4}\n",
            "NVIDIA-L4 is mapped to both accelerator_type:L4 and L4",
        ),
        ("conventions:\n  gpu_models:\n    - {label: a, value: b}\n", "ray_resource: Field required"),
    ]:
        config.write_text(body, encoding="utf-8")
        with pytest.raises(ConfigError, match=re.escape(message)):
            load_config(config)
        assert main(["lint", str(SAMPLES[0]), "--config", str(config)]) == 2
        assert message in capsys.readouterr().err
    config.write_text("conventions:\n  # gpu_models: []\n", encoding="utf-8")
    assert load_config(config).conventions.gpu_models == []


# The live cluster ---------------------------------------------------------------------------------


def test_kuberay_samples_against_the_live_nodes(live: tuple[KubeAPI, Path]) -> None:
    _, kubeconfig = live
    code, report = _json(["lint", *map(str, SAMPLES), "--cluster", "lint-target", *_target(kubeconfig)])
    found = sorted((f["rule"], f["title"]) for f in report["findings"])
    # The cluster has CPU and A100 (40GB) pools: no T4 pool, no TPU slices. Every group fits.
    assert found == [
        (
            "k8s-group-gpu-label-on-no-node",
            "Group head selects GPU model nvidia-tesla-t4, which no node carries",
        ),
        (
            "k8s-group-label-on-no-node",
            "Group tpu-group selects cloud.google.com/gke-tpu-accelerator=tpu-v6e-slice, which no node has",
        ),
        (
            "k8s-group-label-on-no-node",
            "Group tpu-group selects cloud.google.com/gke-tpu-topology=2x2, which no node has",
        ),
    ]
    t4 = next(f for f in report["findings"] if f["rule"] == "k8s-group-gpu-label-on-no-node")
    assert (
        "values of cloud.google.com/gke-accelerator on the nodes: nvidia-tesla-a100"
        in t4["evidence"][1]["text"]
    )
    assert code == 1
    assert report["errors"] == []


def test_the_live_nodes_are_read_page_by_page_in_one_list(
    live: tuple[KubeAPI, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    api, kubeconfig = live
    monkeypatch.setattr("bot.collect.kubernetes.PAGE_SIZE", 2)
    api.requests.clear()
    path = CASES / "k8s-group-gpu-label-on-no-node" / "quiet" / "a100-40gb-as-the-nodes-say.yaml"
    code, report = _json(["lint", str(path), "--cluster", "lint-target", *_target(kubeconfig)])
    assert (code, report["findings"]) == (0, [])
    pages = [r for r in api.requests if r.path == "/api/v1/nodes"]
    # Five nodes, two a page; the A100 nodes come last, so every page was needed.
    assert len(pages) == 3
    assert all("limit=2" in r.query for r in pages)
    assert all("continue=" in r.query for r in pages[1:])
    assert len(api.requests) == 3  # nothing but the node list


@pytest.mark.parametrize("status", [403, 500])
def test_nodes_that_cannot_be_read_are_a_finding_and_fail_the_lint(status: int, tmp_path: Path) -> None:
    sample = str(FIXTURES / "kuberay-samples" / "ray-cluster.sample.yaml")
    with serve(
        ObjectStore.from_bundle(cluster.healthy()), faults=[Fault(r"^/api/v1/nodes$", status=status)]
    ) as api:
        args = [
            "lint",
            sample,
            "--cluster",
            "lint-target",
            *_target(api.kubeconfig(tmp_path)),
            "--fail-on",
            "critical",
        ]
        code, report = _json(args)
        _, text = _run(args)
        _, sarif = _run([*args, "--format", "sarif"])
    (finding,) = report["findings"]
    assert finding["rule"] == "collection-failed"
    assert finding["code"] == default_catalogue()["collection-failed"].code
    assert finding["subject"] == {"kind": "Collection", "name": "kubernetes nodes", "namespace": None}
    assert f"cannot list nodes: HTTP {status}: " in finding["evidence"][0]["text"]
    assert [e["source"] for e in report["errors"]] == ["kubernetes nodes"]
    # A check that could not run fails the lint, whatever --fail-on says.
    assert code == 1
    lines = text.splitlines()
    assert (
        lines[0]
        == "kubernetes nodes: warning RD0001 collection-failed: raydiag could not read kubernetes nodes"
    )
    assert "check failed" not in text  # said once, as the finding
    if status == 403:
        assert (
            'nodes is forbidden: User "system:serviceaccount:raydiag:raydiag"'
            in finding["evidence"][0]["text"]
        )
    (sarif_run,) = json.loads(sarif)["runs"]
    assert sarif_run["invocations"][0]["executionSuccessful"] is False
    assert sarif_run["results"][0]["ruleId"] == "RD0001"
    assert sarif_run["results"][0]["locations"] == [
        {"logicalLocations": [{"name": "kubernetes nodes", "kind": "resource"}]}
    ]


def test_a_hung_api_server_costs_the_deadline_not_more(tmp_path: Path) -> None:
    sample = str(FIXTURES / "kuberay-samples" / "ray-cluster.sample.yaml")
    with serve(
        ObjectStore.from_bundle(cluster.healthy()), faults=[Fault(r"^/api/v1/nodes$", delay_s=30)]
    ) as api:
        started = time.monotonic()
        code, report = _json(
            [
                "lint",
                sample,
                "--cluster",
                "lint-target",
                *_target(api.kubeconfig(tmp_path)),
                "--deadline",
                "1",
            ]
        )
        took = time.monotonic() - started
        api.stop()
    assert took < 10
    assert code == 1
    assert [f["rule"] for f in report["findings"]] == ["collection-failed"]
    assert "timed out" in report["findings"][0]["evidence"][0]["text"]


def test_the_cluster_and_its_conventions_from_the_config(live: tuple[KubeAPI, Path], tmp_path: Path) -> None:
    _, kubeconfig = live
    config = tmp_path / "raydiag.yaml"
    settings = yaml.safe_load(CONVENTIONS.read_text(encoding="utf-8"))
    settings["clusters"] = [{"name": "gpu-prod", "kubeconfig": str(kubeconfig), "context": "loopback"}]
    config.write_text(yaml.safe_dump(settings), encoding="utf-8")
    path = CASES / "k8s-group-gpu-label-on-no-node" / "fires" / "a100-80gb-on-a-40gb-cluster.yaml"
    code, report = _json(["lint", str(path), "--config", str(config), "--cluster", "gpu-prod"])
    assert code == 1
    assert {f["rule"] for f in report["findings"]} == {"k8s-group-gpu-label-on-no-node"}
    assert main(["lint", str(path), "--config", str(config), "--cluster", "other"]) == 2


def test_credentials_that_cannot_be_loaded_are_a_finding(tmp_path: Path) -> None:
    sample = str(FIXTURES / "kuberay-samples" / "ray-cluster.sample.yaml")
    code, report = _json(["lint", sample, "--cluster", "x", "--kubeconfig", str(tmp_path / "missing")])
    assert code == 1
    assert [(f["rule"], f["subject"]["name"]) for f in report["findings"]] == [
        ("collection-failed", "kubernetes config")
    ]
