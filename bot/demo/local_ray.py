"""A real Ray cluster of several raylets on loopback addresses, owned and cleaned up by us.

Each node is a ``ray start --block`` process on its own address (127.0.0.2, .3, ...) in its own
session, so it can be signalled alone. ``stop`` ends exactly what this object started: SIGTERM by
PID, then SIGKILL of each process group, then any process whose command line carries our private
temp dir (raylets start workers and agents that can outlive their parent). ``ray stop`` is never
used: it kills every Ray process on the machine, including other people's.

Used by the demo (``python -m bot.demo``) and by ``tools/record_ray_fixtures.py``.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

# The ``ray`` next to this interpreter (the venv's), else the one on PATH.
RAY = Path(sys.executable).with_name("ray")
OBJECT_STORE_BYTES = 100_000_000
NODE_TIMEOUT_S = 120.0
POLL_S = 0.5
# Started nodes stop within 2-3 s of SIGTERM; one caught mid-start can ignore it for 30 s and more.
GRACE_S = 10.0

Log = Callable[[str], None]


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


# Prints every option of ``ray start``, hidden ones included (2.60 hides ``--labels`` from --help).
_LIST_START_FLAGS = (
    "import ray.scripts.scripts as s\nfor p in s.start.params:\n    print(*getattr(p, 'opts', []))\n"
)


@functools.cache
def start_flags(ray: str) -> frozenset[str] | None:
    """The ``--flags`` that this ``ray`` executable's ``ray start`` accepts, asked once per executable.

    Older releases lack some of the flags we pass (``--labels``, ``--runtime-env-agent-port``,
    ``--dashboard-agent-grpc-port``...) and refuse to start on an unknown one. Asked of the click
    command itself through the interpreter next to ``ray``, else read from ``ray start --help``
    (which leaves hidden options out). None when neither answers: then every flag is passed.
    """
    python = Path(ray).with_name("python")
    asks = [[str(python), "-c", _LIST_START_FLAGS]] if python.exists() else []
    for command in [*asks, [ray, "start", "--help"]]:
        try:
            done = subprocess.run(
                command,
                capture_output=True,
                timeout=120,
                check=False,
                env={**os.environ, "RAY_USAGE_STATS_ENABLED": "0"},
            )
        except (OSError, subprocess.SubprocessError):
            continue
        flags = re.findall(rb"(?<![\w-])--[a-z][a-z0-9-]*", done.stdout)
        if done.returncode == 0 and flags:
            return frozenset(flag.decode() for flag in flags)
    return None


def _ephemeral_low() -> int:
    """The lowest port the kernel hands out for ``bind(0)``: worker port ranges stay below it."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


@dataclass
class NodeSpec:
    ip: str
    num_cpus: int
    num_gpus: int = 0
    resources: dict[str, float] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)


# The demo's cluster: a CPU-only head, one node with the only A100, one T4 node. GPUs are logical:
# Ray trusts --num-gpus, so no card is needed.
DEMO_NODES = (
    NodeSpec("127.0.0.2", num_cpus=1, labels={"node-group": "head"}),
    NodeSpec(
        "127.0.0.3",
        num_cpus=1,
        num_gpus=1,
        resources={"accelerator_type:A100": 1},
        labels={"node-group": "gpu-a100", "gpu-model": "A100"},
    ),
    NodeSpec(
        "127.0.0.4",
        num_cpus=1,
        num_gpus=1,
        resources={"accelerator_type:T4": 1},
        labels={"node-group": "gpu-t4", "gpu-model": "T4"},
    ),
)


def dig_list(raw: Any, *path: str) -> list[Any]:
    for step in path:
        raw = raw.get(step) if isinstance(raw, dict) else None
    return raw if isinstance(raw, list) else []


