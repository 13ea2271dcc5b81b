"""A real Kubernetes control plane on loopback for the integration tests: etcd, kube-apiserver,
kube-scheduler and the KubeRay operator, each the upstream program built from its Go module
(tools/controlplane/build.sh), each a child process this module starts and stops by PID.

Why real ones: the loopback fake in ``kube_api.py`` answers what we taught it; the scheduler's
FailedScheduling text, RBAC refusals and the operator's reconciling are only faithful when the
programs that produce them run. No kube-controller-manager: what it would do for these tests
(a namespace's ``default`` ServiceAccount, lifting a Ready Node's not-ready taint) ``namespace()``
and ``add_node()`` do by hand, and no kubelet runs, so Nodes are objects a test creates and pods
never start::

    with running_controlplane() as cp:
        api = cp.client()                       # kubernetes.client.ApiClient, admin
        cp.namespace("ray")                     # namespace + its default ServiceAccount
        cp.add_node("node-a", {"cpu": "4", "memory": "16Gi", "pods": "110"})
        cp.kubeconfig                           # admin kubeconfig, context "controlplane"

The binaries are built on first use (a cold build took 10-15 minutes on two shared cores; see
the README, "Development") and then reused from ``~/.cache/raydiag/controlplane/<release>/``.
Everything listens on 127.0.0.1 on free ports; every process gets PR_SET_PDEATHSIG so none outlives
the test process even if that is killed.
"""

from __future__ import annotations

import contextlib
import ctypes
import datetime
import ipaddress
import json
import os
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
BUILD_SCRIPT = REPO / "tools" / "controlplane" / "build.sh"
BUILD_TIMEOUT_S = 3 * 3600  # a cold kube-apiserver build on two shared cores takes tens of minutes
START_TIMEOUT_S = 180.0
STOP_GRACE_S = 15.0
CONTEXT = "controlplane"
OPERATOR_USER = "kuberay-operator"
# The names kube-apiserver's bootstrap RBAC policy binds the scheduler's permissions to.
SCHEDULER_USER = "system:kube-scheduler"


def pid_alive(pid: int) -> bool:
    """Whether a process with this PID still exists (a zombie not yet reaped counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


class ControlPlaneUnavailable(RuntimeError):
    """The control plane could not be built or started; the message says which step and why."""


@dataclass(frozen=True)
class Binaries:
    """The built programs and the KubeRay release's data next to them. ``kube``, when set, is
    another minor release's folder (``build.sh k8s-v1.N``) whose kube-apiserver and kube-scheduler
    replace the default release's; etcd, the operator and the CRDs stay those of ``root``."""

    root: Path
    kube: Path | None = None

    @property
    def etcd(self) -> Path:
        return self.root / "etcd"

    @property
    def kube_apiserver(self) -> Path:
        return (self.kube or self.root) / "kube-apiserver"

    @property
    def kube_scheduler(self) -> Path:
        return (self.kube or self.root) / "kube-scheduler"

    @property
    def ray_operator(self) -> Path:
        return self.root / "ray-operator"

    @property
    def crds(self) -> list[Path]:
        return sorted((self.root / "crds").glob("*.yaml"))

    @property
    def operator_role(self) -> Path:
        return self.root / "rbac" / "role.yaml"


