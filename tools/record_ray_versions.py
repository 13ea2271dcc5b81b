"""Record what one Ray release shows for each broken scenario, from a real cluster of that release.

    .venv/bin/python tools/record_ray_versions.py 2.9.3                        # every scenario
    .venv/bin/python tools/record_ray_versions.py 2.9.3 --scenario held-a100   # one (repeatable)

For VERSION it makes (or reuses) the venv ``.venv-ray-<VERSION>`` at the repository root with
``ray[default,serve]==VERSION`` from PyPI plus the pins in ``PINS`` that the release needs on
Python 3.11, starts a 4-node loopback cluster with that venv's ``ray`` (``LocalCluster``, stopped
by PID; ``ray stop`` is never used), runs the scenario's driver (``ray_version_scenarios.py``) with
that venv's ``python``, waits with bounded polling until the scenario has settled, and records as
raw bytes under ``tests/fixtures/ray/<VERSION>/<scenario>/``:

- ``ray status``, ``ray status -v``, ``serve status`` (Serve scenario only), ``ray list actors /
  tasks / placement-groups --detail``: ``<name>.txt`` (stdout) and ``<name>.stderr.txt`` when
  the command wrote to stderr; the exit status is in ``_recording.json``;
- every dashboard endpoint the collector reads (``ENDPOINTS`` of ``record_ray_fixtures.py`` and
  the collector's ``FALLBACKS``): ``<key>.json`` or ``<key>.txt`` whatever the HTTP status, which
  ``_recording.json`` gives next to the path (a 404 is recorded, not skipped);
- ``driver.stdout.txt`` / ``driver.stderr.txt``: what the scenario's driver printed, Ray's
  warnings included;
- ``_recording.json``: the Ray version and commit, Python, when, the scenario and what it built,
  the cluster, the venv's requirements, whether each wait settled, and every file's source.

One cluster at a time, one per scenario: a fresh cluster keeps scenarios from leaking into each
other (a detached actor outlives its job by design).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import functools
import json
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
TOOLS = Path(__file__).resolve().parent
for _path in (REPO, TOOLS):  # run as a script from anywhere: bot/ and the sibling tools import
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from ray_version_scenarios import BUILDERS, DESCRIPTIONS, READY_LINE  # noqa: E402
from record_ray_fixtures import ENDPOINTS  # noqa: E402

from bot.collect.ray_dashboard import FALLBACKS  # noqa: E402
from bot.demo.local_ray import LocalCluster, NodeSpec, dig_list, http_json, log, wait_for  # noqa: E402

FIXTURES = REPO / "tests" / "fixtures" / "ray"
SCENARIO_SCRIPT = TOOLS / "ray_version_scenarios.py"
SCENARIOS = [name for name in DESCRIPTIONS]

# Extra requirements by release, (first version it applies to, first it no longer does, pin, why).
# Without them pip takes today's newest dependency, which an old release may not import or start.
# Checked against the wheels' metadata and source; "precaution" marks a pin not shown necessary.
PINS: list[tuple[str, str, str, str]] = [
    (
        "2.0.0",
        "2.10.0",
        "pydantic<2",
        "2.5 asks for any pydantic and uses v1 APIs (no ray/_private/pydantic_compat.py yet); "
        "2.9 accepts v1 or >=2.5: kept on v1 up to 2.9 so those recordings share one pydantic",
    ),
    (
        "2.0.0",
        "2.9.0",
        "async-timeout",
        "2.5's dashboard imports async_timeout (modules/test/test_utils.py), which aiohttp no longer "
        "installs on Python 3.11: without it the head's dashboard, and so `ray start --head`, fails",
    ),
    (
        "2.0.0",
        "2.9.0",
        "protobuf<5.26",
        "2.5's dashboard passes MessageToDict(including_default_value_fields=...), which protobuf "
        "5.26 removed: every state API answer is a TypeError (2.9 has ray/_private/protobuf_compat.py)",
    ),
    (
        "2.41.0",
        "2.60.0",
        "protobuf<7",
        "Serve's config.py reads FieldDescriptor.label, which protobuf 7 removed: serve.run fails with "
        "AttributeError (seen on 2.50.1; 2.40.0 lacks that code, 2.60.0 handles protobuf 7)",
    ),
    ("2.0.0", "2.31.0", "numpy<2", "precaution: these wheels predate numpy 2 (June 2024)"),
    (
        "2.0.0",
        "2.20.0",
        "setuptools<70",
        "up to 2.9 the Job SDK (dashboard/dashboard_sdk.py, job/sdk.py) imports pkg_resources at "
        "module level (not in 2.20); setuptools is dropping pkg_resources",
    ),
]
# Every endpoint the collector reads, under the key ray_json.ray_state takes; fallbacks under their own key.
RECORDED_ENDPOINTS: dict[str, str] = {
    **ENDPOINTS,
    **{f"{key}_fallback": path for key, path in FALLBACKS.items()},
}
# Very long answers (cluster events, many tasks) are cut to this many rows per list.
MAX_BODY_BYTES = 200_000
MAX_ROWS = 50
SETTLE_S = 120.0

# No node labels: ``--labels`` took JSON before 2.4x and ``k=v`` pairs after, and nothing read here
# depends on them.
CLUSTER = [
    NodeSpec("127.0.0.21", num_cpus=1),
    NodeSpec(
        "127.0.0.22",
        num_cpus=2,
        num_gpus=1,
        resources={"accelerator_type:A100": 1},
    ),
    NodeSpec(
        "127.0.0.23",
        num_cpus=2,
        num_gpus=1,
        resources={"accelerator_type:T4": 1},
    ),
    NodeSpec("127.0.0.24", num_cpus=2),
]


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split(".")[:3] if part.isdigit())


def requirements(version: str) -> list[str]:
    key = _version_key(version)
    pins = [pin for low, high, pin, _ in PINS if _version_key(low) <= key < _version_key(high)]
    return [f"ray[default,serve]=={version}", *pins]


def venv_for(version: str) -> Path:
    """The venv of ``version``, made from PyPI unless one with the same requirements exists."""
    venv = REPO / f".venv-ray-{version}"
    python = venv / "bin" / "python"
    marker = venv / "raydiag-requirements.txt"
    wanted = "\n".join(requirements(version)) + "\n"
    if python.exists() and marker.exists() and marker.read_text() == wanted:
        log(f"reusing {venv.name}")
        return venv
    began = time.monotonic()
    log(f"making {venv.name}: {' '.join(requirements(version))}")
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *requirements(version)],
        check=True,
    )
    marker.write_text(wanted)
    log(f"made {venv.name} in {time.monotonic() - began:.0f}s")
    return venv


def venv_facts(venv: Path) -> dict[str, Any]:
    code = (
        "import json, sys, ray; from importlib import metadata as m\n"
        "names = ['pydantic', 'numpy', 'protobuf', 'grpcio', 'aiohttp', 'fastapi', 'setuptools']\n"
        "print(json.dumps({'ray_version': ray.__version__, 'ray_commit': getattr(ray, '__commit__', None),"
        " 'python': sys.version.split()[0], 'packages': {n: m.version(n) for n in names if _has(n)}}))\n"
    )
    helper = "from importlib import metadata as _m\ndef _has(n):\n    try:\n        _m.version(n)\n"
    helper += "        return True\n    except Exception:\n        return False\n"
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-c", helper + code], capture_output=True, text=True, check=True
    )
    facts: dict[str, Any] = json.loads(done.stdout)
    facts["requirements"] = (venv / "raydiag-requirements.txt").read_text().split()
    return facts


# --- waiting until a scenario has settled ---------------------------------------------------------


def _rows(cluster: LocalCluster, key: str) -> list[dict[str, Any]]:
    _, body = http_json(cluster.dashboard_url, ENDPOINTS[key], timeout=20)
    return [row for row in dig_list(body, "data", "result", "result") if isinstance(row, dict)]


def _autoscaler_text(cluster: LocalCluster) -> str:
    _, body = http_json(cluster.dashboard_url, ENDPOINTS["cluster_status_formatted"], timeout=20)
    return json.dumps(body)


def _demands(cluster: LocalCluster) -> str:
    """The autoscaler report's demand section: it names what waits (usage names every resource)."""
    return _autoscaler_text(cluster).partition("Demands")[2]


