"""`raydiag lint`: manifests checked before they deploy, with the catalogue's rules and codes.

KubeRay's own samples (copied with their source and commit in tests/fixtures/lint/kuberay-samples/)
must give no finding; each file of tests/fixtures/lint/broken/ is one of them with one defect, named
after the rule that must find it, and nothing else may fire on it. The contract: exit 1 when a
finding reaches --fail-on (default warning), 0 otherwise, 2 for bad usage; --format json is the
diagnosis JSON of `explain`; --format sarif is SARIF 2.1.0.
"""

from __future__ import annotations

import dataclasses
import io
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from bot.catalogue import default_catalogue
from bot.classify.detectors.templates import unknown_gpu_name
from bot.classify.registry import DETECTORS
from bot.cli import main, run
from bot.collect.manifests_lint import ManifestError, read_manifests
from tests.cli.test_cli import FINDING_KEYS

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "lint"
SAMPLES = sorted((FIXTURES / "kuberay-samples").glob("*.yaml"))
BROKEN = sorted((FIXTURES / "broken").glob("*.yaml"))


def _run(args: list[str], stdin: str = "") -> tuple[int, str]:
    out = io.StringIO()
    source = io.TextIOWrapper(io.BytesIO(stdin.encode()), encoding="utf-8")
    code = run(args, source, out)
    return code, out.getvalue()


def _json(args: list[str], stdin: str = "") -> tuple[int, dict[str, Any]]:
    code, text = _run([*args, "--format", "json"], stdin)
    report: dict[str, Any] = json.loads(text)
    return code, report


def test_the_fixtures_are_there() -> None:
    assert len(SAMPLES) >= 8
    assert {p.stem for p in BROKEN} >= {
        "ray-group-gpu-model-mismatch",
        "ray-group-gpu-model-undeclared",
        "ray-start-params-hide-gpu",
        "ray-start-params-overstate-gpu",
        "k8s-group-unknown-gpu-resource",
        "k8s-group-gpu-taint-untolerated",
    }
    for path in SAMPLES:
        header = path.read_text(encoding="utf-8").splitlines()[:2]
        assert "github.com/ray-project/kuberay, ray-operator/config/samples/" in header[0], path
        assert "commit" in header[1] and "Apache-2.0" in header[1], path


@pytest.mark.parametrize("path", SAMPLES, ids=[p.name for p in SAMPLES])
def test_kuberay_samples_give_no_finding(path: Path) -> None:
    code, report = _json(["lint", str(path)])
    assert report["findings"] == [], [f["rule"] for f in report["findings"]]
    assert report["errors"] == []
    assert code == 0
    # Each sample holds a Ray object that was read, not skipped.
    assert read_manifests(path.read_text(encoding="utf-8"), str(path))


def test_all_samples_at_once_through_their_directory() -> None:
    code, text = _run(["lint", str(FIXTURES / "kuberay-samples")])
    assert code == 0
    assert (
        text.strip().splitlines()[-1]
        == f"No findings in {len(SAMPLES)} Ray object(s) of {len(SAMPLES)} file(s)."
    )


@pytest.mark.parametrize("path", BROKEN, ids=[p.stem for p in BROKEN])
def test_each_broken_manifest_gives_its_rule(path: Path) -> None:
    code, report = _json(["lint", str(path)])
    rules = [f["rule"] for f in report["findings"]]
    assert rules == [path.stem]
    finding = report["findings"][0]
    rule = default_catalogue()[path.stem]
    assert finding["code"] == rule.code
    assert finding["cause"] == rule.cause
    assert code == 1  # every rule is at least a warning, the default --fail-on
    # The first evidence line says where: the file and the line of the object's metadata.name.
    where = finding["evidence"][0]
    assert where["source"] == "manifest"
    location, obj = where["text"].split(" ")
    file_name, line = location.rsplit(":", 1)
    assert file_name == str(path)
    name = obj.split("/", 1)[1]
    assert path.read_text(encoding="utf-8").splitlines()[int(line) - 1].strip() == f"name: {name}"
    assert finding["subject"]["name"] == name


@pytest.mark.parametrize(
    ("path", "code"),
    [
        (FIXTURES / "broken" / "ray-group-gpu-model-mismatch.yaml", 0),  # a warning
        (FIXTURES / "broken" / "ray-start-params-hide-gpu.yaml", 1),  # critical
    ],
)
def test_fail_on_critical_ignores_warnings(path: Path, code: int) -> None:
    assert _run(["lint", str(path), "--fail-on", "critical"])[0] == code
    assert _run(["lint", str(path), "--fail-on", "warning"])[0] == 1


