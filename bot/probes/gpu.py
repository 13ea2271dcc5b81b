"""The one-GPU probe: does a plain GPU task run on this Ray cluster, and where?

The probe is a Ray job submitted over the dashboard's HTTP Job Submission API; raydiag itself never
calls ``ray.init`` (one bot serves clusters of many Ray versions). The job's entrypoint is a short
Python script given inline (``python -c``), so nothing is uploaded and no runtime environment is
built. Inside the cluster that script connects with ``ray.init()``, runs one task that asks for one
GPU (and, with ``gpu_type``, a sliver of ``accelerator_type:<type>``), and prints one marker line of
JSON with the node id, node IP, ``CUDA_VISIBLE_DEVICES`` and the number of GPUs the task can see.

The probe never keeps a GPU and never leaves a demand behind:

- the task asks for the GPU, not the driver: the entrypoint reserves nothing (no
  ``entrypoint_num_gpus``; the server's default is 0) and the task asks for no CPU, so a busy CPU
  cannot make a healthy GPU look missing;
- the job is polled until it ends; when time runs out first, it is stopped and polled again
  (bounded) until Ray reports it STOPPED or FAILED. A stopped driver takes its pending task with it,
  so no autoscaler keeps scaling for a probe nobody waits for;
- time is counted in two parts, so that a slow start is not read as a missing GPU: the job's driver
  has ``start_timeout_s`` (default: ``timeout_s``) from submission to connect to the cluster (its
  ``STARTED`` line), and from then on the task has ``timeout_s`` to get its GPU and report. A busy
  head that is slow to start a Python process delays the probe; it does not make it ``pending``;
- every HTTP request has a timeout (the Ray client's own requests have none).

Submission ids start with ``raydiag-probe-`` so a leftover is easy to recognise in ``ray job list``.
"""

from __future__ import annotations

import contextlib
import json
import shlex
import time
import uuid
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from bot.probes import Outcome
from bot.snapshot.redact import redact

SUBMISSION_PREFIX = "raydiag-probe-"
MARK = "RAYDIAG_PROBE:"
TASK_NAME = "raydiag_gpu_probe"
ACCELERATOR_PREFIX = "accelerator_type:"
# The slice of the GPU-type resource the task asks for: Ray's own convention for accelerator_type.
TYPE_SHARE = 0.001
TERMINAL = frozenset({"SUCCEEDED", "FAILED", "STOPPED"})
LOG_TAIL_LINES = 20
MAX_ERROR_CHARS = 1500
SCRIPT_PLACEHOLDER = "<the raydiag GPU probe script>"
# (connect, read) seconds for each request to the job server.
REQUEST_TIMEOUT_S = (3.0, 15.0)

# Runs inside the cluster, on the cluster's Ray and Python: plain Python 3 that old Ray 2.x also
# understands. The placeholders are filled with Python literals written in double quotes, so the
# script has no single quote and ``shlex.quote`` wraps it in one pair.
_SCRIPT = """\
import json, os, shutil, socket, subprocess, sys
MARK = {mark}
RESOURCE = {resource}
TASK_NAME = {task_name}


def emit(kind, payload):
    print(MARK + kind + " " + json.dumps(payload, default=str), flush=True)


def visible_devices():
    notes = []
    try:
        import torch
        return int(torch.cuda.device_count()), "torch.cuda.device_count()", None
    except Exception as error:
        notes.append("torch: " + (type(error).__name__ + ": " + str(error))[:160])
    smi = shutil.which("nvidia-smi")
    if smi:
        try:
            out = subprocess.run([smi, "-L"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 universal_newlines=True, timeout=20)
            if out.returncode == 0:
                count = sum(1 for line in out.stdout.splitlines() if line.startswith("GPU "))
                return count, "nvidia-smi -L", "nvidia-smi lists every GPU of the container, " \\
                    "whatever CUDA_VISIBLE_DEVICES says"
            notes.append("nvidia-smi -L: exit %d: %s" % (out.returncode, out.stdout.strip()[:160]))
        except Exception as error:
            notes.append("nvidia-smi -L: " + str(error)[:160])
    else:
        notes.append("nvidia-smi: not on PATH")
    try:
        import pynvml
        pynvml.nvmlInit()
        try:
            return int(pynvml.nvmlDeviceGetCount()), "NVML", "NVML counts every GPU of the container, " \\
                "whatever CUDA_VISIBLE_DEVICES says"
        finally:
            pynvml.nvmlShutdown()
    except Exception as error:
        notes.append("pynvml: " + (type(error).__name__ + ": " + str(error))[:160])
    return None, None, "no way to count devices in the worker: " + "; ".join(notes)


def probe():
    import ray
    context = ray.get_runtime_context()
    node_id = context.get_node_id() if hasattr(context, "get_node_id") else context.node_id.hex()
    count, source, note = visible_devices()
    return {{
        "node_id": node_id,
        "node_ip": ray.util.get_node_ip_address(),
        "hostname": socket.gethostname(),
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
        "gpu_ids": [str(gpu) for gpu in ray.get_gpu_ids()],
        "device_count": count,
        "device_count_source": source,
        "device_note": note,
    }}


import ray
ray.init()
totals = ray.cluster_resources()
emit("STARTED", {{
    "ray_version": ray.__version__,
    "cluster_gpus": totals.get("GPU", 0),
    "resource_total": totals.get(RESOURCE, 0) if RESOURCE else None,
}})
options = {{"num_gpus": 1, "num_cpus": 0, "max_retries": 0, "name": TASK_NAME}}
if RESOURCE:
    options["resources"] = {{RESOURCE: {share}}}
try:
    found = ray.get(ray.remote(probe).options(**options).remote())
except Exception as error:
    emit("ERROR", {{"error": (type(error).__name__ + ": " + str(error))[-1500:]}})
    sys.exit(1)
emit("RESULT", found)
"""


