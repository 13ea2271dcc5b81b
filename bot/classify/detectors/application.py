"""Application-level failures that look like waiting: Serve apps that never get healthy, jobs
that failed while people watched for them to be scheduled.
"""

from __future__ import annotations

from collections.abc import Iterable

from bot.catalogue import Rule
from bot.classify.context import Context
from bot.classify.registry import Hit, detector
from bot.diagnosis import Evidence, Subject

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


# RayJob deployment statuses that end the job: ``Failed`` (v1.1 on), v1.0's
# ``FailedToGetOrCreateRayCluster`` and ``FailedJobDeploy``, and ``ValidationFailed`` (v1.5 on).
_FAILED_DEPLOYMENT = frozenset(
    {"failed", "failedtogetorcreateraycluster", "failedjobdeploy", "validationfailed"}
)


@detector("job_status", ("job", "status", "message"))
def job_status(ctx: Context, rule: Rule) -> Iterable[Hit]:
    seen: set[str] = set()
    for job in ctx.kube.rayjobs:
        status = (job.job_status or "").upper()
        deployment = (job.deployment_status or "").lower()
        if status not in _FAILED_JOB and deployment not in _FAILED_DEPLOYMENT:
            continue
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