def _pending(cluster: LocalCluster, key: str, name: str, states: set[str]) -> bool:
    return any(row.get("name") == name and row.get("state") in states for row in _rows(cluster, key))


def _serve_failed(cluster: LocalCluster) -> bool:
    texts = [
        json.dumps(http_json(base, path, timeout=20)[1])
        for base in (cluster.dashboard_url, cluster.head_agent_url)
        for path in (ENDPOINTS["serve_applications"], FALLBACKS["serve_applications"])
    ]
    return any("DEPLOY_FAILED" in text for text in texts)


Check = Callable[[LocalCluster], bool]
TASK_WAITING = {"PENDING_NODE_ASSIGNMENT", "PENDING_ARGS_AVAIL", "PENDING_SCHEDULING"}
ACTOR_WAITING = {"PENDING_CREATION", "DEPENDENCIES_UNREADY"}
SETTLED: dict[str, list[tuple[str, Check]]] = {
    "held-a100": [
        ("gpu-waiter pending", lambda c: _pending(c, "actors", "gpu-waiter", ACTOR_WAITING)),
        ("autoscaler reports the A100 demand", lambda c: "A100" in _demands(c)),
    ],
    "too-many-gpus": [
        ("train-step-gpu4 pending", lambda c: _pending(c, "pending_tasks", "train-step-gpu4", TASK_WAITING)),
        ("autoscaler reports GPU 4", lambda c: "'GPU': 4.0" in _demands(c)),
    ],
    "gpu-type-missing": [
        ("train-step-h100 pending", lambda c: _pending(c, "pending_tasks", "train-step-h100", TASK_WAITING)),
        ("autoscaler reports H100", lambda c: "H100" in _demands(c)),
    ],
    "strict-pack-pg": [
        ("train-pg pending", lambda c: _pending(c, "placement_groups", "train-pg", {"PENDING"})),
        ("autoscaler reports STRICT_PACK", lambda c: "STRICT_PACK" in _demands(c)),
    ],
    "detached-leftover": [
        ("gpu-holder alive", lambda c: _pending(c, "actors_alive", "gpu-holder", {"ALIVE"})),
        ("train-step-a100 pending", lambda c: _pending(c, "pending_tasks", "train-step-a100", TASK_WAITING)),
        ("autoscaler reports the A100 demand", lambda c: "A100" in _demands(c)),
    ],
    "serve-constructor-fails": [("broken-app DEPLOY_FAILED", _serve_failed)],
    "healthy": [
        ("counter alive", lambda c: _pending(c, "actors_alive", "counter", {"ALIVE"})),
        ("autoscaler reports the actor's CPU 0.5", lambda c: "0.5/" in _autoscaler_text(c)),
    ],
}