@dataclass(frozen=True)
class GpuProbeResult:
    """Facts about one probe run; the sentences for ``outcome`` are in ``bot.probes.PROBE_MESSAGES``."""

    outcome: Outcome
    dashboard_url: str
    gpu_resource: str | None = None  # "accelerator_type:A100" when a GPU type was asked for
    submission_id: str | None = None
    job_status: str | None = None  # the last status Ray reported: SUCCEEDED, STOPPED, FAILED, ...
    stopped_after_timeout: bool = False
    driver_started: bool = False  # the job's script reached the cluster (ray.init returned)
    node_id: str | None = None
    node_ip: str | None = None
    hostname: str | None = None  # the Pod name, on Kubernetes
    cuda_visible_devices: str | None = None
    gpu_ids: tuple[str, ...] = ()
    device_count: int | None = None
    device_count_source: str | None = None  # "torch.cuda.device_count()", "nvidia-smi -L", "NVML"
    device_note: str | None = None
    ray_version: str | None = None  # of the cluster
    cluster_gpus: float | None = None  # GPUs registered in Ray, cluster-wide, when the driver started
    resource_total: float | None = None  # of gpu_resource, cluster-wide: 0 means no node registers it
    elapsed_s: float = 0.0
    error: str | None = None  # why it was unreachable, rejected or failed (redacted)
    log_tail: tuple[str, ...] = ()  # the job's last log lines when it failed (redacted)
    notes: tuple[str, ...] = field(default=())

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def gpu_resource(gpu_type: str | None) -> str | None:
    """``"A100"`` and ``"accelerator_type:A100"`` both name ``accelerator_type:A100``; ``None`` stays."""
    if gpu_type is None or not gpu_type.strip():
        return None
    name = gpu_type.strip()
    return name if ":" in name else ACCELERATOR_PREFIX + name


def probe_script(resource: str | None) -> str:
    """The Python source the job runs inside the cluster."""
    return _SCRIPT.format(
        mark=_literal(MARK),
        resource=_literal(resource),
        task_name=_literal(TASK_NAME),
        share=repr(TYPE_SHARE),
    )


def _literal(value: str | None) -> str:
    # A JSON string is a valid Python string literal, in double quotes.
    return "None" if value is None else json.dumps(value)


def probe_entrypoint(resource: str | None, python: str = "python") -> str:
    """The job's shell command: the script inline, quoted for ``sh``."""
    return f"{shlex.quote(python)} -c {shlex.quote(probe_script(resource))}"


def new_submission_id() -> str:
    return SUBMISSION_PREFIX + uuid.uuid4().hex[:12]


def parse_markers(logs: str) -> dict[str, dict[str, Any]]:
    """``{"STARTED": {...}, "RESULT": {...}, "ERROR": {...}}`` from the job's logs; the last of each."""
    found: dict[str, dict[str, Any]] = {}
    for line in logs.splitlines():
        text = line.strip()
        if not text.startswith(MARK):
            continue
        kind, _, payload = text.removeprefix(MARK).partition(" ")
        try:
            parsed = json.loads(payload)
        except ValueError:
            continue
        if isinstance(parsed, dict):
            found[kind] = parsed
    return found


