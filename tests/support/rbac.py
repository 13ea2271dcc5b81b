"""The shipped ServiceAccount on a real control plane (tests/support/controlplane.py): deploy/base's
RBAC objects applied as ``kubectl kustomize`` renders them, and a kubeconfig holding a token minted
for a ServiceAccount of the bot's namespace, so a test reads Kubernetes with exactly what the
shipped manifests grant."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.deploy.manifests import BOT_NAMESPACE, render
from tests.support.controlplane import ControlPlane

SERVICE_ACCOUNT = "raydiag"
RBAC_KINDS = ("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")


def install_shipped_rbac(plane: ControlPlane) -> list[str]:
    """deploy/base's ServiceAccount and RBAC objects, as ``kubectl kustomize`` renders them."""
    from kubernetes import utils

    plane.namespace(BOT_NAMESPACE)
    applied = []
    for body in render("base"):
        if body["kind"] in RBAC_KINDS:
            utils.create_from_dict(plane.client(), dict(body), namespace=BOT_NAMESPACE)  # type: ignore[no-untyped-call]
            applied.append(f"{body['kind']}/{body['metadata']['name']}")
    return applied


def service_account_kubeconfig(plane: ControlPlane, path: Path, account: str = SERVICE_ACCOUNT) -> Path:
    """A kubeconfig holding a token minted for a ServiceAccount of the bot's namespace by the
    TokenRequest API (audiences left to the API server: its own)."""
    from kubernetes import client

    core: Any = client.CoreV1Api(plane.client())
    request = client.AuthenticationV1TokenRequest(
        spec=client.V1TokenRequestSpec(audiences=[], expiration_seconds=3600)
    )
    token = core.create_namespaced_service_account_token(account, BOT_NAMESPACE, body=request).status.token
    return plane.write_kubeconfig(path, account, token)