def test_stdin_gives_the_same_findings_as_the_file() -> None:
    path = FIXTURES / "broken" / "k8s-group-unknown-gpu-resource.yaml"
    code, from_stdin = _json(["lint", "-"], stdin=path.read_text(encoding="utf-8"))
    _, from_file = _json(["lint", str(path)])
    assert code == 1
    assert [f["rule"] for f in from_stdin["findings"]] == [f["rule"] for f in from_file["findings"]]
    assert from_stdin["findings"][0]["evidence"][0]["text"].startswith("<stdin>:")
    assert from_stdin["findings"][0]["evidence"][1:] == from_file["findings"][0]["evidence"][1:]


def test_a_directory_and_files_together_each_file_once() -> None:
    broken = FIXTURES / "broken"
    code, report = _json(["lint", str(broken), str(BROKEN[0]), str(FIXTURES / "kuberay-samples")])
    assert code == 1
    assert sorted(f["rule"] for f in report["findings"]) == sorted(p.stem for p in BROKEN)


HELM_TEMPLATE = """\
---
# Source: ray-cluster/templates/configmap.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: code
data:
  main.py: print(1)
---
# Source: ray-cluster/templates/raycluster-cluster.yaml
apiVersion: ray.io/v1
kind: RayCluster
metadata:
  labels:
    helm.sh/chart: ray-cluster-1.4.0
  name: release-kuberay
  namespace: ml
spec:
  headGroupSpec:
    rayStartParams: {}
    template:
      spec:
        containers:
        - name: ray-head
          image: rayproject/ray:2.52.0
  workerGroupSpecs:
  - groupName: a100
    rayStartParams:
      num-gpus: "0"
    template:
      spec:
        containers:
        - name: ray-worker
          resources:
            limits:
              nvidia.com/gpu: 2
---
apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: on-existing-cluster
spec:
  entrypoint: python main.py
  clusterSelector:
    ray.io/cluster: release-kuberay
---
apiVersion: v1
kind: List
items:
- apiVersion: ray.io/v1
  kind: RayService
  metadata:
    name: listed
  spec:
    rayClusterConfig:
      workerGroupSpecs:
      - groupName: typo
        template:
          spec:
            containers:
            - name: ray-worker
              resources:
                limits:
                  nvidia.com/GPU: 1
- apiVersion: cluster.ray.io/v1
  kind: RayCluster
  metadata:
    name: ray-1-operator
  spec:
    podTypes: []
"""


def test_multi_document_output_of_helm_template() -> None:
    manifests = read_manifests(HELM_TEMPLATE, "rendered.yaml")
    # The ConfigMap, the RayJob on an existing cluster and the Ray 1.x operator's object are skipped.
    assert [(m.label, m.line, m.namespace) for m in manifests] == [
        ("RayCluster/release-kuberay", 16, "ml"),
        ("RayService/listed", 53, None),
    ]
    code, report = _json(["lint", "-"], stdin=HELM_TEMPLATE)
    assert code == 1
    found = {(f["rule"], f["evidence"][0]["text"]) for f in report["findings"]}
    assert found == {
        ("ray-start-params-hide-gpu", "<stdin>:16 RayCluster/release-kuberay"),
        ("k8s-group-unknown-gpu-resource", "<stdin>:53 RayService/listed"),
    }


def test_group_resources_count_as_kuberay_passes_them_to_ray() -> None:
    # KubeRay 1.5's group ``resources`` set num-gpus (and num-cpus, memory, custom resources).
    text = """\
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: declared}
spec:
  workerGroupSpecs:
  - groupName: a100
    resources: {GPU: "4", A100: "4", cpu: "8"}
    template:
      spec:
        nodeSelector: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}
        containers:
        - name: ray-worker
          resources: {limits: {nvidia.com/gpu: 4}}
"""
    (manifest,) = read_manifests(text, "f.yaml")
    params = manifest.cluster.worker_groups[0].ray_start_params
    assert params["num-gpus"] == "4"
    assert params["num-cpus"] == "8"
    assert json.loads(params["resources"].strip("'")) == {"A100": 4.0}
    assert _run(["lint", "-"], stdin=text)[0] == 0
    overstated = text.replace('GPU: "4"', 'GPU: "8"')
    code, report = _json(["lint", "-"], stdin=overstated)
    assert (code, [f["rule"] for f in report["findings"]]) == (1, ["ray-start-params-overstate-gpu"])