def _client(dashboard_url: str, timeout: tuple[float, float]) -> Any:
    """A JobSubmissionClient whose every request has a timeout; HTTP only, no ``ray.init``."""
    from ray.job_submission import JobSubmissionClient  # noqa: PLC0415 - lazy: Ray takes seconds to import

    class BoundedClient(JobSubmissionClient):
        def _do_request(self, method: str, endpoint: str, **kwargs: Any) -> Any:
            kwargs.setdefault("timeout", timeout)
            return super()._do_request(method, endpoint, **kwargs)

    return BoundedClient(dashboard_url.rstrip("/"))


def _status(client: Any, submission_id: str) -> str:
    status = client.get_job_status(submission_id)
    return str(getattr(status, "value", status))


def _reason(error: BaseException) -> str:
    text = " ".join(str(error).split())
    if "timed out" in text.lower() or "timeout" in type(error).__name__.lower():
        return f"no answer in time ({type(error).__name__})"
    if "refused" in text.lower():
        return f"connection refused ({text[:200]})"
    return redact(f"{type(error).__name__}: {text[:400]}")


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def run_gpu_probe(
    dashboard_url: str,
    *,
    gpu_type: str | None = None,
    timeout_s: float = 60,
    poll_s: float = 1.0,
    python: str = "python",
    stop_wait_s: float = 30.0,
    start_timeout_s: float | None = None,
) -> GpuProbeResult:
    """Submit the one-GPU probe job, wait for it (the driver ``start_timeout_s`` to connect, then
    the task ``timeout_s`` to run), report.

    Blocks for up to ``start_timeout_s + timeout_s + stop_wait_s`` plus a few request timeouts; run
    it off the event loop. Never raises for anything the cluster does: every failure is an
    ``outcome``. ``python`` is the interpreter on the head that has Ray (``python`` in Ray's images).
    """
    began = time.monotonic()
    resource = gpu_resource(gpu_type)
    url = dashboard_url.rstrip("/")

    def result(outcome: Outcome, **facts: Any) -> GpuProbeResult:
        return GpuProbeResult(
            outcome=outcome,
            dashboard_url=url,
            gpu_resource=resource,
            elapsed_s=round(time.monotonic() - began, 3),
            **facts,
        )

    try:
        client = _client(url, REQUEST_TIMEOUT_S)
    except OSError as error:  # ConnectionError, requests' errors, DNS: the dashboard is not there
        return result("unreachable", error=_reason(error))
    except Exception as error:  # not a Ray dashboard, a Ray without the Jobs API, a proxy's login page
        return result("rejected", error=_reason(error))

    submission_id = new_submission_id()
    entrypoint = probe_entrypoint(resource, python)
    try:
        client.submit_job(
            entrypoint=entrypoint,
            submission_id=submission_id,
            metadata={"raydiag": "gpu-probe", "gpu_resource": resource or ""},
        )
    except OSError as error:
        # The request may have arrived before the connection broke: stop whatever it started.
        _stop_quietly(client, submission_id)
        return result("unreachable", submission_id=submission_id, error=_reason(error))
    except Exception as error:
        return result("rejected", submission_id=submission_id, error=_reason(error))

    try:
        status, timed_out = _wait(
            client,
            submission_id,
            timeout_s,
            poll_s,
            timeout_s if start_timeout_s is None else start_timeout_s,
        )
    except _Lost as lost:
        _stop_quietly(client, submission_id)
        return result(
            "unreachable",
            submission_id=submission_id,
            job_status=lost.status,
            error="lost the dashboard while waiting: " + lost.reason,
            notes=(f"if it comes back, check `ray job status {submission_id}` and stop it",),
        )
    except BaseException as error:  # interrupted or cancelled: the job must not outlive the probe
        _stop_quietly(client, submission_id)
        if not isinstance(error, Exception):
            raise
        return result("failed", submission_id=submission_id, error=_reason(error))

    notes: list[str] = []
    stopped = False
    if timed_out:
        status, stopped = _stop_and_wait(client, submission_id, status, stop_wait_s, poll_s)
        if status not in TERMINAL:
            notes.append(
                f"asked Ray to stop the job, but it was still {status} after {stop_wait_s:g}s; "
                f"check `ray job status {submission_id}`"
            )

    # Ray echoes the entrypoint into the logs and the job's message: the whole script, every time.
    logs = _logs(client, submission_id).replace(entrypoint, SCRIPT_PLACEHOLDER)
    markers = parse_markers(logs)
    started = markers.get("STARTED", {})
    facts: dict[str, Any] = {
        "submission_id": submission_id,
        "job_status": status,
        "stopped_after_timeout": stopped,
        "driver_started": "STARTED" in markers,
        "ray_version": _text(started.get("ray_version")),
        "cluster_gpus": _number(started.get("cluster_gpus")),
        "resource_total": _number(started.get("resource_total")),
    }
    found = markers.get("RESULT")
    if found is not None:
        return result("ran", **facts, **_placement(found), notes=tuple(notes))
    if timed_out:
        if not facts["driver_started"]:
            notes.append(
                "the job's driver had not connected to the cluster when time ran out: the job itself "
                "may be what is stuck (its runtime environment, or a busy head), not the GPU task"
            )
        elif resource is not None and facts["resource_total"] == 0:
            notes.append(f"no Ray node registers {resource}")
        return result("pending_timeout", **facts, notes=tuple(notes))
    reported = markers.get("ERROR", {}).get("error")
    # Ray's message repeats the last logs (log_tail has them, without the echoed script): one line.
    message = (_job_message(client, submission_id) or "").split(", last available logs")[0].strip()
    why = str(reported or message or f"the job ended {status} without a result")
    return result(
        "failed",
        **facts,
        error=redact(why[:MAX_ERROR_CHARS]),
        log_tail=tuple(redact(line) for line in logs.splitlines()[-LOG_TAIL_LINES:]),
        notes=tuple(notes),
    )