def _build_script(args: list[str], env: dict[str, str]) -> Path:
    """Run tools/controlplane/build.sh with ``args``; the folder its last line names."""
    try:
        done = subprocess.run(
            [str(BUILD_SCRIPT), *args],
            capture_output=True,
            text=True,
            timeout=BUILD_TIMEOUT_S,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired as error:
        raise ControlPlaneUnavailable(f"{BUILD_SCRIPT} ran past {BUILD_TIMEOUT_S}s") from error
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        tail = "\n".join(done.stderr.strip().splitlines()[-20:])
        raise ControlPlaneUnavailable(f"{BUILD_SCRIPT} {' '.join(args)} failed ({done.returncode}):\n{tail}")
    return Path(lines[-1])


def build(release: str | None = None) -> Binaries:
    """Run tools/controlplane/build.sh (a no-op when the cache is current) and return its output;
    with ``release`` (a folder such as ``"k8s-v1.33"`` under tools/controlplane), that minor
    release's kube-apiserver and kube-scheduler as well."""
    go = os.environ.get("GO") or shutil.which("go") or "/usr/local/go/bin/go"
    if not Path(go).exists():
        raise ControlPlaneUnavailable(f"Go is needed to build the control plane and {go} does not exist")
    env = {**os.environ, "GO": go}
    root = _build_script([], env)
    binaries = Binaries(root, _build_script([release], env) if release else None)
    programs = (binaries.etcd, binaries.kube_apiserver, binaries.kube_scheduler, binaries.ray_operator)
    missing = [str(p) for p in programs if not p.is_file()]
    if missing or not binaries.crds or not binaries.operator_role.is_file():
        raise ControlPlaneUnavailable(f"{BUILD_SCRIPT} left an incomplete {binaries.root}: missing {missing}")
    return binaries


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _die_with_parent() -> None:
    """In the child before exec: SIGKILL it when the test process goes, however it goes."""
    pr_set_pdeathsig = 1
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)