def test_no_ray_object_is_no_finding() -> None:
    code, text = _run(["lint", "-"], stdin="apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    assert code == 0
    assert text == "No RayCluster, RayJob or RayService in 1 file(s); nothing to check.\n"


def test_bad_usage_exits_2_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    not_yaml = tmp_path / "broken.yaml"
    not_yaml.write_text("kind: RayCluster\nspec: [unclosed\n", encoding="utf-8")
    for args, message in [
        (["lint", str(not_yaml)], f"{not_yaml}: not YAML (line 3)"),
        (["lint", str(tmp_path / "missing.yaml")], "no such file or directory"),
        (["lint", "-", "-"], "may be given once"),
        (["lint"], "the following arguments are required: PATH"),
        (["lint", str(not_yaml), "--fail-on", "info"], "invalid choice: 'info'"),
    ]:
        assert main(args) == 2, args
        err = capsys.readouterr().err
        assert err.startswith("raydiag: error: ") and message in err, err
        assert err.count("\n") == 1, err


def test_not_yaml_is_an_error_not_a_finding() -> None:
    with pytest.raises(ManifestError, match="not YAML"):
        read_manifests("a: [b\n", "x.yaml")
    with pytest.raises(ManifestError, match="not YAML"):
        read_manifests("key: value\n\tbad: tab\n", "x.yaml")


def test_text_output_names_file_line_code_and_fix() -> None:
    path = FIXTURES / "broken" / "ray-start-params-overstate-gpu.yaml"
    code, text = _run(["lint", str(path)])
    lines = text.splitlines()
    assert code == 1
    assert lines[0] == (
        f"{path}:8: critical RD0405 ray-start-params-overstate-gpu RayService/stable-diffusion: "
        "Worker group gpu-group tells Ray it has 2 GPU(s), but its Pods get 1"
    )
    assert (
        lines[1].strip()
        == "raycluster stable-diffusion group gpu-group: nvidia.com/gpu limit 1; rayStartParams num-gpus: '2'"
    )
    assert lines[2].strip().startswith("fix: Remove `num-gpus`")
    assert lines[-1] == "1 finding(s) in 1 Ray object(s) of 1 file(s)."
    _, chinese = _run(["lint", str(path), "--lang", "zh"])
    assert "worker 组 gpu-group 告诉 Ray 有 2 块 GPU" in chinese
    assert chinese.splitlines()[-1] == "1 个文件中的 1 个 Ray 对象共有 1 项发现。"


def test_json_is_the_diagnosis_json_of_explain() -> None:
    path = FIXTURES / "broken" / "ray-start-params-hide-gpu.yaml"
    _, lint = _json(["lint", str(path)])
    _, explain = _json(["explain", "-"], stdin="no output of any tool\n")
    assert set(lint) == set(explain) == {"cluster", "verdict", "findings", "errors", "similar"}
    assert lint["similar"] == []  # manifests are not pastes: nothing to liken
    assert lint["cluster"] == "ray-serve-llm"
    assert lint["verdict"]["layer"] == "ray"
    assert set(lint["findings"][0]) == FINDING_KEYS


# The properties SARIF 2.1.0 (OASIS, sarif-schema-2.1.0.json) requires, and the value sets it
# fixes, for the objects raydiag writes; transcribed from the standard so no schema is downloaded.
_MESSAGE = {"type": "object", "anyOf": [{"required": ["text"]}, {"required": ["id"]}]}
SARIF_REQUIRED = {
    "type": "object",
    "required": ["version", "runs"],
    "properties": {
        "version": {"enum": ["2.1.0"]},
        "$schema": {"type": "string"},
        "runs": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["tool"],
                "properties": {
                    "tool": {
                        "type": "object",
                        "required": ["driver"],
                        "properties": {
                            "driver": {
                                "type": "object",
                                "required": ["name"],
                                "properties": {
                                    "name": {"type": "string"},
                                    "rules": {
                                        "type": "array",
                                        "uniqueItems": True,
                                        "items": {
                                            "type": "object",
                                            "required": ["id"],
                                            "properties": {
                                                "id": {"type": "string"},
                                                "shortDescription": _MESSAGE,
                                                "fullDescription": _MESSAGE,
                                                "defaultConfiguration": {
                                                    "type": "object",
                                                    "properties": {
                                                        "level": {
                                                            "enum": ["none", "note", "warning", "error"]
                                                        }
                                                    },
                                                },
                                            },
                                        },
                                    },
                                },
                            }
                        },
                    },
                    "invocations": {
                        "type": "array",
                        "items": {"type": "object", "required": ["executionSuccessful"]},
                    },
                    "results": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["message"],
                            "properties": {
                                "message": _MESSAGE,
                                "ruleId": {"type": "string"},
                                "ruleIndex": {"type": "integer", "minimum": -1},
                                "level": {"enum": ["none", "note", "warning", "error"]},
                                "locations": {
                                    "type": "array",
                                    "items": {
                                        "type": "object",
                                        "properties": {
                                            "physicalLocation": {
                                                "type": "object",
                                                "anyOf": [
                                                    {"required": ["address"]},
                                                    {"required": ["artifactLocation"]},
                                                ],
                                                "properties": {
                                                    "artifactLocation": {
                                                        "type": "object",
                                                        "properties": {"uri": {"type": "string"}},
                                                    },
                                                    "region": {
                                                        "type": "object",
                                                        "properties": {
                                                            "startLine": {"type": "integer", "minimum": 1}
                                                        },
                                                    },
                                                },
                                            }
                                        },
                                    },
                                },
                            },
                        },
                    },
                },
            },
        },
    },
}


