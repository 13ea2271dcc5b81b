"""Both layers as Prometheus series, and the alert rules shipped with them (issue 15, part 1).

Each scenario is diagnosed through the one ``Diagnoser`` and ``/metrics`` is read back with
prometheus-client's own parser: the series carry the figures of both layers, a layer that was not
read has no series (not 0), and a second diagnosis replaces the first. The shipped rules pass
``promtool check rules`` and ``promtool test rules`` (Debian's ``prometheus`` package, ``make
prometheus``), the PrometheusRule holds the same rules, and a real Prometheus scrapes the bot's
``/metrics`` on loopback and answers a query for ``raydiag_gpus``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from bot.config import ClusterConfig, Config
from bot.diagnoser import Diagnoser
from bot.observe.metrics import Metrics
from bot.slack.server import SlackHTTPServer
from tests.slack.test_bot_scenarios import recorded
from tests.support import scenarios
from tests.support.bolt_server import serving
from tests.support.bot_process import free_port, stop
from tests.support.cluster import CLUSTER, NS
from tests.support.waiting import eventually

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "deploy" / "prometheus" / "raydiag-rules.yaml"
OPERATOR_RULES = ROOT / "deploy" / "prometheus" / "prometheusrule.yaml"
CLUSTERS = Config(clusters=[ClusterConfig(name="gpu-prod", namespace=NS, raycluster=CLUSTER)])
Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def _samples(metrics: Metrics) -> Samples:
    body, _ = metrics.exposition()
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(body.decode())
        for sample in family.samples
    }


def _diagnosed(bundle: Any, metrics: Metrics | None = None) -> Metrics:
    metrics = metrics or Metrics()
    diagnoser = Diagnoser(CLUSTERS, recorded(bundle), metrics=metrics)
    try:
        diagnoser.run(CLUSTERS.clusters[0], NS, "slash", timeout=60)
    finally:
        diagnoser.shutdown()
    return metrics


def _gpus(samples: Samples, stage: str, model: str = "A100") -> float | None:
    key = ("raydiag_gpus", (("cluster", "gpu-prod"), ("model", model), ("stage", stage)))
    return samples.get(key)


def _one(samples: Samples, name: str, **labels: str) -> float | None:
    return samples.get((name, tuple(sorted({"cluster": "gpu-prod", **labels}.items()))))


def test_a_healthy_cluster_exports_both_layers_in_agreement() -> None:
    samples = _samples(_diagnosed(scenarios.healthy()))
    stages = [
        _gpus(samples, s)
        for s in ("allocatable", "given_to_ray_pods", "registered_in_ray", "in_use", "pending_demand")
    ]
    assert stages == [8.0, 8.0, 8.0, 1.0, 0.0]
    # Four Ready workers, five Ray nodes alive (the head included): every worker joined.
    assert _one(samples, "raydiag_ray_worker_pods_ready") == 4.0
    assert _one(samples, "raydiag_ray_nodes_alive") == 5.0
    assert _one(samples, "raydiag_gpu_nodes_without_allocatable") == 0.0
    assert not [k for k in samples if k[0] == "raydiag_findings"]


@pytest.mark.parametrize(
    ("case", "check"),
    [
        (
            "gpu_worker_runs_but_never_joined",
            lambda s: _one(s, "raydiag_ray_worker_pods_ready") > _one(s, "raydiag_ray_nodes_alive") - 1,
        ),
        ("ray_node_reports_no_gpu", lambda s: _gpus(s, "given_to_ray_pods") > _gpus(s, "registered_in_ray")),
        ("gpu_node_with_no_gpu_resource", lambda s: _one(s, "raydiag_gpu_nodes_without_allocatable") >= 1),
        ("actor_of_finished_job_keeps_gpus", lambda s: _one(s, "raydiag_ray_gpu_actors") >= 1),
        (
            "eight_gpu_task_on_four_gpu_nodes",
            lambda s: _one(s, "raydiag_ray_pending_demands", shape="gpu") >= 1,
        ),
        (
            "third_gpu_worker_no_free_gpu",
            lambda s: _one(s, "raydiag_findings", cause="1", severity="critical") == 1,
        ),
    ],
)
def test_a_broken_cluster_shows_its_cause_in_the_series(case: str, check: Callable[[Samples], bool]) -> None:
    bundle = getattr(scenarios, case)()
    samples = _samples(_diagnosed(bundle))
    assert check(samples), {
        k: v for k, v in samples.items() if k[0].startswith("raydiag_") and "cluster" in dict(k[1])
    }


def test_a_layer_not_read_has_no_series_and_a_new_diagnosis_replaces_the_old() -> None:
    metrics = _diagnosed(scenarios.healthy())
    assert _one(_samples(metrics), "raydiag_ray_nodes_alive") == 5.0
    # The dashboard refused: the Ray layer was not read, so its series go away (they are not 0).
    _diagnosed(scenarios.dashboard_connection_refused(), metrics)
    samples = _samples(metrics)
    assert _one(samples, "raydiag_ray_nodes_alive") is None
    assert _gpus(samples, "registered_in_ray") is None
    assert _gpus(samples, "allocatable") == 8.0  # the Kubernetes layer was read
    assert _one(samples, "raydiag_cluster_refreshed_timestamp_seconds") is not None


def test_labels_stay_bounded() -> None:
    samples = _samples(_diagnosed(scenarios.third_gpu_worker_no_free_gpu()))
    names = {
        label for (name, labels), _ in samples.items() if name.startswith("raydiag_") for label, _ in labels
    }
    assert "pod" not in names and "node" not in names
    ages = {dict(labels)["age"] for (name, labels), _ in samples.items() if name == "raydiag_pending_pods"}
    assert ages <= {"lt_5m", "5m_30m", "30m_2h", "gt_2h", "unknown"}


# --- the shipped rules -------------------------------------------------------------------------------


def _promtool() -> str:
    found = shutil.which("promtool")
    if found is None:
        pytest.fail("promtool is missing: run `make prometheus` (Debian's prometheus package)")
    return found


def test_the_rules_pass_promtool_check_and_their_tests() -> None:
    checked = subprocess.run(
        [_promtool(), "check", "rules", str(RULES)], capture_output=True, text=True, check=False
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "SUCCESS: 8 rules found" in checked.stdout
    tested = subprocess.run(
        [_promtool(), "test", "rules", str(Path(__file__).parent / "raydiag-rules.test.yaml")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "SUCCESS" in tested.stdout


def test_the_prometheusrule_holds_the_same_rules(tmp_path: Path) -> None:
    plain = yaml.safe_load(RULES.read_text(encoding="utf-8"))
    operator = yaml.safe_load(OPERATOR_RULES.read_text(encoding="utf-8"))
    assert operator["kind"] == "PrometheusRule" and operator["spec"] == plain
    extracted = tmp_path / "spec.yaml"
    extracted.write_text(yaml.safe_dump(operator["spec"]), encoding="utf-8")
    checked = subprocess.run(
        [_promtool(), "check", "rules", str(extracted)], capture_output=True, text=True, check=False
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_every_alert_names_its_command_and_cause() -> None:
    for group in yaml.safe_load(RULES.read_text(encoding="utf-8"))["groups"]:
        for rule in group["rules"]:
            notes = rule["annotations"]
            assert notes["raydiag_command"] == "/raydiag {{ $labels.cluster }}", rule["alert"]
            assert notes["cause"] in {str(n) for n in range(1, 11)}, rule["alert"]


# --- a real Prometheus scrapes the bot ---------------------------------------------------------------


@pytest.fixture
def metrics_server() -> Iterator[tuple[str, Metrics]]:
    metrics = _diagnosed(scenarios.ray_node_reports_no_gpu())
    # No Bolt app: Prometheus only asks GET /metrics.
    with serving(SlackHTTPServer(None, "127.0.0.1", 0, metrics=metrics.exposition)) as url:
        yield url, metrics


def _query(prometheus: str, expr: str) -> list[dict[str, Any]]:
    url = f"{prometheus}/api/v1/query?{urllib.parse.urlencode({'query': expr})}"
    with urllib.request.urlopen(url, timeout=5) as answer:
        result: list[dict[str, Any]] = json.loads(answer.read())["data"]["result"]
        return result


def test_a_real_prometheus_scrapes_the_series_and_loads_the_rules(
    metrics_server: tuple[str, Metrics],
) -> None:
    url, _ = metrics_server
    binary = shutil.which("prometheus")
    if binary is None:
        pytest.fail("prometheus is missing: run `make prometheus` (Debian's prometheus package)")
    target = url.removeprefix("http://")
    with tempfile.TemporaryDirectory(prefix="raydiag-prometheus-") as folder:
        root = Path(folder)
        config = {
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
            "rule_files": [str(RULES)],
            "scrape_configs": [{"job_name": "raydiag", "static_configs": [{"targets": [target]}]}],
        }
        (root / "prometheus.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
        port = free_port()
        log = (root / "prometheus.log").open("wb")
        process = subprocess.Popen(
            [
                binary,
                f"--config.file={root / 'prometheus.yml'}",
                f"--storage.tsdb.path={root / 'data'}",
                f"--web.listen-address=127.0.0.1:{port}",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        prometheus = f"http://127.0.0.1:{port}"
        try:

            def scraped() -> bool:
                try:
                    return bool(_query(prometheus, 'raydiag_gpus{stage="registered_in_ray"}'))
                except OSError:
                    return process.poll() is not None

            assert eventually(scraped, 60), (root / "prometheus.log").read_text()
            [registered] = _query(prometheus, 'raydiag_gpus{stage="registered_in_ray"}')
            [given] = _query(prometheus, 'raydiag_gpus{stage="given_to_ray_pods"}')
            assert registered["metric"]["cluster"] == "gpu-prod" and registered["metric"]["job"] == "raydiag"
            assert float(given["value"][1]) > float(registered["value"][1])
            # The rules are loaded, and the GPU alert is pending (it fires after 10 minutes).
            with urllib.request.urlopen(f"{prometheus}/api/v1/rules", timeout=5) as answer:
                groups = json.loads(answer.read())["data"]["groups"]
            names = {rule["name"] for group in groups for rule in group["rules"]}
            assert "RaydiagGpusNotRegisteredInRay" in names

            def pending() -> bool:
                with urllib.request.urlopen(f"{prometheus}/api/v1/alerts", timeout=5) as answer:
                    alerts = json.loads(answer.read())["data"]["alerts"]
                return any(
                    a["labels"]["alertname"] == "RaydiagGpusNotRegisteredInRay" and a["state"] == "pending"
                    for a in alerts
                )

            assert eventually(pending, 30)
        finally:
            stop(process)
            log.close()


def test_the_compound_demo_cluster_shows_each_of_its_causes() -> None:
    """The demo's broken cluster (its KubeRay state with Ray recorded on the same addresses)."""
    from bot.classify import classify
    from bot.demo import kuberay_state
    from bot.read.snapshot_file import parse_snapshot
    from tests.demo.test_demo import RECORDED_RAY

    answers = {
        path.stem: json.loads(path.read_text(encoding="utf-8"))
        for path in RECORDED_RAY.glob("*.json")
        if not path.stem.startswith("_")
    }
    metrics = Metrics()
    metrics.record_cluster(
        "gpu-prod", classify(parse_snapshot({**kuberay_state.load_state(), "ray": answers}))
    )
    samples = _samples(metrics)
    # Three Ready workers and four Ray nodes alive (head included): one worker never joined.
    assert _one(samples, "raydiag_ray_worker_pods_ready") == 3.0
    assert _one(samples, "raydiag_ray_nodes_alive") == 4.0
    assert _one(samples, "raydiag_gpu_nodes_without_allocatable") == 1.0
    assert _one(samples, "raydiag_ray_pending_demands", shape="gpu") == 6.0
    assert _one(samples, "raydiag_ray_gpu_actors") == 1.0
    causes = {dict(labels)["cause"] for (name, labels), _ in samples.items() if name == "raydiag_findings"}
    assert {"3", "5", "6", "7", "8"} <= causes
