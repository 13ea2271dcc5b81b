"""Record `ray status`, `ray status -v` and driver warnings from real local Ray clusters as corpus cases.

    .venv/bin/python tools/record_corpus.py                          # every scenario, autoscaler v1 and v2
    .venv/bin/python tools/record_corpus.py --autoscaler v1 --scenario held-gpus

Why: the corpus (``tests/corpus/``) is what ``benchmarks/corpus_eval.py`` scores raydiag on, and a
``ray status`` typed by hand is exactly the text that drifts from what Ray prints. Each run starts
one cluster per autoscaler version (a CPU head on 127.0.0.2 and two one-GPU workers on 127.0.0.3 and
127.0.0.4 that register ``accelerator_type:A100`` and ``accelerator_type:T4``; GPUs are logical, Ray
trusts ``--num-gpus``), then builds one broken or healthy situation after another. For each one a
driver process (this script with ``--driver``) creates the work and waits; the recorder waits until
the autoscaler's report shows it, runs the real ``ray status`` and ``ray status -v`` against the
cluster, keeps the driver's output (Ray prints its scheduling warnings there), stops the driver by
PID and waits until the cluster is idle again before the next scenario.

Everything lands in ``tests/corpus/recorded/``: one ``.txt`` per output, exactly as printed, and
``expected.json`` in the corpus schema (``tests/corpus/README.md``). A scenario's cause is the one
the situation was built to have, never what the output seems to say. Only processes this script
started are stopped (by PID, through ``bot.demo.local_ray.LocalCluster``); ``ray stop`` is never used.
The whole run is bounded: every wait has a timeout, and a scenario that times out is skipped with a
note rather than recorded half-built.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # run as a script from anywhere: bot/ is importable without install
    sys.path.insert(0, str(REPO))

from bot.demo.local_ray import RAY, LocalCluster, NodeSpec, http_json, log  # noqa: E402

OUT = REPO / "tests" / "corpus" / "recorded"
NAMESPACE = "raydiag-corpus"
STATUS_PATH = "/api/cluster_status?format=1"
# How long one scenario may take to show up in the autoscaler's report, and to drain afterwards.
SHOW_S = 60.0
DRAIN_S = 60.0
# How long to wait for the driver to print a scheduling message. The autoscaler's come within
# seconds. Ray 2.60's raylet writes "cannot be scheduled right now ... claimed by actors" (work
# held by actors) only to its own log, about a minute later, never to the driver: the held
# scenarios record no driver output.
WARNING_WAIT_S = 35.0

CLUSTER = [
    NodeSpec("127.0.0.2", num_cpus=2, labels={"node-group": "head"}),
    NodeSpec(
        "127.0.0.3",
        num_cpus=2,
        num_gpus=1,
        resources={"accelerator_type:A100": 1},
        labels={"node-group": "gpu-a100"},
    ),
    NodeSpec(
        "127.0.0.4",
        num_cpus=2,
        num_gpus=1,
        resources={"accelerator_type:T4": 1},
        labels={"node-group": "gpu-t4"},
    ),
]


# --- the drivers: what each scenario builds (run in their own process with --driver) -----------


class Holder:
    def ready(self) -> str:
        import ray

        return str(ray.get_runtime_context().get_node_id())


def work() -> int:
    return 1


def _connect(address: str) -> Any:
    import ray

    ray.init(address=address, namespace=NAMESPACE, log_to_driver=True)
    return ray


def drive_healthy(ray: Any) -> list[Any]:
    counter = ray.remote(num_cpus=0.5)(Holder).options(name="counter").remote()
    ray.get(counter.ready.remote(), timeout=120)
    ray.get([ray.remote(work).remote() for _ in range(4)], timeout=120)
    return [counter]


def drive_held_gpus(ray: Any) -> list[Any]:
    """Two actors hold both GPUs; a one-GPU task waits (cause 5)."""
    holder = ray.remote(Holder)
    actors = [holder.options(name=f"gpu-holder-{i}", num_gpus=1).remote() for i in range(2)]
    ray.get([a.ready.remote() for a in actors], timeout=120)
    return [*actors, ray.remote(work).options(name="eval-step", num_gpus=1).remote()]


def drive_held_a100(ray: Any) -> list[Any]:
    """An actor holds the only A100; a second A100 actor waits while the T4 is free (cause 5)."""
    holder = ray.remote(Holder)
    a100 = {"num_gpus": 1, "resources": {"accelerator_type:A100": 1}}
    first = holder.options(name="a100-holder", **a100).remote()
    ray.get(first.ready.remote(), timeout=120)
    return [first, holder.options(name="a100-waiter", **a100).remote()]


def drive_held_all_a100(ray: Any) -> list[Any]:
    """Actors hold both GPUs, the A100 among them; a second A100 actor waits (cause 5)."""
    holder = ray.remote(Holder)
    a100 = {"num_gpus": 1, "resources": {"accelerator_type:A100": 1}}
    first = holder.options(name="a100-holder", **a100).remote()
    other = holder.options(name="t4-holder", num_gpus=1, resources={"accelerator_type:T4": 1}).remote()
    ray.get([first.ready.remote(), other.ready.remote()], timeout=120)
    return [first, other, holder.options(name="a100-waiter", **a100).remote()]


def drive_gpu2_task(ray: Any) -> list[Any]:
    """A task asks 2 GPUs; the cluster has 2 but no node more than 1 (cause 6)."""
    return [ray.remote(work).options(name="train-step-gpu2", num_gpus=2).remote()]


def drive_gpu4_task(ray: Any) -> list[Any]:
    """A task asks 4 GPUs, more than the whole cluster (cause 6)."""
    return [ray.remote(work).options(name="train-step-gpu4", num_gpus=4).remote()]


def drive_h100(ray: Any) -> list[Any]:
    """A task asks for a GPU type no node registers (cause 7)."""
    task = ray.remote(work).options(
        name="train-step-h100", num_gpus=1, resources={"accelerator_type:H100": 1}
    )
    return [task.remote()]


def drive_strict_pack(ray: Any) -> list[Any]:
    """STRICT_PACK of two {CPU: 2} bundles: 4 CPUs on one node, every node has 2 (cause 6)."""
    from ray.util.placement_group import placement_group

    return [placement_group([{"CPU": 2}, {"CPU": 2}], strategy="STRICT_PACK", name="train-pg")]


def drive_strict_pack_gpu(ray: Any) -> list[Any]:
    """STRICT_PACK of two one-GPU bundles on one-GPU nodes (cause 6)."""
    from ray.util.placement_group import placement_group

    bundles = [{"CPU": 1, "GPU": 1}, {"CPU": 1, "GPU": 1}]
    return [placement_group(bundles, strategy="STRICT_PACK", name="ddp-pg")]


def drive_leftover_owner(ray: Any) -> list[Any]:
    """A detached actor that outlives this driver and keeps the A100."""
    a100 = {"num_gpus": 1, "resources": {"accelerator_type:A100": 1}}
    actor = ray.remote(Holder).options(name="leftover-trainer", lifetime="detached", **a100).remote()
    ray.get(actor.ready.remote(), timeout=120)
    return []


def drive_after_leftover(ray: Any) -> list[Any]:
    """A new job asks for the A100 the detached actor still holds (cause 5)."""
    task = ray.remote(work).options(name="finetune-a100", num_gpus=1, resources={"accelerator_type:A100": 1})
    return [task.remote()]


def drive_pg_held(ray: Any) -> list[Any]:
    """A CREATED placement group reserves both GPUs and runs nothing; a one-GPU task waits (cause 5)."""
    from ray.util.placement_group import placement_group

    group = placement_group(
        [{"CPU": 0.5, "GPU": 1}, {"CPU": 0.5, "GPU": 1}], strategy="SPREAD", name="idle-pg"
    )
    ray.get(group.ready(), timeout=120)
    return [group, ray.remote(work).options(name="eval-step", num_gpus=1).remote()]


def drive_pg_captured(ray: Any) -> list[Any]:
    """An actor fills its placement group's one GPU bundle; a task for the same group waits inside it
    while the other node's GPU is free (cause 5: held inside the group)."""
    from ray.util.placement_group import placement_group
    from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

    group = placement_group([{"CPU": 1, "GPU": 1}], name="trial-pg")
    ray.get(group.ready(), timeout=120)
    inside = PlacementGroupSchedulingStrategy(placement_group=group)
    trial = ray.remote(Holder).options(name="trial", num_cpus=1, num_gpus=1, scheduling_strategy=inside)
    actor = trial.remote()
    ray.get(actor.ready.remote(), timeout=120)
    child = ray.remote(work).options(name="trial-child", num_gpus=1, scheduling_strategy=inside)
    return [group, actor, child.remote()]


