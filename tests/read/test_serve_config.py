"""Ray Serve's config (``serve deploy`` YAML, a RayService's ``serveConfigV2``): each deployment's
replicas as requests, told apart from ``serve status``, joined with the cluster like code."""

from __future__ import annotations

from bot.collect.paste import parse_paste
from bot.read.found import Found
from bot.read.serve_config import read_serve_config, read_serve_config_text
from tests.support.corpus import HEALTHY_RAY_STATUS

CONFIG = """applications:
- name: embeddings
  import_path: embed:app
  deployments:
  - name: Embedder
    num_replicas: 2
    ray_actor_options:
      num_gpus: 2
      resources: {"cache": 1}
  - name: Router
  - name: Scaler
    num_replicas: auto
    ray_actor_options: {num_cpus: 0, num_gpus: 0.5}
  - name: Broken
    ray_actor_options: {num_gpus: "two"}
"""

RAYSERVICE = """apiVersion: ray.io/v1
kind: RayService
metadata:
  name: embed
  namespace: ml
spec:
  serveConfigV2: |
    applications:
    - name: embeddings
      import_path: embed:app
      deployments:
      - name: Embedder
        num_replicas: 3
        ray_actor_options:
          num_gpus: 1
"""


def test_each_deployment_is_its_replicas_of_its_actor_options() -> None:
    import yaml

    found = Found()
    assert read_serve_config(yaml.safe_load(CONFIG), found)
    embedder, router, scaler = found.code.requests
    assert (embedder.shape, embedder.instances) == ({"CPU": 1.0, "GPU": 2.0, "cache": 1.0}, 2)
    assert embedder.source == "serve config" and "num_gpus: 2" in embedder.quote
    assert (router.shape, router.instances) == ({"CPU": 1.0}, 1)  # Serve's one CPU per replica
    assert (scaler.shape, scaler.instances) == ({"GPU": 0.5}, None)
    assert found.code.unknown == ["Broken ray_actor_options num_gpus='two'"]


def test_serve_status_is_not_a_config() -> None:
    found = Found()
    assert not read_serve_config({"applications": {"app1": {"status": "RUNNING"}}}, found)
    assert not read_serve_config_text("applications: [", found)
    assert found.code.requests == []


def test_a_rayservice_serve_config_is_read_from_its_string() -> None:
    found = Found()
    assert read_serve_config_text(RAYSERVICE.split("|\n", 1)[1].replace("\n    ", "\n").strip(), found)
    snapshot = parse_paste(RAYSERVICE)
    assert snapshot.kubernetes is not None and snapshot.kubernetes.rayservices
    assert "ray serve config" in snapshot.notes


def test_a_pasted_config_is_judged_against_the_pasted_cluster() -> None:
    ray = parse_paste(CONFIG + "\n" + HEALTHY_RAY_STATUS.read_text(encoding="utf-8")).ray
    assert ray is not None
    assert ray.demands == []
    assert {d.code_source for d in ray.declared_demands} == {"serve config"}
