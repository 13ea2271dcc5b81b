"""Ray Serve's config file: what each deployment's replicas ask Ray for.

People paste the YAML they deploy with (``serve deploy config.yaml``, or a RayService's
``serveConfigV2``) beside what the cluster says. Its shape is Serve's own schema
(``ray/serve/schema.py``: ``ServeDeploySchema`` → ``applications`` → ``deployments``, each with
``name``, ``num_replicas`` and ``ray_actor_options``). Each deployment is ``num_replicas`` actors
of ``ray_actor_options`` (one CPU each by default), the same request the Python reader makes of a
``@serve.deployment``, so both go to the same place (:class:`~bot.read.code_facts.CodeFacts`) and
are joined with the cluster facts of the paste at the end (:func:`bot.read.python_code.settle`).
``num_replicas: auto`` or an ``autoscaling_config`` leaves how many unknown.

Told apart from ``serve status`` (:mod:`bot.read.serve_status`), whose ``applications`` is a
mapping of names, by ``applications`` being a list.
"""

from __future__ import annotations

from collections.abc import Mapping

from bot.read import yaml_blocks
from bot.read.code_facts import Request
from bot.read.formats import Format, Tag
from bot.read.found import Found
from bot.read.python_code import MAX_REQUESTS, MAX_UNKNOWN, resource_options, with_defaults

FORMAT = Format("ray serve config", Tag.RAY_SERVE)

_MAX_APPLICATIONS = 50
_MAX_DEPLOYMENTS = 200
_MAX_CONFIG_CHARS = 200_000
_QUOTE_CHARS = 200


def looks_like_serve_config(doc: Mapping[object, object]) -> bool:
    applications = doc.get("applications")
    return isinstance(applications, list) and any(
        isinstance(app, Mapping) and ("deployments" in app or "import_path" in app)
        for app in applications[:_MAX_APPLICATIONS]
    )


def _quote(app: str, deployment: Mapping[object, object]) -> str:
    """The deployment's resource lines, as the config says them, on one line."""
    parts = [f"name: {deployment.get('name')}"]
    for key in ("num_replicas", "ray_actor_options"):
        if key in deployment:
            value = deployment[key]
            if isinstance(value, Mapping):
                value = "{" + ", ".join(f"{k}: {v}" for k, v in list(value.items())[:10]) + "}"
            parts.append(f"{key}: {value}")
    where = f"application {app}: " if app else ""
    return (where + "deployments: - " + ", ".join(str(p) for p in parts))[:_QUOTE_CHARS]


def read_serve_config(doc: Mapping[object, object], found: Found) -> bool:
    """Add each deployment's request; True when the document is a Serve config."""
    if not looks_like_serve_config(doc):
        return False
    found.recognise(FORMAT)
    facts = found.code
    applications = doc.get("applications")
    assert isinstance(applications, list)
    for app in applications[:_MAX_APPLICATIONS]:
        if not isinstance(app, Mapping) or not isinstance(app.get("deployments"), list):
            continue
        app_name = str(app.get("name") or "")
        for deployment in app["deployments"][:_MAX_DEPLOYMENTS]:
            if not isinstance(deployment, Mapping) or len(facts.requests) >= MAX_REQUESTS:
                continue
            name = str(deployment.get("name") or "")
            options = deployment.get("ray_actor_options") or {}
            if not isinstance(options, Mapping):
                continue
            shape = resource_options({str(k): v for k, v in options.items()})
            if isinstance(shape, tuple):
                entry = f"{name[:60]} ray_actor_options {shape[0]}={shape[1].text[:80]}"
                if entry not in facts.unknown and len(facts.unknown) < MAX_UNKNOWN:
                    facts.unknown.append(entry)
                continue
            replicas = deployment.get("num_replicas", 1)
            count: int | None = None
            if isinstance(replicas, int) and not isinstance(replicas, bool) and 0 <= replicas <= 100_000:
                count = None if "autoscaling_config" in deployment else replicas
            # Serve reserves one CPU per replica unless ``ray_actor_options`` says otherwise.
            request_shape = with_defaults("actor", {"CPU": 1.0, **shape})
            facts.requests.append(
                Request(
                    "actor",
                    request_shape,
                    _quote(app_name, deployment),
                    name=name,
                    instances=count,
                    source="serve config",
                )
            )
    return True


def read_serve_config_text(text: object, found: Found) -> bool:
    """A RayService's ``serveConfigV2``: the same config, as a YAML string inside the object."""
    if not isinstance(text, str) or len(text) > _MAX_CONFIG_CHARS:
        return False
    documents, _ = yaml_blocks.load(text.splitlines())
    return any(isinstance(doc, Mapping) and read_serve_config(doc, found) for doc in documents[:5])