def drive_request_resources(ray: Any) -> list[Any]:
    """request_resources asks for a 2-GPU bundle and a 2-GPU task waits; no node has 2 (cause 6)."""
    from ray.autoscaler.sdk import request_resources

    request_resources(bundles=[{"GPU": 2}])
    return [ray.remote(work).options(name="shard-gpu2", num_gpus=2).remote()]


DRIVERS: dict[str, Callable[[Any], list[Any]]] = {
    "healthy": drive_healthy,
    "held-gpus": drive_held_gpus,
    "held-a100": drive_held_a100,
    "held-all-a100": drive_held_all_a100,
    "gpu2-task": drive_gpu2_task,
    "gpu4-task": drive_gpu4_task,
    "h100": drive_h100,
    "strict-pack": drive_strict_pack,
    "strict-pack-gpu": drive_strict_pack_gpu,
    "leftover-owner": drive_leftover_owner,
    "after-leftover": drive_after_leftover,
    "request-resources": drive_request_resources,
    "pg-held": drive_pg_held,
    "pg-captured": drive_pg_captured,
}


def run_driver(name: str, address: str, ready_file: str) -> int:
    """The driver process: build the scenario, touch ``ready_file``, keep it alive until stdin closes."""
    ray = _connect(address)
    keep = DRIVERS[name](ray)
    Path(ready_file).touch()
    with contextlib.suppress(Exception):
        sys.stdin.read()
    del keep
    ray.shutdown()
    return 0


