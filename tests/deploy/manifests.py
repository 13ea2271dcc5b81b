"""Rendering the kustomizations under deploy/ the way an operator does: ``kubectl kustomize``.

The tests read the rendered objects, not the source files, so what they check is exactly what
``kubectl apply -k`` would send: patches applied, the ConfigMap's hashed name filled in, the
image from ``images:``.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
# Every directory an operator may apply, relative to deploy/.
OVERLAYS = ("overlays/http", "overlays/socket-mode", "overlays/postgres")
RENDERABLE = ("base", *OVERLAYS, "ray-namespace")
BOT_NAMESPACE = "raydiag"


@dataclass(frozen=True)
class Rendered:
    """The objects one kustomization renders to, in ``kubectl kustomize`` order."""

    source: str
    objects: tuple[Mapping[str, Any], ...]

    def of_kind(self, kind: str) -> list[Mapping[str, Any]]:
        return [o for o in self.objects if o.get("kind") == kind]

    def one(self, kind: str, name: str | None = None) -> Mapping[str, Any]:
        found = [o for o in self.of_kind(kind) if name is None or o["metadata"]["name"] == name]
        assert len(found) == 1, f"{self.source}: expected one {kind} {name or ''}, found {len(found)}"
        return found[0]

    def kinds(self) -> set[str]:
        return {str(o.get("kind")) for o in self.objects}

    def __iter__(self) -> Iterator[Mapping[str, Any]]:
        return iter(self.objects)


def kubectl() -> str:
    found = shutil.which("kubectl")
    if found is None:
        pytest.fail(
            "kubectl is not on PATH: these tests render deploy/ with `kubectl kustomize`, as an "
            "operator would; install kubectl (any version since 1.27 bundles kustomize v5)"
        )
    return found


@cache
def render(relative: str) -> Rendered:
    """``kubectl kustomize deploy/<relative>``, parsed; a failure shows kubectl's own message."""
    result = subprocess.run(
        [kubectl(), "kustomize", str(DEPLOY / relative)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if result.returncode != 0:
        pytest.fail(f"kubectl kustomize deploy/{relative} failed:\n{result.stderr.strip()}")
    objects = tuple(o for o in yaml.safe_load_all(result.stdout) if o)
    return Rendered(relative, objects)


def bot_container(rendered: Rendered) -> Mapping[str, Any]:
    deployment = rendered.one("Deployment", "raydiag")
    containers = deployment["spec"]["template"]["spec"]["containers"]
    return next(c for c in containers if c["name"] == "raydiag")


def env_of(container: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {entry["name"]: entry for entry in container.get("env", [])}


def mounted_file(rendered: Rendered, container: Mapping[str, Any], path: str) -> str:
    """The text of a file the container sees at ``path`` through a ConfigMap volume."""
    pod = rendered.one("Deployment", "raydiag")["spec"]["template"]["spec"]
    for mount in container.get("volumeMounts", []):
        directory = mount["mountPath"].rstrip("/") + "/"
        if not path.startswith(directory):
            continue
        volume = next(v for v in pod["volumes"] if v["name"] == mount["name"])
        assert "configMap" in volume, f"{path} is not mounted from a ConfigMap"
        config_map = rendered.one("ConfigMap", volume["configMap"]["name"])
        return str(config_map["data"][path[len(directory) :]])
    raise AssertionError(f"nothing is mounted at {path}")