# --- recording ------------------------------------------------------------------------------------


def _capped(raw: bytes) -> tuple[bytes, bool]:
    """``raw`` as it came, unless it is very long JSON: then each list is cut to MAX_ROWS rows."""
    if len(raw) <= MAX_BODY_BYTES:
        return raw, False
    try:
        body = json.loads(raw)
    except ValueError:
        return raw[:MAX_BODY_BYTES], True

    def cut(value: Any) -> Any:
        if isinstance(value, list):
            return [cut(item) for item in value[:MAX_ROWS]]
        if isinstance(value, dict):
            return {key: cut(item) for key, item in value.items()}
        return value

    return json.dumps(cut(body)).encode(), True


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return int(response.status), bytes(response.read())
    except urllib.error.HTTPError as err:
        return int(err.code), bytes(err.read())
    except (urllib.error.URLError, OSError) as err:
        return 0, f"{type(err).__name__}: {err}".encode()


def record_endpoints(cluster: LocalCluster, folder: Path, serve_on_dashboard: bool) -> dict[str, Any]:
    """Every dashboard endpoint the collector reads; on a release whose dashboard has no Serve API
    (2.0-2.7), also the Serve paths on the head's dashboard agent, as ``<key>_agent`` with
    ``"base": "agent"`` (what `serve status` reads there; the collector does not)."""
    asked = [(key, path, "dashboard") for key, path in RECORDED_ENDPOINTS.items()]
    if not serve_on_dashboard:
        asked += [
            (f"{key}_agent", path, "agent")
            for key, path in RECORDED_ENDPOINTS.items()
            if key.startswith("serve_applications")
        ]
    index: dict[str, Any] = {}
    for key, path, base in asked:
        url = (cluster.dashboard_url if base == "dashboard" else cluster.head_agent_url) + path
        status, raw = _get(url)
        raw, capped = _capped(raw)
        try:
            json.loads(raw)
            name = f"{key}.json"
        except ValueError:
            name = f"{key}.txt"
        (folder / name).write_bytes(raw)
        index[key] = {
            "path": path,
            "base": base,
            "status": status,
            "file": name,
            "bytes": len(raw),
            "capped": capped,
        }
    return index


def _dashboard_has_serve_api(cluster: LocalCluster) -> bool:
    return _get(cluster.dashboard_url + "/api/serve/applications/")[0] != 404


def record_commands(
    cluster: LocalCluster, venv: Path, folder: Path, serve: bool, serve_on_dashboard: bool
) -> dict[str, Any]:
    ray, gcs, api = str(venv / "bin" / "ray"), cluster.gcs_address, cluster.dashboard_url
    commands: dict[str, list[str]] = {
        "ray_status": [ray, "status", f"--address={gcs}"],
        "ray_status_v": [ray, "status", "-v", f"--address={gcs}"],
        "ray_list_actors": [ray, "list", "actors", "--detail", f"--address={api}"],
        "ray_list_tasks": [ray, "list", "tasks", "--detail", f"--address={api}"],
        "ray_list_placement_groups": [ray, "list", "placement-groups", "--detail", f"--address={api}"],
    }
    if serve:
        # Ray 2.0-2.7 serve the Serve REST API (which `serve status` reads) from the dashboard agent;
        # asked through the dashboard, their CLI only says the version check returned 404.
        serve_api = api if serve_on_dashboard else cluster.head_agent_url
        commands["serve_status"] = [str(venv / "bin" / "serve"), "status", f"--address={serve_api}"]
    index: dict[str, Any] = {}
    for name, argv in commands.items():
        try:
            done = subprocess.run(argv, capture_output=True, env=cluster.env, timeout=120, check=False)
            out, err, rc = done.stdout, done.stderr, done.returncode
        except subprocess.TimeoutExpired as timeout:
            out, err, rc = timeout.stdout or b"", timeout.stderr or b"", None
        kept, capped = _capped(out)
        (folder / f"{name}.txt").write_bytes(kept)
        if err:
            (folder / f"{name}.stderr.txt").write_bytes(_capped(err)[0])
        shown = [Path(argv[0]).name, *argv[1:]]
        index[name] = {
            "argv": shown,
            "rc": rc,
            "stdout_bytes": len(out),
            "stderr_bytes": len(err),
            "capped": capped,
        }
    return index