# --- the recorder --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    name: str
    cause: int | None  # None: healthy, recorded as a quiet case
    # Text the autoscaler's report must contain before the outputs are recorded.
    shows: tuple[str, ...]
    what: str
    # Drivers that run (and finish) first, e.g. the one that leaves a detached actor behind.
    before: tuple[str, ...] = ()
    driver: str | None = None
    # Detached actors to kill afterwards (by name, in NAMESPACE).
    detached: tuple[str, ...] = ()
    warnings: bool = True
    warning_wait_s: float = WARNING_WAIT_S
    # request_resources() outlives its driver; the constraint is withdrawn afterwards.
    clears_requests: bool = False
    # State outputs recorded beside `ray status`, each pasted after it as one case (STATE_OUTPUTS).
    state: tuple[str, ...] = ()


SCENARIOS = [
    Scenario(
        "healthy",
        None,
        ("0.5/6.0 CPU", "(no resource demands)"),
        "Actor counter (CPU 0.5) runs and four short tasks finished; nothing waits.",
        warnings=False,
    ),
    Scenario(
        "held-gpus",
        5,
        ("2.0/2.0 GPU", "'GPU': 1.0}: 1+ pending tasks/actors"),
        "Actors gpu-holder-0 and gpu-holder-1 hold one GPU each, every GPU of the cluster; task "
        "eval-step asks one GPU and waits until an actor lets go.",
        warnings=False,
        state=("list-actors-table", "list-tasks", "summary-actors", "python"),
    ),
    Scenario(
        "held-a100",
        5,
        ("accelerator_type:A100': 1.0}: 1+ pending",),
        "Actor a100-holder holds the only A100 (GPU 1 and accelerator_type:A100 on 127.0.0.3); actor "
        "a100-waiter asks for the same and waits while the T4 node's GPU is free.",
        warnings=False,
        state=("list-nodes", "list-actors-detail", "python"),
    ),
    Scenario(
        "held-all-a100",
        5,
        ("2.0/2.0 GPU", "accelerator_type:A100': 1.0}: 1+ pending"),
        "Actors a100-holder and t4-holder hold both GPUs (the A100 on 127.0.0.3 and the T4 on "
        "127.0.0.4); actor a100-waiter asks for a GPU and the A100 and waits.",
        warnings=False,
        state=("list-actors-table",),
    ),
    Scenario(
        "gpu2-task",
        6,
        ("'GPU': 2.0}: 1+ pending tasks/actors",),
        "Task train-step-gpu2 asks 2 GPUs; the cluster has 2 in total but no node has more than 1, so "
        "it can never start.",
        state=("list-nodes", "list-tasks", "summary-tasks"),
    ),
    Scenario(
        "gpu4-task",
        6,
        ("'GPU': 4.0}: 1+ pending tasks/actors",),
        "Task train-step-gpu4 asks 4 GPUs; the cluster has 2, one per node.",
    ),
    Scenario(
        "h100",
        7,
        ("accelerator_type:H100",),
        "Task train-step-h100 asks accelerator_type:H100; the nodes register only A100 and T4.",
        state=("list-nodes",),
    ),
    Scenario(
        "strict-pack",
        6,
        ("(STRICT_PACK): 1+ pending placement groups",),
        "Placement group train-pg is STRICT_PACK with two {CPU: 2} bundles: 4 CPUs on one node, and "
        "every node has 2 (6 in the cluster, all free).",
        state=("list-pgs",),
    ),
    Scenario(
        "strict-pack-gpu",
        6,
        ("(STRICT_PACK): 1+ pending placement groups",),
        "Placement group ddp-pg is STRICT_PACK with two {CPU: 1, GPU: 1} bundles; each node has one GPU.",
    ),
    Scenario(
        "detached-leftover",
        5,
        ("accelerator_type:A100': 1.0}: 1+ pending",),
        "A finished job left detached actor leftover-trainer holding the A100; a new job's task "
        "finetune-a100 asks for the A100 and waits.",
        before=("leftover-owner",),
        driver="after-leftover",
        detached=("leftover-trainer",),
        warnings=False,
        state=("list-actors", "list-actors-detail"),
    ),
    Scenario(
        "request-resources",
        6,
        ("from request_resources()", "'GPU': 2.0}: 1+ pending tasks/actors"),
        "The driver called request_resources(bundles=[{'GPU': 2}]) and task shard-gpu2 asks 2 GPUs; "
        "no node has more than 1 and this cluster cannot add nodes.",
        clears_requests=True,
    ),
    Scenario(
        "pg-held",
        5,
        ("(0.0 used of 2.0 reserved in placement groups)", "'GPU': 1.0}: 1+ pending tasks/actors"),
        "Placement group idle-pg (SPREAD, two {CPU: 0.5, GPU: 1} bundles) is CREATED and reserves both "
        "GPUs while running nothing; task eval-step asks one GPU and waits.",
        warnings=False,
        state=("list-pgs", "python"),
    ),
    Scenario(
        "pg-captured",
        5,
        ("using placement groups",),
        "Placement group trial-pg has one {CPU: 1, GPU: 1} bundle, filled by actor trial; task "
        "trial-child is scheduled into the same group and waits for its bundle, although the other "
        "node's GPU is free (the Tune/Modin deadlock).",
        warnings=False,
        state=("list-pgs", "list-tasks"),
    ),
]
# The state API's outputs (``ray list``/``ray summary``, and Python printouts of the same state),
# each recorded after `ray status` and pasted as one case, prompt line included, the way users do.
STATE_OUTPUTS: dict[str, tuple[str, ...]] = {
    "list-nodes": ("list", "nodes"),
    "list-actors": ("list", "actors"),
    "list-actors-detail": ("list", "actors", "--detail"),
    # ``--detail`` alone prints YAML; the table with the detail columns needs ``--format table``.
    "list-actors-table": ("list", "actors", "--detail", "--format", "table"),
    "list-pgs": ("list", "placement-groups", "--detail"),
    "list-tasks": ("list", "tasks", "--filter", "state=PENDING_NODE_ASSIGNMENT", "--detail"),
    "summary-actors": ("summary", "actors"),
    "summary-tasks": ("summary", "tasks"),
}
# What the Python printouts run, one statement a line; each printed result follows its statement.
PYTHON_PRINTOUTS = (
    "ray.nodes()",
    "ray.cluster_resources()",
    "ray.available_resources()",
    "ray.util.state.list_actors(detail=True)",
)
# Autoscaler v2 prints the same sections with its own formatter; a subset shows its layout.
V2_SCENARIOS = ("healthy", "held-gpus", "gpu2-task", "strict-pack-gpu", "h100")


