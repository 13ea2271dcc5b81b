"""Application-level failures that look like waiting: Serve apps that never get healthy, jobs
that failed while people watched for them to be scheduled.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Literal

from bot.catalogue import Rule
from bot.classify.context import Context
from bot.classify.registry import Hit, detector
from bot.diagnosis import Evidence, Subject
from bot.facts import MissingEndpoint
from bot.snapshot.base import StrictRecord
from bot.snapshot.kubernetes import RayJobObject

_BAD_SERVE = {"DEPLOY_FAILED", "UNHEALTHY"}
_FAILED_JOB = {"FAILED"}


@detector("serve_status", ("app", "deployment", "status", "message", "service"))
def serve_status(ctx: Context, rule: Rule) -> Iterable[Hit]:
    reported: set[str] = set()
    for app in ctx.ray.serve_applications if ctx.ray else []:
        bad = [d for d in app.deployments if d.status.upper() in _BAD_SERVE]
        if app.status.upper() not in _BAD_SERVE and not bad:
            continue
        reported.add(app.name)
        evidence = [
            Evidence(source=f"serve application {app.name}", text=f"{app.status}: {app.message}".strip(": "))
        ]
        evidence += [
            Evidence(source=f"serve deployment {d.name}", text=f"{d.status}: {d.message}".strip(": "))
            for d in bad[:3]
        ]
        first = bad[0] if bad else None
        yield Hit(
            Subject(kind="ServeApplication", name=app.name),
            tuple(evidence),
            {
                "app": app.name,
                "deployment": first.name if first else "",
                "status": first.status if first else app.status,
                "message": (first.message if first else "") or app.message,
                "service": "",
            },
        )
    for service in ctx.kube.rayservices:
        for name, status in service.app_statuses.items():
            if status.upper() not in _BAD_SERVE or name in reported:
                continue
            message = service.app_messages.get(name, "")
            yield Hit(
                Subject(kind="ServeApplication", name=name, namespace=service.namespace),
                (
                    Evidence(
                        source=f"rayservice {service.name} application {name}", text=f"{status}: {message}"
                    ),
                ),
                {
                    "app": name,
                    "namespace": service.namespace,
                    "deployment": "",
                    "status": status,
                    "message": message,
                    "service": service.name,
                },
            )


# The reason KubeRay (v1.6 on) gives a RayService's Ready condition when its spec fails validation
# (rayservice_controller.go): the operator stops there and creates nothing.
_RAYSERVICE_INVALID = "ValidationFailed"


@detector("rayservice_invalid", ("service", "namespace", "message"))
def rayservice_invalid(ctx: Context, rule: Rule) -> Iterable[Hit]:
    for service in ctx.kube.rayservices:
        for condition in service.conditions:
            if condition.type != "Ready" or condition.status != "False":
                continue
            if condition.reason != _RAYSERVICE_INVALID:
                continue
            yield Hit(
                Subject(kind="RayService", name=service.name, namespace=service.namespace),
                (
                    Evidence(
                        source=f"rayservice {service.name} condition Ready",
                        text=condition.message or "",
                    ),
                ),
                {"service": service.name, "namespace": service.namespace, "message": condition.message or ""},
            )


class UnreadParams(StrictRecord):
    part: Literal["serve"]


@detector("ray_part_unread", ("paths", "version"), UnreadParams)
def ray_part_unread(ctx: Context, rule: Rule) -> Iterable[Hit]:
    """A part of the Ray layer the dashboard has no endpoint for, so its causes cannot be seen.

    Quiet when the same facts came another way: Serve applications a RayService reports, or read
    from a pasted ``serve status``.
    """
    part = UnreadParams(**rule.params).part
    paths = ctx.ray.unread.get(part) if ctx.ray else None
    if not paths or ctx.ray is None or ctx.ray.serve_applications:
        return
    if any(service.app_statuses for service in ctx.kube.rayservices):
        return
    # Atoms: the renderer says "`a` and `b`" and "Ray 2.9.3" (or "this Ray release") per language.
    yield Hit(
        Subject(kind="Collection", name=f"ray {part}"),
        tuple(
            Evidence(
                source="ray dashboard",
                text=f"HTTP 404 on `{path}`",
                phrase="evidence.http_404",
                values={"path": path},
            )
            for path in paths
        ),
        {"ray_version": ctx.ray.version or ""},
        facts=tuple(MissingEndpoint(path) for path in paths),
    )


# RayJob deployment statuses that end the job: ``Failed`` (v1.1 on), v1.0's
# ``FailedToGetOrCreateRayCluster`` and ``FailedJobDeploy``, and ``ValidationFailed`` (v1.5 on).
_FAILED_DEPLOYMENT = frozenset(
    {"failed", "failedtogetorcreateraycluster", "failedjobdeploy", "validationfailed"}
)


# KubeRay (v1.1 on) fails a RayJob whose activeDeadlineSeconds have passed, counted from the
# RayJob's start: time spent waiting for the cluster counts, so such a job may never have run.
_DEADLINE_REASON = "deadlineexceeded"
_DEADLINE_SECONDS = re.compile(r"ActiveDeadlineSeconds: (?P<seconds>\d+)")
_STARTED_JOB = {"RUNNING", "STOPPED", "SUCCEEDED", "FAILED"}


def _ended_by_deadline(job: RayJobObject) -> bool:
    # The reason is pruned when the object is read as v1alpha1; KubeRay's message says it too.
    return (job.reason or "").lower() == _DEADLINE_REASON or bool(
        job.message and "passed the activeDeadlineSeconds" in job.message
    )


# KubeRay (v1.5 on, SidecarMode) fails a RayJob whose head Pod has disappeared with ``Ray head pod
# not found.`` (rayjob_controller.go): the Pod was deleted, evicted or lost with its node, none of
# which is the job's own code, and the RayJob's status cannot say which; the head Pod's events do.
_HEAD_POD_GONE = re.compile(r"\bRay head pod not found\b")


@detector("job_status", ("job", "status", "message"))
def job_status(ctx: Context, rule: Rule) -> Iterable[Hit]:
    seen: set[str] = set()
    for job in ctx.kube.rayjobs:
        status = (job.job_status or "").upper()
        deployment = (job.deployment_status or "").lower()
        if status not in _FAILED_JOB and deployment not in _FAILED_DEPLOYMENT:
            continue
        if status not in _FAILED_JOB and _HEAD_POD_GONE.search(job.message or ""):
            seen.add(job.submission_id or job.name)
            continue
        if _ended_by_deadline(job) and status not in _FAILED_JOB:
            seen.add(job.submission_id or job.name)
            continue  # the deadline ended it, not its own code: ray-job-deadline-* say which
        seen.add(job.submission_id or job.name)
        yield Hit(
            Subject(kind="RayJob", name=job.name, namespace=job.namespace),
            (
                Evidence(
                    source=f"rayjob {job.name}",
                    text=f"{job.job_status or job.deployment_status}: {job.message or ''}",
                ),
            ),
            {
                "job": job.name,
                "namespace": job.namespace,
                "status": job.job_status or "",
                "message": job.message or "",
            },
        )
    for info in ctx.ray.jobs if ctx.ray else []:
        key = info.submission_id or info.job_id or ""
        if info.status.upper() not in _FAILED_JOB or key in seen:
            continue
        yield Hit(
            Subject(kind="RayJob", name=key),
            (Evidence(source=f"ray job {key}", text=f"{info.status}: {info.message or ''}"),),
            {"job": key, "status": info.status, "message": info.message or ""},
        )


class DeadlineParams(StrictRecord):
    # ``before-start``: its Ray job never ran (not submitted, or PENDING); ``while-running``: it ran.
    when: Literal["before-start", "while-running"]


@detector("job_deadline", ("job", "status", "message", "deadline", "cluster_name"), DeadlineParams)
def job_deadline(ctx: Context, rule: Rule) -> Iterable[Hit]:
    """A RayJob that KubeRay failed at its activeDeadlineSeconds, split by whether it had started."""
    when = DeadlineParams(**rule.params).when
    for job in ctx.kube.rayjobs:
        status = (job.job_status or "").upper()
        if not _ended_by_deadline(job) or status in _FAILED_JOB:
            continue
        started = status in _STARTED_JOB
        if started != (when == "while-running"):
            continue
        seconds = _DEADLINE_SECONDS.search(job.message or "")
        yield Hit(
            Subject(kind="RayJob", name=job.name, namespace=job.namespace),
            (
                Evidence(
                    source=f"rayjob {job.name}",
                    text=f"{job.deployment_status or ''} ({job.reason}): {job.message or ''}".strip(": "),
                ),
                Evidence(source=f"rayjob {job.name} jobStatus", text=job.job_status or "(not set)"),
            ),
            {
                "job": job.name,
                "namespace": job.namespace,
                "status": job.job_status or "—",
                "message": job.message or "",
                "deadline": seconds.group("seconds") if seconds else "?",
                "cluster_name": job.cluster_name or "<cluster>",
            },
        )