def _placement(found: Mapping[str, Any]) -> dict[str, Any]:
    count = found.get("device_count")
    gpu_ids = found.get("gpu_ids")
    return {
        "node_id": _text(found.get("node_id")),
        "node_ip": _text(found.get("node_ip")),
        "hostname": _text(found.get("hostname")),
        "cuda_visible_devices": _text(found.get("cuda_visible_devices")),
        "gpu_ids": tuple(str(g) for g in gpu_ids) if isinstance(gpu_ids, list) else (),
        "device_count": count if isinstance(count, int) and not isinstance(count, bool) else None,
        "device_count_source": _text(found.get("device_count_source")),
        "device_note": _text(found.get("device_note")),
    }


class _Lost(Exception):
    """The dashboard stopped answering while the job ran."""

    def __init__(self, status: str, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


def _wait(
    client: Any, submission_id: str, timeout_s: float, poll_s: float, start_timeout_s: float
) -> tuple[str, bool]:
    """Poll until the job ends or time runs out: ``start_timeout_s`` for its driver to connect (the
    ``STARTED`` line in its logs), then ``timeout_s``; (last status, whether time ran out)."""
    deadline = time.monotonic() + start_timeout_s
    started = False
    status = "PENDING"
    while True:
        try:
            status = _status(client, submission_id)
        except OSError as error:
            raise _Lost(status, _reason(error)) from error
        if status in TERMINAL:
            return status, False
        if not started and status == "RUNNING" and MARK + "STARTED" in _logs(client, submission_id):
            started = True
            deadline = time.monotonic() + timeout_s
        left = deadline - time.monotonic()
        if left <= 0:
            return status, True
        time.sleep(max(0.05, min(poll_s, left)))


def _stop_and_wait(
    client: Any, submission_id: str, status: str, wait_s: float, poll_s: float
) -> tuple[str, bool]:
    """Stop the job and poll until Ray says it ended; (last status, whether it ended by the stop)."""
    _stop_quietly(client, submission_id)
    deadline = time.monotonic() + wait_s
    while True:
        with contextlib.suppress(Exception):  # a hiccup while waiting: keep trying until the bound
            status = _status(client, submission_id)
        if status in TERMINAL:
            return status, status in ("STOPPED", "FAILED")
        if time.monotonic() >= deadline:
            return status, False
        time.sleep(max(0.05, min(poll_s, 0.5)))


def _stop_quietly(client: Any, submission_id: str) -> None:
    try:
        client.stop_job(submission_id)
    except Exception:  # not found (never arrived), already ended, or the dashboard is gone
        return


def _logs(client: Any, submission_id: str) -> str:
    try:
        logs = client.get_job_logs(submission_id)
    except Exception:
        return ""
    return logs if isinstance(logs, str) else ""


def _job_message(client: Any, submission_id: str) -> str | None:
    try:
        info = client.get_job_info(submission_id)
    except Exception:
        return None
    message = getattr(info, "message", None)
    return message if isinstance(message, str) and message else None


__all__ = [
    "MARK",
    "SUBMISSION_PREFIX",
    "TASK_NAME",
    "GpuProbeResult",
    "gpu_resource",
    "new_submission_id",
    "parse_markers",
    "probe_entrypoint",
    "probe_script",
    "run_gpu_probe",
]