@dataclass
class Recording:
    autoscaler: str
    entries: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _status_text(cluster: LocalCluster) -> str:
    _, body = http_json(cluster.dashboard_url, STATUS_PATH, timeout=10)
    data = body.get("data") if isinstance(body, dict) else None
    text = data.get("clusterStatus") if isinstance(data, dict) else None
    return text if isinstance(text, str) else ""


def _wait_status(cluster: LocalCluster, needles: tuple[str, ...], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = _status_text(cluster)
        if text and all(needle in text for needle in needles):
            return True
        time.sleep(1.0)
    return False


def _ray_state(cluster: LocalCluster, args: tuple[str, ...]) -> str:
    """One `ray list`/`ray summary` command, as a terminal shows it: prompt line, then its output."""
    ray = str(RAY) if RAY.exists() else "ray"
    env = {**cluster.env, "RAY_ADDRESS": cluster.gcs_address}
    done = subprocess.run([ray, *args], env=env, capture_output=True, text=True, timeout=120, check=False)
    return f"$ ray {' '.join(args)}\n{done.stdout}" if done.returncode == 0 and done.stdout.strip() else ""


def _python_printouts(cluster: LocalCluster) -> str:
    """``print(...)`` of the state calls from a driver, each result after its statement's line."""
    code = (
        "import sys, ray, ray.util.state\n"
        f"ray.init(address={cluster.gcs_address!r}, namespace={NAMESPACE!r}, log_to_driver=False)\n"
        "for statement in sys.argv[1:]:\n"
        "    print('>>> print(' + statement + ')', flush=True)\n"
        "    print(eval(statement), flush=True)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, *PYTHON_PRINTOUTS],
        env=cluster.env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return done.stdout if done.returncode == 0 else ""


def _ray_status(cluster: LocalCluster, verbose: bool) -> str:
    args = [str(RAY) if RAY.exists() else "ray", "status", f"--address={cluster.gcs_address}"]
    if verbose:
        args.append("-v")
    done = subprocess.run(args, env=cluster.env, capture_output=True, text=True, timeout=120, check=False)
    return done.stdout


class Driver:
    """One driver process we own: started in its own session, stopped by its PID."""

    def __init__(self, cluster: LocalCluster, name: str, output: Path) -> None:
        # Ray prints the scheduler's and the autoscaler's messages to the driver's stdout, its own
        # log lines to stderr: both go to one file, in the order a terminal would show them.
        self.output_path = output
        self.ready_path = output.with_suffix(".ready")
        env = {**cluster.env, "RAY_ADDRESS": cluster.gcs_address, "PYTHONUNBUFFERED": "1"}
        command = [sys.executable, __file__, "--driver", name, "--address", cluster.gcs_address]
        with output.open("wb") as out:
            self.proc = subprocess.Popen(
                [*command, "--ready-file", str(self.ready_path)],
                stdin=subprocess.PIPE,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
            )

    def wait_ready(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.ready_path.exists():
                return True
            if self.proc.poll() is not None:
                return False
            time.sleep(0.5)
        return False

    def stop(self) -> None:
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)

    def output(self) -> str:
        return self.output_path.read_text(encoding="utf-8", errors="replace")


def _clean_up(cluster: LocalCluster, detached: tuple[str, ...], clear_requests: bool) -> None:
    """Kill the named detached actors and withdraw request_resources(), from a short-lived driver."""
    code = (
        "import ray, sys\n"
        f"ray.init(address={cluster.gcs_address!r}, namespace={NAMESPACE!r}, log_to_driver=False)\n"
        "for name in sys.argv[2:]:\n"
        "    try:\n"
        "        ray.kill(ray.get_actor(name))\n"
        "    except ValueError:\n"
        "        pass\n"
        "if sys.argv[1] == 'clear':\n"
        "    from ray.autoscaler.sdk import request_resources\n"
        "    request_resources(num_cpus=0, bundles=[])\n"
    )
    args = [sys.executable, "-c", code, "clear" if clear_requests else "keep", *detached]
    subprocess.run(args, env=cluster.env, capture_output=True, timeout=120, check=False)


def _source(autoscaler: str, scenario: str, output: str) -> str:
    return (
        f"tools/record_corpus.py --autoscaler {autoscaler} --scenario {scenario} ({output}; Ray {_version()})"
    )


def _version() -> str:
    import ray

    return str(ray.__version__)


def _entry(
    recording: Recording, scenario: Scenario, file: str, formats: list[str], output: str
) -> dict[str, Any]:
    quiet = scenario.cause is None
    return {
        "file": file,
        "kind": "quiet" if quiet else "recorded",
        "causes": [] if quiet else [scenario.cause],
        "also_ok": [],
        "layer": "healthy" if quiet else "ray",
        "formats": formats,
        "source": _source(recording.autoscaler, scenario.name, output),
        "what_happened": scenario.what,
    }


_WARNINGS = (
    "cannot be scheduled right now",
    "No available node types can fulfill",
    "infeasible resource requests",
)


def _warning_lines(output: str) -> bool:
    return any(warning in output for warning in _WARNINGS)


def record_scenario(cluster: LocalCluster, scenario: Scenario, recording: Recording, scratch: Path) -> None:
    stem = f"{recording.autoscaler}-{scenario.name}"
    log(f"scenario {stem}")
    for name in scenario.before:
        first = Driver(cluster, name, scratch / f"{stem}-{name}.out")
        ok = first.wait_ready(SHOW_S * 2)
        first.stop()
        if not ok:
            recording.notes.append(f"{stem}: driver {name} never became ready; skipped")
            return
    driver = Driver(cluster, scenario.driver or scenario.name, scratch / f"{stem}.out")
    started = time.monotonic()
    try:
        if not driver.wait_ready(SHOW_S * 2):
            recording.notes.append(f"{stem}: the driver never became ready; skipped")
            return
        if not _wait_status(cluster, scenario.shows, SHOW_S):
            recording.notes.append(f"{stem}: the autoscaler never showed {scenario.shows}; skipped")
            return
        outputs = {"status": _ray_status(cluster, False), "status-v": _ray_status(cluster, True)}
        for output, text in outputs.items():
            if "Autoscaler status" not in text:
                recording.notes.append(f"{stem}: `ray {output}` printed no status")
                continue
            file = f"{stem}-ray-{output}.txt"
            (OUT / file).write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
            verbose = output == "status-v"
            formats = ["ray-status-verbose"] if verbose else ["ray-status"]
            command = "ray status -v" if verbose else "ray status"
            recording.entries.append(_entry(recording, scenario, file, formats, command))
        plain = outputs["status"]
        for name in scenario.state:
            state = (
                _python_printouts(cluster) if name == "python" else _ray_state(cluster, STATE_OUTPUTS[name])
            )
            if not state or "Autoscaler status" not in plain:
                recording.notes.append(f"{stem}: {name} printed nothing")
                continue
            file = f"{stem}-status-and-{name}.txt"
            text = f"$ ray status\n{plain.rstrip()}\n\n{state.rstrip()}\n"
            (OUT / file).write_text(text, encoding="utf-8")
            command = (
                "print() of ray.nodes() and friends"
                if name == "python"
                else f"ray {' '.join(STATE_OUTPUTS[name])}"
            )
            recording.entries.append(
                _entry(
                    recording, scenario, file, ["ray-status", "ray-api-output"], f"ray status, then {command}"
                )
            )
        if scenario.warnings:
            deadline = started + scenario.warning_wait_s
            while time.monotonic() < deadline and not _warning_lines(driver.output()):
                time.sleep(1.0)
            if _warning_lines(driver.output()):
                time.sleep(3.0)  # the message arrives in pieces; let the rest of it land
                file = f"{stem}-driver-output.txt"
                (OUT / file).write_text(driver.output(), encoding="utf-8")
                recording.entries.append(
                    _entry(recording, scenario, file, ["ray-driver-warning"], "the driver's output")
                )
            else:
                recording.notes.append(f"{stem}: the driver printed no scheduling warning")
    finally:
        driver.stop()
        if scenario.detached or scenario.clears_requests:
            _clean_up(cluster, scenario.detached, scenario.clears_requests)
        idle = ("(no resource demands)", " 0.0/6.0 CPU", "From request_resources:\n (none)")
        if not _wait_status(cluster, idle, DRAIN_S):
            recording.notes.append(f"{stem}: the cluster did not drain within {DRAIN_S:g}s")


def record_cluster(autoscaler: str, names: list[str]) -> Recording:
    env = {"RAY_enable_autoscaler_v2": "1"} if autoscaler == "v2" else {}
    recording = Recording(autoscaler)
    cluster = LocalCluster(CLUSTER, extra_env=env, temp_prefix="rdcorp-")
    with cluster:
        cluster.start()
        scratch = cluster.temp_dir / "drivers"
        scratch.mkdir()
        for scenario in SCENARIOS:
            if scenario.name in names:
                record_scenario(cluster, scenario, recording, scratch)
    return recording


def _merge_expected(entries: list[dict[str, Any]]) -> None:
    path = OUT / "expected.json"
    old = json.loads(path.read_text(encoding="utf-8")) if path.exists() else []
    by_file = {entry["file"]: entry for entry in old}
    by_file.update({entry["file"]: entry for entry in entries})
    merged = [by_file[name] for name in sorted(by_file) if (OUT / name).exists()]
    path.write_text(json.dumps(merged, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--autoscaler", choices=("v1", "v2"), action="append")
    parser.add_argument("--scenario", choices=[s.name for s in SCENARIOS], action="append")
    parser.add_argument("--driver", choices=sorted(DRIVERS), help=argparse.SUPPRESS)
    parser.add_argument("--address", help=argparse.SUPPRESS)
    parser.add_argument("--ready-file", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.driver:
        return run_driver(args.driver, args.address, args.ready_file)
    OUT.mkdir(parents=True, exist_ok=True)
    began = time.monotonic()
    for autoscaler in args.autoscaler or ["v1", "v2"]:
        wanted = args.scenario or [s.name for s in SCENARIOS]
        if autoscaler == "v2" and not args.scenario:
            wanted = [name for name in wanted if name in V2_SCENARIOS]
        recording = record_cluster(autoscaler, wanted)
        _merge_expected(recording.entries)
        log(f"autoscaler {autoscaler}: {len(recording.entries)} cases")
        for note in recording.notes:
            log(f"note: {note}")
    log(f"done in {time.monotonic() - began:.0f}s; cases in {OUT.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
