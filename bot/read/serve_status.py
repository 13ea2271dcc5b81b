"""``serve status`` output: whether Ray Serve applications and deployments are healthy.

An application stuck in ``DEPLOYING`` or failed with ``DEPLOY_FAILED`` looks like a scheduling
problem from the outside (nothing answers), and its ``message`` usually names the real cause.
Ray 2.4+ prints ``applications: <name>: {status, message, deployments: {<name>: {status,
replica_states, message}}}`` for applications deployed by config; Ray 2.0-2.3, and 2.5 for an
application started from Python, print ``name``, one ``app_status`` and a ``deployment_statuses``
list (deployments named ``<app>_<deployment>``). Both become ``ServeApplication`` objects.

A deployment's ``message`` is the controller's own warning, so it is read like a loose line too:
``... replicas that have taken more than 30s to be scheduled ... Resources required for each
replica: {...}`` becomes a demand, and the message is kept as text for the phrase rules.
"""

from __future__ import annotations

from collections.abc import Mapping

from bot.read import ray_messages
from bot.read.formats import Format, Tag
from bot.read.found import Found
from bot.snapshot.ray import ServeApplication, ServeDeployment

FORMAT = Format("serve status", Tag.RAY_SERVE)
_MAX_APPS = 200


def _text(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def _replica_states(value: object) -> dict[str, int]:
    if not isinstance(value, Mapping):
        return {}
    return {str(k): v for k, v in value.items() if isinstance(v, int) and not isinstance(v, bool)}


def _deployment(name: object, raw: object) -> ServeDeployment | None:
    if not isinstance(raw, Mapping) or not name:
        return None
    return ServeDeployment(
        name=str(name),
        status=_text(raw.get("status")) or "UNKNOWN",
        message=_text(raw.get("message")),
        replica_states=_replica_states(raw.get("replica_states")),
    )


# Statuses only Serve uses (``ApplicationStatus``, ``DeploymentStatus``): a fragment cut out of
# ``serve status`` with one of them and its message is one application, even without its name.
_SERVE_ONLY_STATUSES = frozenset({"DEPLOY_FAILED", "DEPLOYING", "UNHEALTHY"})
UNNAMED_APPLICATION = "(pasted application)"


def _is_fragment(doc: Mapping[object, object]) -> bool:
    status = doc.get("status")
    return isinstance(status, str) and status.strip().upper() in _SERVE_ONLY_STATUSES and "message" in doc


def looks_like_serve_status(doc: Mapping[object, object]) -> bool:
    return (
        isinstance(doc.get("applications"), Mapping)
        or "app_status" in doc
        or "deployment_statuses" in doc
        or _is_fragment(doc)
    )


def serve_applications_from(doc: object) -> list[ServeApplication]:
    if not isinstance(doc, Mapping):
        return []
    apps: list[ServeApplication] = []
    applications = doc.get("applications")
    if isinstance(applications, Mapping):
        for name, raw in list(applications.items())[:_MAX_APPS]:
            if not isinstance(raw, Mapping):
                continue
            deployments = raw.get("deployments")
            apps.append(
                ServeApplication(
                    name=str(name),
                    status=_text(raw.get("status")) or "UNKNOWN",
                    message=_text(raw.get("message")),
                    deployments=[
                        d
                        for dep_name, dep in (deployments.items() if isinstance(deployments, Mapping) else [])
                        if (d := _deployment(dep_name, dep)) is not None
                    ],
                )
            )
        return apps
    if _is_fragment(doc):
        return [
            ServeApplication(
                name=_text(doc.get("name")) or UNNAMED_APPLICATION,
                status=_text(doc.get("status")).upper(),
                message=_text(doc.get("message")),
            )
        ]
    app_status = doc.get("app_status")
    legacy = doc.get("deployment_statuses")
    if isinstance(app_status, Mapping) or isinstance(legacy, list):
        status = app_status if isinstance(app_status, Mapping) else {}
        apps.append(
            ServeApplication(
                name=_text(doc.get("name")) or "default",
                status=_text(status.get("status")) or "UNKNOWN",
                message=_text(status.get("message")),
                deployments=[
                    d
                    for item in (legacy if isinstance(legacy, list) else [])
                    if isinstance(item, Mapping) and (d := _deployment(item.get("name"), item)) is not None
                ],
            )
        )
    return apps


def read_serve_status(doc: Mapping[object, object], found: Found) -> bool:
    """Add the applications of one ``serve status`` document, and what their messages say."""
    apps = serve_applications_from(doc)
    for app in apps:
        found.add_serve_application(app)
        for message in [app.message, *(d.message for d in app.deployments)]:
            text = " ".join(str(message).split())
            if text:
                ray_messages.read_message(text, found)
                found.add_text(text)
    if apps:
        found.recognise(FORMAT)
    return bool(apps)