def _certificates(root: Path) -> None:
    """A throwaway CA, kube-apiserver's serving certificate for 127.0.0.1 signed by it, and the
    service-account signing key: files under ``root``."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    def key() -> rsa.RSAPrivateKey:
        return rsa.generate_private_key(public_exponent=65537, key_size=2048)

    def pem_key(k: rsa.RSAPrivateKey) -> bytes:
        return k.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )

    now = datetime.datetime.now(datetime.UTC)
    ca_key, serving_key = key(), key()
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "raydiag-test-ca")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(True, False, False, False, False, True, True, False, False), critical=True
        )
        .sign(ca_key, hashes.SHA256())
    )
    serving = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kube-apiserver")]))
        .issuer_name(ca_name)
        .public_key(serving_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
            ),
            critical=False,
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    (root / "ca.crt").write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    (root / "ca.key").write_bytes(pem_key(ca_key))  # signs the stand-in kubelet's serving certificate
    (root / "apiserver.crt").write_bytes(serving.public_bytes(serialization.Encoding.PEM))
    (root / "apiserver.key").write_bytes(pem_key(serving_key))
    (root / "sa.key").write_bytes(pem_key(key()))


@dataclass
class ControlPlane:
    """One running control plane; ``start()`` brings it up in order, ``stop()`` takes it down."""

    binaries: Binaries
    root: Path
    etcd_port: int = field(default_factory=_free_port)
    etcd_peer_port: int = field(default_factory=_free_port)
    apiserver_port: int = field(default_factory=_free_port)
    scheduler_port: int = field(default_factory=_free_port)
    operator_probe_port: int = field(default_factory=_free_port)
    operator_metrics_port: int = field(default_factory=_free_port)
    tokens: dict[str, str] = field(default_factory=dict)
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    @property
    def server(self) -> str:
        return f"https://127.0.0.1:{self.apiserver_port}"

    @property
    def kubeconfig(self) -> Path:
        """The admin's kubeconfig (group system:masters), context ``controlplane``."""
        return self.root / "admin.kubeconfig"

    def log(self, name: str) -> Path:
        return self.root / f"{name}.log"

    # -- start ---------------------------------------------------------------------------------

    def start(self) -> None:
        _certificates(self.root)
        self._write_credentials()
        self._spawn(
            "etcd",
            [
                str(self.binaries.etcd),
                f"--data-dir={self.root / 'etcd-data'}",
                f"--listen-client-urls=http://127.0.0.1:{self.etcd_port}",
                f"--listen-peer-urls=http://127.0.0.1:{self.etcd_peer_port}",
            ],
        )
        self._wait(
            "etcd",
            lambda: '"health":"true"' in (self._get(f"http://127.0.0.1:{self.etcd_port}/health") or ""),
        )
        self._spawn("kube-apiserver", self._apiserver_command())
        self._wait("kube-apiserver", lambda: self._get(f"{self.server}/readyz", auth=True) == "ok")
        self._install()
        self._spawn(
            "kube-scheduler",
            [
                str(self.binaries.kube_scheduler),
                f"--kubeconfig={self.root / 'scheduler.kubeconfig'}",
                f"--authentication-kubeconfig={self.root / 'scheduler.kubeconfig'}",
                f"--authorization-kubeconfig={self.root / 'scheduler.kubeconfig'}",
                "--bind-address=127.0.0.1",
                f"--secure-port={self.scheduler_port}",
                f"--cert-dir={self.root / 'scheduler-certs'}",
                "--leader-elect=false",
            ],
        )
        self._wait(
            "kube-scheduler", lambda: self._get(f"https://127.0.0.1:{self.scheduler_port}/healthz") == "ok"
        )
        self._spawn(
            "ray-operator",
            [
                str(self.binaries.ray_operator),
                f"--kubeconfig={self.root / 'operator.kubeconfig'}",
                f"--health-probe-bind-address=127.0.0.1:{self.operator_probe_port}",
                f"--metrics-addr=127.0.0.1:{self.operator_metrics_port}",
                "--enable-leader-election=false",
                "--log-stdout-encoder=console",
            ],
            # controller-runtime reads --kubeconfig, and KUBECONFIG when a release drops the flag.
            env={**os.environ, "KUBECONFIG": str(self.root / "operator.kubeconfig")},
        )
        self._wait(
            "ray-operator", lambda: self._get(f"http://127.0.0.1:{self.operator_probe_port}/readyz") == "ok"
        )

    def _apiserver_command(self) -> list[str]:
        r = self.root
        return [
            str(self.binaries.kube_apiserver),
            f"--etcd-servers=http://127.0.0.1:{self.etcd_port}",
            "--bind-address=127.0.0.1",
            "--advertise-address=127.0.0.1",
            f"--secure-port={self.apiserver_port}",
            f"--tls-cert-file={r / 'apiserver.crt'}",
            f"--tls-private-key-file={r / 'apiserver.key'}",
            f"--token-auth-file={r / 'tokens.csv'}",
            "--authorization-mode=RBAC",
            f"--service-account-key-file={r / 'sa.key'}",
            f"--service-account-signing-key-file={r / 'sa.key'}",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            "--service-cluster-ip-range=10.96.0.0/24",
            f"--cert-dir={r / 'apiserver-certs'}",
            "--profiling=false",
            # Pod logs: kube-apiserver dials the Node's kubelet (the stand-in kubelet's log server)
            # at its InternalIP (its Hostname resolves nowhere here) and checks it against our CA.
            "--kubelet-preferred-address-types=InternalIP",
            f"--kubelet-certificate-authority={r / 'ca.crt'}",
        ]

    def _write_credentials(self) -> None:
        """Static bearer tokens (kube-apiserver's --token-auth-file) and a kubeconfig per client."""
        users = {
            "admin": ("admin", "system:masters"),
            "scheduler": (SCHEDULER_USER, ""),
            "operator": (OPERATOR_USER, ""),
        }
        rows = []
        for who, (user, group) in users.items():
            self.tokens[who] = secrets.token_hex(16)
            rows.append(
                f'{self.tokens[who]},{user},{user},"{group}"'
                if group
                else f"{self.tokens[who]},{user},{user}"
            )
        (self.root / "tokens.csv").write_text("\n".join(rows) + "\n")
        self._write_kubeconfig(self.kubeconfig, "admin")
        self._write_kubeconfig(self.root / "scheduler.kubeconfig", "scheduler")
        self._write_kubeconfig(self.root / "operator.kubeconfig", "operator")

    def _write_kubeconfig(self, path: Path, who: str) -> None:
        self.write_kubeconfig(path, who, self.tokens[who])

    def write_kubeconfig(self, path: Path, user: str, token: str) -> Path:
        """A kubeconfig for this API server (context ``controlplane``) that presents ``token``, e.g.
        one minted for a ServiceAccount by the TokenRequest API."""
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": CONTEXT,
                    "cluster": {"server": self.server, "certificate-authority": str(self.root / "ca.crt")},
                }
            ],
            "users": [{"name": user, "user": {"token": token}}],
            "contexts": [{"name": CONTEXT, "context": {"cluster": CONTEXT, "user": user}}],
            "current-context": CONTEXT,
        }
        path.write_text(json.dumps(config, indent=2))
        return path

    def _install(self) -> None:
        """The Ray CRDs of the pinned KubeRay (established before the operator starts), the
        operator's own ClusterRole from that release bound to its user, and the default namespace's
        ServiceAccount."""
        from kubernetes import client

        api = self.client()
        extensions = client.ApiextensionsV1Api(api)
        names = []
        for path in self.binaries.crds:
            body = yaml.safe_load(path.read_text())
            extensions.create_custom_resource_definition(body=body)
            names.append(body["metadata"]["name"])

        def established() -> bool:
            for name in names:
                status = extensions.read_custom_resource_definition(name).status
                conditions = {c.type: c.status for c in ((status and status.conditions) or [])}
                if conditions.get("Established") != "True":
                    return False
            return True

        self._wait("the Ray CRDs", established)
        rbac = client.RbacAuthorizationV1Api(api)
        role = yaml.safe_load(self.binaries.operator_role.read_text())
        rbac.create_cluster_role(body=role)
        rbac.create_cluster_role_binding(
            body=client.V1ClusterRoleBinding(
                metadata=client.V1ObjectMeta(name=OPERATOR_USER),
                role_ref=client.V1RoleRef(
                    api_group="rbac.authorization.k8s.io", kind="ClusterRole", name=role["metadata"]["name"]
                ),
                subjects=[
                    client.RbacV1Subject(
                        api_group="rbac.authorization.k8s.io", kind="User", name=OPERATOR_USER
                    )
                ],
            )
        )
        self.namespace("default")

    def _spawn(self, name: str, command: list[str], env: dict[str, str] | None = None) -> None:
        with self.log(name).open("wb") as log:
            self.processes[name] = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=self.root,
                env=env,
                preexec_fn=_die_with_parent,  # noqa: PLW1509 - only prctl, no locks or imports
            )

    def _wait(self, what: str, ready: Callable[[], bool]) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            for name, process in self.processes.items():
                if process.poll() is not None:
                    raise ControlPlaneUnavailable(
                        f"{name} exited with {process.returncode} while waiting for {what}:\n{self.tail(name)}"
                    )
            with contextlib.suppress(Exception):
                if ready():
                    return
            time.sleep(0.25)
        last = list(self.processes)[-1]
        raise ControlPlaneUnavailable(f"{what} not ready after {START_TIMEOUT_S}s:\n{self.tail(last)}")

    def _get(self, url: str, auth: bool = False) -> str | None:
        """The body of a GET, or None on any HTTP error. The API server is verified against our CA;
        the scheduler's own health endpoint serves a certificate it made up, so it is not."""
        request = urllib.request.Request(url)
        if auth:
            request.add_header("Authorization", f"Bearer {self.tokens['admin']}")
        context = None
        if url.startswith(self.server):
            context = ssl.create_default_context(cafile=str(self.root / "ca.crt"))
        elif url.startswith("https:"):
            context = ssl._create_unverified_context()
        try:
            with urllib.request.urlopen(request, timeout=5, context=context) as answer:
                return str(answer.read(4096).decode())
        except (urllib.error.URLError, OSError):
            return None

    def serving_certificate(self, name: str, ips: list[str]) -> tuple[Path, Path]:
        """A serving certificate for ``ips`` signed by this plane's CA (which kube-apiserver trusts
        for kubelets): the certificate's and its key's files."""
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import rsa
        from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

        ca = x509.load_pem_x509_certificate((self.root / "ca.crt").read_bytes())
        ca_key = serialization.load_pem_private_key((self.root / "ca.key").read_bytes(), password=None)
        assert isinstance(ca_key, rsa.RSAPrivateKey)
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        now = datetime.datetime.now(datetime.UTC)
        cert = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
            .issuer_name(ca.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(
                x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address(ip)) for ip in ips]),
                critical=False,
            )
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .sign(ca_key, hashes.SHA256())
        )
        cert_path, key_path = self.root / f"{name}.crt", self.root / f"{name}.key"
        cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        key_path.write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
        )
        return cert_path, key_path

    def tail(self, name: str, lines: int = 25) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(self.log(name).read_text(errors="replace").splitlines()[-lines:])
        return ""

    # -- use -----------------------------------------------------------------------------------

    def client(self, who: str = "admin") -> Any:
        """A ``kubernetes.client.ApiClient`` from a kubeconfig (no globals): the admin's, or the
        ``"scheduler"``'s or ``"operator"``'s, to see what RBAC lets that user do."""
        from kubernetes import config

        return config.new_client_from_config(  # type: ignore[no-untyped-call]
            config_file=str(self.root / f"{who}.kubeconfig"), context=CONTEXT
        )

    def namespace(self, name: str) -> None:
        """Create the namespace (unless it exists) and its ``default`` ServiceAccount: the part of
        kube-controller-manager's work pods need to pass the ServiceAccount admission plugin."""
        from kubernetes import client
        from kubernetes.client.exceptions import ApiException

        core = client.CoreV1Api(self.client())
        for create in (
            lambda: core.create_namespace(body=client.V1Namespace(metadata=client.V1ObjectMeta(name=name))),
            lambda: core.create_namespaced_service_account(
                name, body=client.V1ServiceAccount(metadata=client.V1ObjectMeta(name="default"))
            ),
        ):
            try:
                create()
            except ApiException as error:
                if error.status != 409:
                    raise

    def add_node(self, name: str, capacity: dict[str, str], labels: dict[str, str] | None = None) -> None:
        """A Ready Node with this capacity (allocatable the same), as the scheduler would see one.

        The kubelet's part: create the Node, then post capacity and the Ready condition through the
        status subresource. The node lifecycle controller's part (kube-controller-manager, not run
        here): kube-apiserver's TaintNodesByCondition admission gives every new Node the
        ``node.kubernetes.io/not-ready`` NoSchedule taint, which that controller lifts once the Node
        is Ready; without this the scheduler would refuse every pod for the taint."""
        from kubernetes import client

        core = client.CoreV1Api(self.client())
        node_labels = {"kubernetes.io/hostname": name, **(labels or {})}
        core.create_node(body=client.V1Node(metadata=client.V1ObjectMeta(name=name, labels=node_labels)))
        ready = {
            "type": "Ready",
            "status": "True",
            "reason": "KubeletReady",
            "message": "kubelet is posting ready status",
        }
        status = {"capacity": capacity, "allocatable": capacity, "conditions": [ready]}
        core.patch_node_status(name, body={"status": status})
        spec = core.read_node(name).spec
        taints = (spec.taints if spec else None) or []
        kept = [t.to_dict() for t in taints if t.key != "node.kubernetes.io/not-ready"]
        core.patch_node(name, body={"spec": {"taints": kept or None}})

    # -- stop ----------------------------------------------------------------------------------

    def stop(self) -> None:
        """SIGTERM each process by PID, newest first; SIGKILL whichever outlives the grace time."""
        for name in reversed(list(self.processes)):
            process = self.processes[name]
            if process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(process.pid, signal.SIGTERM)
                try:
                    process.wait(timeout=STOP_GRACE_S)
                except subprocess.TimeoutExpired:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(process.pid, signal.SIGKILL)
                    process.wait(timeout=STOP_GRACE_S)

    def running(self) -> dict[str, int]:
        """The PIDs of the processes still alive, by name."""
        return {name: p.pid for name, p in self.processes.items() if p.poll() is None}


@contextlib.contextmanager
def running_controlplane(release: str | None = None) -> Iterator[ControlPlane]:
    """Build (or reuse) the binaries, start the control plane in a temporary folder, stop it and
    remove the folder at the end whatever happened. ``release``: see ``build``."""
    binaries = build(release)
    root = Path(tempfile.mkdtemp(prefix="raydiag-controlplane-"))
    plane = ControlPlane(binaries, root)
    try:
        plane.start()
        yield plane
    finally:
        plane.stop()
        shutil.rmtree(root, ignore_errors=True)