def http_json(base: str, path: str, body: Any = None, timeout: float = 30) -> tuple[int, Any]:
    """GET (or POST ``body``) and return (status, parsed JSON or the raw text); never raises."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(base + path, data=data, method="POST" if data else "GET")
    if data:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            status, raw = response.status, response.read()
    except urllib.error.HTTPError as err:
        status, raw = err.code, err.read()
    except (urllib.error.URLError, OSError) as err:
        return 0, f"{type(err).__name__}: {err}"
    text = raw.decode("utf-8", errors="replace")
    try:
        return status, json.loads(text)
    except ValueError:
        return status, text


def wait_for(
    check: Callable[[], bool], timeout: float, what: str, *, interval: float = POLL_S, say: Log = log
) -> bool:
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(Exception):
            if check():
                say(f"ready: {what}")
                return True
        if time.monotonic() >= deadline:
            break
        time.sleep(interval)
    say(f"gave up waiting for {what}")
    return False


class ClusterError(RuntimeError):
    """A node did not come up; the message names the log folder."""


class Interrupted(BaseException):
    """SIGTERM or SIGHUP while the cluster runs: unwinds like Ctrl-C so that ``stop`` runs."""


_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def _raise_interrupted(signum: int, _: FrameType | None) -> None:
    raise Interrupted(signal.Signals(signum).name)


class LocalCluster:
    """``ray start --block`` processes (and helpers spawned with :meth:`spawn`) that we own.

    Use it as a context manager: leaving the block stops everything, whether it ends normally, by
    an exception, by Ctrl-C, or by SIGTERM/SIGHUP sent to this process.
    """

    def __init__(
        self,
        nodes: Sequence[NodeSpec] = DEMO_NODES,
        *,
        extra_env: dict[str, str] | None = None,
        temp_prefix: str = "raydiag-demo-",
        object_store_bytes: int = OBJECT_STORE_BYTES,
        say: Log = log,
        ray: Path | None = None,
        max_nodes: int | None = None,
    ) -> None:
        """``ray``: the ``ray`` executable to start nodes with (another venv's, for another Ray
        release); by default the one next to this interpreter, else the one on PATH.
        ``max_nodes``: how many nodes the cluster may grow to through :meth:`start_node` (each
        reserves a range of worker ports up front); by default the nodes given."""
        if not nodes:
            raise ValueError("a cluster needs at least a head node")
        if max_nodes is not None and max_nodes < len(nodes):
            raise ValueError(f"max_nodes={max_nodes} is fewer than the {len(nodes)} nodes given")
        self.ray = ray if ray is not None else RAY
        self.nodes = list(nodes)
        self.object_store_bytes = object_store_bytes
        self.say = say
        # Short and under /tmp: Ray's Unix socket paths live inside it and have a length limit.
        self.temp_dir = Path(tempfile.mkdtemp(prefix=temp_prefix, dir="/tmp"))
        self.env = {
            **os.environ,
            "RAY_USAGE_STATS_ENABLED": "0",
            # This Ray drains a SIGTERMed node first, for up to 30 s while an actor lives on it;
            # these nodes serve nobody, so they stop at once.
            "RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S": "0",
            # A token that any local ``ray.init`` leaves in ~/.ray/auth_token switches a new
            # cluster to token authentication, and the dashboard then refuses plain requests:
            # these loopback clusters are for one user and never use it.
            "RAY_AUTH_MODE": "disabled",
            # Jobs run `python` from PATH, as in a Ray image; here that must be the one with Ray.
            "PATH": os.pathsep.join([str(self.ray.parent), os.environ.get("PATH", "")]),
            **(extra_env or {}),
        }
        self.env.pop("RAY_ADDRESS", None)
        self.procs: list[subprocess.Popen[bytes]] = []
        self.gcs_port = 0
        self.dashboard_port = 0
        # Each node's dashboard agent HTTP port (Ray 2.0-2.7 serve the Serve REST API there).
        self.agent_ports: dict[str, int] = {}
        self.keep_logs = False
        self._stopped = False
        self._saved_handlers: dict[int, Any] = {}
        # Worker port ranges must not overlap between raylets, nor with the ports ``free_port``
        # picks (the kernel's ephemeral range); start somewhere random below that range so two
        # clusters (or someone else's tests) on the same machine are unlikely to collide.
        self.max_nodes = max_nodes if max_nodes is not None else len(self.nodes)
        top = max(12000, min(_ephemeral_low(), 65536) - 100 * (self.max_nodes + 1))
        self._next_worker_port = random.randrange(10000, top, 100)
        self._worker_ports = range(self._next_worker_port, self._next_worker_port + 100 * self.max_nodes)
        self._taken: set[int] = set()
        self._started = 0  # `ray start` processes begun by start_node, joined or not
        self._joining = 0  # of those, the ones expected to register with the head

    # --- addresses ---------------------------------------------------------------------------

    @property
    def head_ip(self) -> str:
        return self.nodes[0].ip

    @property
    def gcs_address(self) -> str:
        return f"{self.head_ip}:{self.gcs_port}"

    @property
    def dashboard_url(self) -> str:
        return f"http://{self.head_ip}:{self.dashboard_port}"

    @property
    def head_agent_url(self) -> str:
        return f"http://{self.head_ip}:{self.agent_ports[self.head_ip]}"

    # --- starting ----------------------------------------------------------------------------

    def _port(self, ip: str) -> int:
        """A free port on ``ip`` that no other component of this cluster was given."""
        while True:
            port = free_port(ip)
            if port not in self._taken and port not in self._worker_ports:
                self._taken.add(port)
                return port

    @property
    def ray_command(self) -> str:
        return str(self.ray) if self.ray.exists() else "ray"

    def _node_args(self, spec: NodeSpec, head: bool) -> list[str]:
        args = self._all_node_args(spec, head)
        known = start_flags(self.ray_command)
        if known is None:
            return args
        return [arg for arg in args if not arg.startswith("--") or arg.split("=", 1)[0] in known]

    def _all_node_args(self, spec: NodeSpec, head: bool) -> list[str]:
        low = self._next_worker_port
        self._next_worker_port += 100
        agent_port = self.agent_ports[spec.ip] = self._port(spec.ip)
        args = [
            self.ray_command,
            "start",
            "--block",
            f"--node-ip-address={spec.ip}",
            f"--num-cpus={spec.num_cpus}",
            f"--num-gpus={spec.num_gpus}",
            f"--object-store-memory={self.object_store_bytes}",
            f"--node-manager-port={self._port(spec.ip)}",
            f"--object-manager-port={self._port(spec.ip)}",
            f"--dashboard-agent-listen-port={agent_port}",
            f"--dashboard-agent-grpc-port={self._port(spec.ip)}",
            f"--runtime-env-agent-port={self._port(spec.ip)}",
            f"--metrics-export-port={self._port(spec.ip)}",
            f"--min-worker-port={low}",
            f"--max-worker-port={low + 99}",
            "--disable-usage-stats",
        ]
        if spec.resources:
            args.append(f"--resources={json.dumps(spec.resources)}")
        if spec.labels:
            args.append("--labels=" + ",".join(f"{k}={v}" for k, v in spec.labels.items()))
        if head:
            self.gcs_port = self._port(spec.ip)
            self.dashboard_port = self._port(spec.ip)
            args += [
                "--head",
                f"--port={self.gcs_port}",
                "--include-dashboard=true",
                f"--dashboard-host={spec.ip}",
                f"--dashboard-port={self.dashboard_port}",
                f"--ray-client-server-port={self._port(spec.ip)}",
            ]
        else:
            args.append(f"--address={self.gcs_address}")
        args.append(f"--temp-dir={self.temp_dir}")
        return args

    def spawn(self, args: Sequence[str], log_name: str) -> subprocess.Popen[bytes]:
        """Start a helper process we own (own session, output in the temp dir, stopped with us)."""
        if self._stopped:
            raise ClusterError("the cluster was stopped")
        out = (self.temp_dir / log_name).open("wb")
        try:
            proc = subprocess.Popen(
                list(args), stdout=out, stderr=subprocess.STDOUT, env=self.env, start_new_session=True
            )
        finally:
            out.close()  # the child holds its own copy
        self.procs.append(proc)
        return proc

    def _preflight(self) -> None:
        if not self.ray.exists() and shutil.which("ray") is None:
            raise ClusterError(f"no `ray` command at {self.ray} or on PATH; install ray[default]")
        for spec in self.nodes:
            try:
                free_port(spec.ip)
            except OSError as error:
                raise ClusterError(
                    f"cannot listen on {spec.ip} ({error.strerror}); on macOS add the alias first: "
                    f"sudo ifconfig lo0 alias {spec.ip} up"
                ) from error

    def start(self) -> None:
        """Start every node given, the head first, and wait for each to register."""
        self._preflight()
        # One at a time: raylets sharing the head's session dir pick their socket names by probing
        # for a free ``plasma_store.N``, and racing starts pick the same one.
        for spec in list(self.nodes):
            self.start_node(spec)

    def start_node(self, spec: NodeSpec, *, gcs_address: str | None = None) -> subprocess.Popen[bytes]:
        """Start one more ``ray start --block`` for ``spec``: the head when it is the first node
        started, else a worker that joins it, and return once the head's dashboard lists it ALIVE.
        ``spec`` joins :attr:`nodes` if it is not there yet.

        ``gcs_address``: the GCS a worker dials instead of the head's, e.g. a port nothing listens
        on, for a worker that runs but never joins (``ray start`` keeps retrying, for minutes);
        such a node is never waited for. Raises ``ClusterError`` past ``max_nodes`` or when a
        node does not come up."""
        head = self._started == 0
        if head and gcs_address is not None:
            raise ValueError("the head is the GCS; gcs_address is for workers")
        if self._started >= self.max_nodes:
            raise ClusterError(f"this cluster was made for {self.max_nodes} nodes; see max_nodes")
        if spec not in self.nodes:
            self.nodes.append(spec)
        self.say(f"starting {'head' if head else 'worker'} {spec.ip}")
        args = self._node_args(spec, head=head)
        if gcs_address is not None:
            args = [f"--address={gcs_address}" if arg.startswith("--address=") else arg for arg in args]
        proc = self.spawn(args, self.node_log(spec.ip).name)
        self._started += 1
        if gcs_address is None:
            self._joining += 1
            self._wait_nodes(self._joining, "head node" if head else f"node {spec.ip}")
        return proc

    def node_log(self, ip: str) -> Path:
        """Where the output of the ``ray start`` of the node at ``ip`` goes."""
        return self.temp_dir / f"ray-start-{ip}.log"

    def _wait_nodes(self, count: int, what: str) -> None:
        def ready() -> bool:
            if any(proc.poll() is not None for proc in self.procs):
                raise ClusterError(f"a `ray start` exited early; see {self.temp_dir}")
            return self.has_alive_nodes(count)

        deadline = time.monotonic() + NODE_TIMEOUT_S
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError, ValueError):
                if ready():
                    self.say(f"ready: {what}")
                    return
            time.sleep(POLL_S)
        raise ClusterError(f"{what} did not come up within {NODE_TIMEOUT_S:g}s; see {self.temp_dir}")

    def has_alive_nodes(self, count: int) -> bool:
        return self.alive_nodes() == count

    def alive_nodes(self) -> int:
        status, body = http_json(self.dashboard_url, "/api/v0/nodes?limit=100", timeout=10)
        rows = dig_list(body, "data", "result", "result") if status == 200 else []
        return sum(1 for row in rows if isinstance(row, dict) and row.get("state") == "ALIVE")

    # --- stopping ----------------------------------------------------------------------------

    def __enter__(self) -> LocalCluster:
        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGTERM, signal.SIGHUP):
                self._saved_handlers[signum] = signal.signal(signum, _raise_interrupted)
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.stop(keep_logs=self.keep_logs)
        finally:
            for signum, handler in self._saved_handlers.items():
                signal.signal(signum, handler)
            self._saved_handlers.clear()

    def stop(self, keep_logs: bool = False, grace_s: float = GRACE_S) -> None:
        """Stop every process this object started; idempotent, and Ctrl-C cannot cut it short.

        Each process gets SIGTERM and ``grace_s`` to exit with its children; a ``ray start``
        that is itself still starting may not react to it at all, so then its whole process
        group is killed.
        """
        if self._stopped:
            return
        self._stopped = True
        began = time.monotonic()
        masked: dict[signal.Signals, Any] = {}
        if threading.current_thread() is threading.main_thread():
            for signum in _STOP_SIGNALS:
                masked[signum] = signal.signal(signum, signal.SIG_IGN)
        try:
            self._terminate(grace_s)
        finally:
            for signum, handler in masked.items():
                signal.signal(signum, handler)
        self.say(f"stopped {len(self.procs)} process group(s) in {time.monotonic() - began:.1f}s")
        if keep_logs:
            self.say(f"logs kept in {self.temp_dir}")
        else:
            shutil.rmtree(self.temp_dir, ignore_errors=True)

    def _terminate(self, grace_s: float) -> None:
        for proc in reversed(self.procs):
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        for proc in self.procs:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        for proc in self.procs:
            # The whole group, even when its leader already exited: its children keep the group id.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=5)
        # Raylets start workers and agents that may leave their group; they all carry our temp dir.
        for _ in range(3):
            left = self.stragglers()
            if not left:
                break
            for pid in left:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.2)

    def stragglers(self) -> list[int]:
        """PIDs still alive that we started: in one of our process groups, or naming our temp dir."""
        return processes_with_marker(str(self.temp_dir), groups={proc.pid for proc in self.procs})


def processes_with_marker(marker: str, groups: set[int] | None = None) -> list[int]:
    """Live processes (zombies excluded) whose command line contains ``marker`` or whose group is
    one of ``groups``; never this process."""
    needle = marker.encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[-1].split()[0]
            in_group = bool(groups) and os.getpgid(int(entry.name)) in (groups or set())
        except (OSError, IndexError):
            continue
        if state == "Z":
            continue
        if needle in cmdline or in_group:
            found.append(int(entry.name))
    return found


@contextlib.contextmanager
def running_cluster(
    nodes: Sequence[NodeSpec] = DEMO_NODES, *, keep_logs: bool = False, say: Log = log, **kwargs: Any
) -> Iterator[LocalCluster]:
    """Start a cluster, yield it, and stop everything it started however the block is left."""
    with LocalCluster(nodes, say=say, **kwargs) as cluster:
        cluster.keep_logs = keep_logs
        cluster.start()
        yield cluster


__all__ = [
    "DEMO_NODES",
    "ClusterError",
    "Interrupted",
    "LocalCluster",
    "NodeSpec",
    "dig_list",
    "free_port",
    "http_json",
    "processes_with_marker",
    "running_cluster",
    "start_flags",
    "wait_for",
]