def _sarif(args: list[str], stdin: str = "") -> tuple[int, dict[str, Any]]:
    code, text = _run([*args, "--format", "sarif"], stdin)
    log: dict[str, Any] = json.loads(text)
    jsonschema.validate(log, SARIF_REQUIRED)
    return code, log


def test_sarif_has_one_run_with_the_rules_that_fired_and_located_results(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(REPO)  # relative paths, as in CI, give relative URIs
    code, log = _sarif(["lint", "tests/fixtures/lint/broken", "tests/fixtures/lint/kuberay-samples"])
    assert code == 1
    (sarif_run,) = log["runs"]
    driver = sarif_run["tool"]["driver"]
    assert driver["name"] == "raydiag"
    catalogue = default_catalogue()
    fired = {catalogue[p.stem].code: p.relative_to(REPO) for p in BROKEN}
    assert [r["id"] for r in driver["rules"]] == sorted(fired)
    assert len(sarif_run["results"]) == len(BROKEN)
    for result in sarif_run["results"]:
        rule = driver["rules"][result["ruleIndex"]]
        assert rule["id"] == result["ruleId"]
        severity = catalogue[rule["name"]].severity
        assert result["level"] == {"critical": "error", "warning": "warning"}[severity]
        assert rule["defaultConfiguration"]["level"] == result["level"]
        physical = result["locations"][0]["physicalLocation"]
        path = fired[result["ruleId"]]
        assert physical["artifactLocation"]["uri"] == path.as_posix()
        line = (REPO / path).read_text(encoding="utf-8").splitlines()[physical["region"]["startLine"] - 1]
        assert line.strip().startswith("name: ")
        assert result["message"]["text"]
    assert sarif_run["invocations"] == [{"executionSuccessful": True}]


def test_sarif_of_a_clean_run_and_of_stdin(tmp_path: Path) -> None:
    code, log = _sarif(["lint", str(FIXTURES / "kuberay-samples")])
    assert code == 0
    assert log["runs"][0]["results"] == []
    assert log["runs"][0]["tool"]["driver"]["rules"] == []
    text = (FIXTURES / "broken" / "k8s-group-gpu-taint-untolerated.yaml").read_text(encoding="utf-8")
    _, log = _sarif(["lint", "-"], stdin=text)
    (result,) = log["runs"][0]["results"]
    # Standard input has no file to point at: the object is named instead.
    assert result["locations"] == [
        {"logicalLocations": [{"name": "RayCluster/raycluster-kuberay", "kind": "object"}]}
    ]
    relative = tmp_path / "dir with space" / "m.yaml"
    relative.parent.mkdir()
    relative.write_text(text, encoding="utf-8")
    _, log = _sarif(["lint", str(relative)])
    uri = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "file://" + str(relative).replace(" ", "%20")


@pytest.mark.parametrize(
    ("name", "unknown"),
    [
        ("nvidia.com/gpu", False),
        ("nvidia.com/mig-1g.10gb", False),
        ("nvidia.com/mig-1g.10gb+me", False),
        ("nvidia.com/gpu.shared", False),
        ("nvidia.com/gpumem", False),  # HAMi
        ("amd.com/gpu", False),
        ("aliyun.com/gpu-mem", False),
        ("google.com/tpu", False),
        ("cpu", False),
        ("nvidia.com/gpus", True),
        ("nvidia.com/GPU", True),
        ("nvidia.com/mig-1g5gb", True),
        ("nvida.com/gpu", True),
        ("nvidia/gpu", True),
        ("envdata.io/nvd", False),
        ("nvidia-gpu", True),
        ("gpu", True),
        ("alpha.kubernetes.io/nvidia-gpu", True),
    ],
)
def test_gpu_names_no_nvidia_strategy_advertises(name: str, unknown: bool) -> None:
    assert unknown_gpu_name(name) is unknown


def test_the_pre_commit_hook_runs_lint_on_yaml_files() -> None:
    (hook,) = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert hook["id"] == "raydiag-lint"
    assert hook["entry"] == "raydiag lint"
    assert hook["language"] == "python"
    files = re.compile(hook["files"])
    assert files.search("deploy/ray/cluster.yaml") and files.search("k8s/job.yml")
    assert not files.search("README.md") and not files.search("values.yaml.tpl")


def test_lint_runs_as_a_process_with_its_exit_code() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bot", "lint", str(FIXTURES / "broken" / "ray-start-params-hide-gpu.yaml")],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert " critical RD0402 ray-start-params-hide-gpu " in done.stdout
    assert done.stderr == ""


def test_a_check_that_fails_fails_the_lint(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(ctx: object, rule: object) -> list[object]:
        raise KeyError("odd data")

    spec = DETECTORS["group_template"]
    monkeypatch.setitem(DETECTORS, "group_template", dataclasses.replace(spec, func=broken))
    sample = FIXTURES / "kuberay-samples" / "ray-cluster.sample.yaml"
    code, text = _run(["lint", str(sample), "--fail-on", "critical"])
    assert code == 1
    assert "check failed: rule " in text and "odd data" in text
    _, log = _sarif(["lint", str(sample)])
    (invocation,) = log["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is False
    assert invocation["toolExecutionNotifications"][0]["level"] == "error"


def test_tpu_and_other_vendors_groups_are_not_judged_as_nvidia() -> None:
    text = """\
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: accelerators}
spec:
  workerGroupSpecs:
  - groupName: tpu
    template:
      spec:
        nodeSelector: {accelerator: tpu-v4-podslice}
        containers:
        - name: ray-worker
          resources: {limits: {google.com/tpu: 4}}
  - groupName: amd
    template:
      spec:
        nodeSelector: {gpu-type: mi300x}
        containers:
        - name: ray-worker
          resources: {limits: {amd.com/gpu: 8}}
  - groupName: shared
    rayStartParams: {num-gpus: "1"}
    template:
      spec:
        nodeSelector: {nvidia.com/gpu.present: "true"}
        containers:
        - name: ray-worker
          resources: {limits: {aliyun.com/gpu-mem: 16}}
"""
    code, report = _json(["lint", "-"], stdin=text)
    assert (code, report["findings"]) == (0, [])


def test_lint_offers_no_namespace_or_dashboard_it_would_ignore(capsys: pytest.CaptureFixture[str]) -> None:
    # `--cluster` reads only the cluster's nodes: no RayCluster namespace or dashboard to choose.
    samples = str(Path(__file__).resolve().parents[1] / "fixtures" / "lint" / "kuberay-samples")
    for option in (["--namespace", "ml"], ["--dashboard-url", "http://ray:8265"]):
        assert main(["lint", samples, *option]) == 2
        assert f"unrecognized arguments: {option[0]}" in capsys.readouterr().err


def test_the_head_of_an_autoscaling_cluster_counts_kuberays_autoscaler_container() -> None:
    manifest = yaml.safe_load(
        (
            Path(__file__).resolve().parents[1]
            / "cases/k8s-group-exceeds-every-node/fires/head-and-its-autoscaler-past-the-node.yaml"
        ).read_text(encoding="utf-8")
    )
    [default] = read_manifests(yaml.safe_dump(manifest), "default.yaml")
    assert default.cluster.head is not None
    assert default.cluster.head.requests["cpu"] == 16.0  # 15.5 of its own and KubeRay's 0.5
    assert [c.name for c in default.cluster.head.containers] == ["ray-head"]  # the template's only
    # autoscalerOptions.resources replace the default wholesale; limits stand in for requests.
    manifest["spec"]["autoscalerOptions"] = {"resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}
    [sized] = read_manifests(yaml.safe_dump(manifest), "sized.yaml")
    assert sized.cluster.head is not None and sized.cluster.head.requests["cpu"] == 16.5
    manifest["spec"]["enableInTreeAutoscaling"] = False
    [off] = read_manifests(yaml.safe_dump(manifest), "off.yaml")
    assert off.cluster.head is not None and off.cluster.head.requests["cpu"] == 15.5
    # Workers get no autoscaler.
    assert (
        off.cluster.worker_groups[0].requests["cpu"] == sized.cluster.worker_groups[0].requests["cpu"] == 4.0
    )