def _wait_ready(driver: subprocess.Popen[bytes], out: Path, scenario: str) -> bool:
    line = f"{READY_LINE} {scenario}".encode()
    return (
        wait_for(
            lambda: line in out.read_bytes().splitlines() or driver.poll() is not None,
            240,
            f"driver of {scenario}",
        )
        and driver.poll() is None
    )


def run_scenario(version: str, venv: Path, facts: dict[str, Any], scenario: str) -> bool:
    folder = FIXTURES / version / scenario
    began = time.monotonic()
    cluster = LocalCluster(CLUSTER, ray=venv / "bin" / "ray", temp_prefix="rdver-")
    log(f"{version} {scenario}: temp dir {cluster.temp_dir}")
    ok = False
    out, err = cluster.temp_dir / "driver.stdout.txt", cluster.temp_dir / "driver.stderr.txt"
    # As a context manager: SIGTERM or SIGHUP to the recorder also unwinds into stop().
    with cluster:
        cluster.keep_logs = True  # until the scenario has settled
        cluster.start()
        argv = [
            str(venv / "bin" / "python"),
            str(SCENARIO_SCRIPT),
            scenario,
            cluster.gcs_address,
            cluster.head_ip,
        ]
        with out.open("wb") as stdout, err.open("wb") as stderr:
            driver = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=stdout,
                stderr=stderr,
                env=cluster.env,
                start_new_session=True,
            )
        cluster.procs.append(driver)  # stopped with the cluster, by PID, whatever happens
        ready = _wait_ready(driver, out, scenario)
        settled: dict[str, bool] = {}
        for what, check in SETTLED[scenario]:
            settled[what] = wait_for(functools.partial(check, cluster), SETTLE_S, what)
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        serve_on_dashboard = _dashboard_has_serve_api(cluster)  # asked once, for both
        endpoints = record_endpoints(cluster, folder, serve_on_dashboard)
        commands = record_commands(
            cluster, venv, folder, serve=scenario.startswith("serve"), serve_on_dashboard=serve_on_dashboard
        )
        if driver.stdin is not None:
            with contextlib.suppress(OSError):
                driver.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            driver.wait(timeout=60)
        for source in (out, err):
            (folder / source.name).write_bytes(_capped(source.read_bytes())[0])
        meta = {
            **{key: facts[key] for key in ("ray_version", "ray_commit", "python")},
            "requested_version": version,
            "recorded_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "scenario": scenario,
            "built": DESCRIPTIONS[scenario],
            "driver": {"ready": ready, "rc": driver.returncode},
            "settled": settled,
            "nodes": [
                {"ip": s.ip, "num_cpus": s.num_cpus, "num_gpus": s.num_gpus, "resources": s.resources}
                for s in CLUSTER
            ],
            "venv": {"requirements": facts["requirements"], "packages": facts["packages"]},
            "seconds": round(time.monotonic() - began),
            "endpoints": endpoints,
            "commands": commands,
        }
        (folder / "_recording.json").write_text(json.dumps(meta, indent=2) + "\n")
        ok = ready and all(settled.values())
        log(f"wrote {folder.relative_to(REPO)} (ready={ready}, settled={settled})")
        cluster.keep_logs = not ok
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("version", help="a Ray release on PyPI, e.g. 2.9.3")
    parser.add_argument("--scenario", choices=SCENARIOS, action="append", help="default: every scenario")
    args = parser.parse_args()
    venv = venv_for(args.version)
    facts = venv_facts(venv)
    if facts["ray_version"] != args.version:
        log(f"{venv.name} has Ray {facts['ray_version']}, not {args.version}")
        return 2
    failed = [
        name for name in args.scenario or SCENARIOS if not run_scenario(args.version, venv, facts, name)
    ]
    if failed:
        log(f"not settled (recorded anyway, logs kept): {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    assert set(SETTLED) == set(SCENARIOS) <= set(BUILDERS)
    sys.exit(main())
