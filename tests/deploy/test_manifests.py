"""What `kubectl apply -k deploy/overlays/<x>` installs: valid Kubernetes 1.31 objects, a locked-down
bot Pod, replicas kept apart (two only with shared PostgreSQL state), Slack tokens referenced but never stored, and a config file the
bot accepts.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import kubernetes_validate  # type: ignore[import-untyped]
import pytest
import yaml
from sqlalchemy import make_url

from bot.cli import build_parser
from bot.config import load_config
from bot.probes.head import HEAD_PORTS
from tests.deploy.manifests import (
    BOT_NAMESPACE,
    DEPLOY,
    OVERLAYS,
    RENDERABLE,
    Rendered,
    bot_container,
    env_of,
    mounted_file,
    render,
)

# kubernetes-validate ships schemas for 1.25 through 1.37; 1.31 is the version the project targets.
KUBERNETES_VERSION = "1.31"
HTTP_OVERLAYS = ("base", "overlays/http", "overlays/postgres")
WAIVABLE = {"CKV_K8S_43", "CKV_K8S_38", "CKV_K8S_35"}
CLUSTER_SCOPED = {"Namespace", "ClusterRole", "ClusterRoleBinding"}


def pod_spec(rendered: Rendered) -> dict[str, Any]:
    spec: dict[str, Any] = rendered.one("Deployment", "raydiag")["spec"]["template"]["spec"]
    return spec


@pytest.mark.parametrize("source", RENDERABLE)
def test_every_object_is_valid_for_kubernetes_1_31(source: str) -> None:
    rendered = render(source)
    assert rendered.objects, f"deploy/{source} renders nothing"
    for obj in rendered:
        where = f"deploy/{source}: {obj['kind']} {obj['metadata']['name']}"
        try:
            # strict: an unknown field (a typo such as `readOnlyRootFilesytem`) is an error too
            kubernetes_validate.validate(dict(obj), KUBERNETES_VERSION, strict=True)
        except kubernetes_validate.ValidationError as error:
            path = ".".join(str(p) for p in error.path)
            pytest.fail(f"{where}: {path}: {error.message}")
        except kubernetes_validate.SchemaNotFoundError as error:
            pytest.fail(f"{where}: {error.message}")


@pytest.mark.parametrize(
    ("overlay", "adds", "removes"),
    [
        ("overlays/http", {"Ingress"}, set()),
        ("overlays/socket-mode", set(), set()),
        ("overlays/postgres", {"Ingress"}, set()),
    ],
)
def test_each_overlay_is_the_base_plus_what_its_mode_needs(
    overlay: str, adds: set[str], removes: set[str]
) -> None:
    base = render("base").kinds()
    assert base == {
        "Namespace",
        "ServiceAccount",
        "ClusterRole",
        "ClusterRoleBinding",
        "Role",
        "RoleBinding",
        "ConfigMap",
        "Deployment",
        "Service",
        "PodDisruptionBudget",
        "NetworkPolicy",
    }
    assert render(overlay).kinds() == (base | adds) - removes


@pytest.mark.parametrize("overlay", ["base", *OVERLAYS])
def test_everything_lands_in_the_raydiag_namespace(overlay: str) -> None:
    for obj in render(overlay):
        if obj["kind"] in CLUSTER_SCOPED:
            assert "namespace" not in obj["metadata"]
        else:
            assert obj["metadata"]["namespace"] == BOT_NAMESPACE, f"{obj['kind']} {obj['metadata']['name']}"


@pytest.mark.parametrize("overlay", ["base", *OVERLAYS])
def test_slack_tokens_are_referenced_never_stored(overlay: str) -> None:
    rendered = render(overlay)
    assert "Secret" not in rendered.kinds(), "a Secret with values must be created by hand, not shipped"
    env = env_of(bot_container(rendered))
    for name in ("SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_APP_TOKEN"):
        ref = env[name]["valueFrom"]["secretKeyRef"]
        assert (ref["name"], ref["key"]) == ("raydiag-slack", name)
    assert env["SLACK_BOT_TOKEN"]["valueFrom"]["secretKeyRef"].get("optional", False) is False
    text = yaml.safe_dump_all(list(rendered))
    for token_prefix in ("xoxb-", "xoxp-", "xapp-"):
        assert token_prefix not in text


@pytest.mark.parametrize("overlay", ["base", *OVERLAYS])
def test_the_bot_pod_runs_locked_down(overlay: str) -> None:
    rendered = render(overlay)
    pod = pod_spec(rendered)
    container = bot_container(rendered)
    pod_security, security = pod["securityContext"], container["securityContext"]
    assert pod_security["runAsNonRoot"] is True and pod_security["runAsUser"] >= 10000
    assert pod_security["seccompProfile"] == {"type": "RuntimeDefault"}
    assert security["readOnlyRootFilesystem"] is True
    assert security["allowPrivilegeEscalation"] is False
    assert security["privileged"] is False
    assert security["capabilities"] == {"drop": ["ALL"]}
    assert security["runAsNonRoot"] is True and security["runAsUser"] == pod_security["runAsUser"]
    assert not any(pod.get(flag) for flag in ("hostNetwork", "hostPID", "hostIPC"))
    # Writable places are emptyDirs (the root is read-only); the config is read-only.
    volumes = {v["name"]: v for v in pod["volumes"]}
    writable = {
        m["mountPath"]: volumes[m["name"]] for m in container["volumeMounts"] if not m.get("readOnly")
    }
    assert set(writable) == {"/tmp", "/var/lib/raydiag"}
    assert all("emptyDir" in v and v["emptyDir"].get("sizeLimit") for v in writable.values())
    assert not any("hostPath" in v for v in volumes.values())
    for kind in ("requests", "limits"):
        assert {"cpu", "memory"} <= set(container["resources"][kind]), kind
    # It reads the Kubernetes API with its own token.
    assert pod["automountServiceAccountToken"] is True
    image = container["image"]
    assert image == "ghcr.io/your-org/raydiag:0.1.0" and not image.endswith(":latest")


@pytest.mark.parametrize("overlay", ["base", *OVERLAYS])
def test_replicas_only_share_state_through_postgresql_and_are_kept_apart(overlay: str) -> None:
    rendered = render(overlay)
    deployment = rendered.one("Deployment", "raydiag")
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    container = bot_container(rendered)
    shared_state = "PGPASSWORD" in env_of(container)
    # Per-Pod SQLite cannot be shared: mutes and claimed runs would differ between replicas.
    assert deployment["spec"]["replicas"] == (2 if shared_state else 1)
    assert shared_state == (overlay == "overlays/postgres")
    assert deployment["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"] == 0
    spread = {
        c["topologyKey"]: c for c in deployment["spec"]["template"]["spec"]["topologySpreadConstraints"]
    }
    by_node = spread["kubernetes.io/hostname"]
    assert by_node["maxSkew"] == 1 and by_node["whenUnsatisfiable"] == "DoNotSchedule"
    assert by_node["labelSelector"]["matchLabels"].items() <= labels.items()
    assert "topology.kubernetes.io/zone" in spread
    budget = rendered.one("PodDisruptionBudget", "raydiag")
    # One may go at a time; a single replica can still be drained.
    assert budget["spec"]["maxUnavailable"] == 1
    assert budget["spec"]["selector"]["matchLabels"].items() <= labels.items()


@pytest.mark.parametrize("overlay", ["base", *OVERLAYS])
def test_health_and_metrics_are_served_on_one_probed_port(overlay: str) -> None:
    rendered = render(overlay)
    container = bot_container(rendered)
    serve = build_parser().parse_args(container["args"])
    assert serve.command == "serve" and serve.http is (overlay in HTTP_OVERLAYS)
    assert serve.host == "0.0.0.0", "the kubelet probes the Pod's IP, not its loopback"
    assert container["ports"] == [{"name": "http", "containerPort": serve.port, "protocol": "TCP"}]
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    assert container["startupProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}
    service = rendered.one("Service", "raydiag")
    assert service["spec"]["ports"][0]["targetPort"] == "http"
    labels = rendered.one("Deployment", "raydiag")["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= labels.items()


@pytest.mark.parametrize("overlay", ["base", *OVERLAYS])
def test_only_the_http_port_accepts_connections(overlay: str) -> None:
    rendered = render(overlay)
    policy = rendered.one("NetworkPolicy", "raydiag")
    labels = rendered.one("Deployment", "raydiag")["spec"]["template"]["metadata"]["labels"]
    assert policy["spec"]["podSelector"]["matchLabels"].items() <= labels.items()
    assert policy["spec"]["policyTypes"] == ["Ingress"]
    [rule] = policy["spec"]["ingress"]
    assert rule["ports"] == [{"protocol": "TCP", "port": "http"}]
    assert "http" in {p["name"] for p in bot_container(rendered)["ports"]}


@pytest.mark.parametrize("overlay", ["overlays/http", "overlays/postgres"])
def test_the_ingress_publishes_only_slacks_endpoint(overlay: str) -> None:
    rendered = render(overlay)
    ingress = rendered.one("Ingress", "raydiag")
    paths = [p for rule in ingress["spec"]["rules"] for p in rule["http"]["paths"]]
    assert [(p["path"], p["pathType"]) for p in paths] == [("/slack/events", "Exact")]
    backend = paths[0]["backend"]["service"]
    service = rendered.one("Service", backend["name"])
    assert backend["port"]["name"] in {p["name"] for p in service["spec"]["ports"]}
    assert ingress["spec"]["tls"], "Slack only posts to https:// URLs"


def test_socket_mode_needs_the_app_token_and_no_ingress() -> None:
    rendered = render("overlays/socket-mode")
    env = env_of(bot_container(rendered))
    assert env["SLACK_APP_TOKEN"]["valueFrom"]["secretKeyRef"]["optional"] is False
    # Nothing is posted to the bot in Socket Mode, so nothing needs verifying.
    assert env["SLACK_SIGNING_SECRET"]["valueFrom"]["secretKeyRef"]["optional"] is True
    assert "Ingress" not in rendered.kinds()


def waived_checks(overlay: str) -> set[str]:
    annotations = render(overlay).one("Deployment", "raydiag")["metadata"].get("annotations", {})
    return {v.split("=", 1)[0] for k, v in annotations.items() if k.startswith("checkov.io/skip")}


@pytest.mark.parametrize("overlay", ["base", *OVERLAYS])
def test_every_static_scan_waiver_gives_its_reason(overlay: str) -> None:
    annotations = render(overlay).one("Deployment", "raydiag")["metadata"].get("annotations", {})
    for key, value in annotations.items():
        if key.startswith("checkov.io/skip"):
            check, _, reason = value.partition("=")
            assert re.fullmatch(r"CKV2?_K8S_\d+", check) and len(reason.split()) >= 5, value
    assert waived_checks(overlay) == WAIVABLE


@pytest.mark.parametrize("overlay", ["base", *OVERLAYS])
def test_the_mounted_config_is_one_the_bot_accepts(overlay: str, tmp_path: Path) -> None:
    rendered = render(overlay)
    container = bot_container(rendered)
    path = env_of(container)["RAYDIAG_CONFIG"]["value"]
    config_file = tmp_path / "config.yaml"
    config_file.write_text(mounted_file(rendered, container, path), encoding="utf-8")
    config = load_config(config_file)  # raises ConfigError with the key path if not
    assert config.clusters, "the shipped config names at least one cluster as an example"
    assert all(c.kubeconfig is None and c.context is None for c in config.clusters), (
        "inside the cluster the bot uses its service account"
    )
    # With replicas, one leader runs the scheduled posts, on the Lease the Role lets it renew.
    election = config.leader_election
    assert election.enabled and election.namespace is None and election.kubeconfig is None
    renewable = {
        name
        for rule in rendered.one("Role", "raydiag-leader")["rules"]
        if "update" in rule["verbs"]
        for name in rule.get("resourceNames", [])
    }
    assert renewable == {election.lease_name}
    namespace = env_of(container)["POD_NAMESPACE"]["valueFrom"]["fieldRef"]["fieldPath"]
    assert namespace == "metadata.namespace"
    assert config.log_format == "json"


def test_default_state_is_a_sqlite_file_on_the_state_volume(tmp_path: Path) -> None:
    rendered = render("overlays/socket-mode")
    container = bot_container(rendered)
    config_file = tmp_path / "config.yaml"
    config_file.write_text(mounted_file(rendered, container, "/etc/raydiag/config.yaml"), encoding="utf-8")
    env = {name: entry["value"] for name, entry in env_of(container).items() if "value" in entry}
    url = make_url(load_config(config_file).state.database_url(env))
    state_mount = next(m for m in container["volumeMounts"] if m["name"] == "state")
    assert url.get_backend_name() == "sqlite"
    assert Path(str(url.database)).parent == Path(state_mount["mountPath"])


def test_postgres_state_keeps_the_password_in_a_secret(tmp_path: Path) -> None:
    rendered = render("overlays/postgres")
    container = bot_container(rendered)
    config_file = tmp_path / "config.yaml"
    config_file.write_text(mounted_file(rendered, container, "/etc/raydiag/config.yaml"), encoding="utf-8")
    url = make_url(load_config(config_file).state.database_url({}))
    assert url.drivername == "postgresql+psycopg"
    assert url.password is None, "the URL sits in a ConfigMap; the password must not"
    password = env_of(container)["PGPASSWORD"]["valueFrom"]["secretKeyRef"]
    assert (password["name"], password["key"]) == ("raydiag-postgres", "password")


def test_ray_namespace_policy_lets_only_the_bot_reach_the_head() -> None:
    policy = render("ray-namespace").one("NetworkPolicy")
    bot_labels = render("base").one("Deployment", "raydiag")["spec"]["template"]["metadata"]["labels"]
    assert policy["metadata"]["namespace"] != BOT_NAMESPACE, "it belongs in the RayCluster's namespace"
    assert policy["spec"]["podSelector"] == {"matchLabels": {"ray.io/node-type": "head"}}
    assert policy["spec"]["policyTypes"] == ["Ingress"]
    [rule] = policy["spec"]["ingress"]
    [peer] = rule["from"]
    assert peer["namespaceSelector"]["matchLabels"] == {"kubernetes.io/metadata.name": BOT_NAMESPACE}
    assert peer["podSelector"]["matchLabels"].items() <= bot_labels.items()
    allowed = {(p["protocol"], p["port"]) for p in rule["ports"]}
    # The dashboard (diagnoses, GPU probe) and every port the head check connects to.
    assert allowed == {("TCP", default) for _name, _aliases, default in HEAD_PORTS}
    assert ("TCP", 8265) in allowed


def test_nothing_under_deploy_holds_a_token() -> None:
    # Slack's token shapes: xoxb-<digits>-..., xapp-<digit>-<app id>-...; placeholders ("xoxb-…") pass.
    token = re.compile(r"\bxox[abpors]-\d{6,}|\bxapp-\d-[A-Z0-9]{6,}")
    for path in DEPLOY.rglob("*"):
        if path.is_file():
            assert not token.search(path.read_text(encoding="utf-8")), path
