"""Kubernetes RBAC, evaluated the way kube-apiserver does, for the requests raydiag really sends.

``request_of`` turns an HTTP request into the attributes the authorizer sees (verb, API group,
resource with its subresource, namespace, name), following the API server's request-info rules:
GET on a collection is ``list``, on an object ``get``; ``?watch=true`` is ``watch``; POST
``create``, PUT ``update``, PATCH ``patch``, DELETE ``delete`` or ``deletecollection``.
``Grants`` holds the rules bound to one service account by the rendered (Cluster)RoleBindings and
answers whether a request is allowed: a ClusterRole through a ClusterRoleBinding anywhere, a Role
through a RoleBinding only in its own namespace.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, unquote

WRITE_VERBS = frozenset({"create", "update", "patch", "delete", "deletecollection"})
# Verbs and resources that let an identity do more than read what it is shown.
ESCALATING_VERBS = frozenset({"escalate", "bind", "impersonate", "approve", "sign", "*"})
SENSITIVE_RESOURCES = frozenset(
    {
        "secrets",
        "pods/exec",
        "pods/attach",
        "pods/portforward",
        "pods/proxy",
        "nodes/proxy",
        "services/proxy",
        "serviceaccounts/token",
        "*",
    }
)


@dataclass(frozen=True)
class Request:
    verb: str
    group: str
    resource: str  # "pods", or "pods/log" for a subresource
    namespace: str | None
    name: str | None

    @property
    def scope(self) -> tuple[str, str, str]:
        return (self.verb, self.group, self.resource)

    def __str__(self) -> str:
        where = f" in {self.namespace}" if self.namespace else " cluster-wide"
        group = f".{self.group}" if self.group else ""
        return f"{self.verb} {self.resource}{group}{' ' + self.name if self.name else ''}{where}"


def request_of(method: str, path: str, query: str = "") -> Request | None:
    """The authorizer's view of one API request; None for non-resource paths (/version, /api)."""
    parts = [unquote(p) for p in path.split("/") if p]
    if parts[:1] == ["api"] and len(parts) >= 3:
        group, rest = "", parts[2:]
    elif parts[:1] == ["apis"] and len(parts) >= 4:
        group, rest = parts[1], parts[3:]
    else:
        return None
    namespace: str | None = None
    if rest[0] == "namespaces" and len(rest) >= 3:
        namespace, rest = rest[1], rest[2:]
    resource = rest[0]
    name = rest[1] if len(rest) > 1 else None
    if len(rest) > 2:
        resource = f"{resource}/{rest[2]}"
    params = parse_qs(query)
    verb = {
        "GET": "get" if name else ("watch" if params.get("watch") == ["true"] else "list"),
        "HEAD": "get" if name else "list",
        "POST": "create",
        "PUT": "update",
        "PATCH": "patch",
        "DELETE": "delete" if name else "deletecollection",
    }[method]
    return Request(verb, group, resource, namespace, name)


@dataclass(frozen=True)
class Rule:
    api_groups: frozenset[str]
    resources: frozenset[str]
    verbs: frozenset[str]
    resource_names: frozenset[str]
    namespace: str | None  # None: granted in every namespace and cluster-wide (ClusterRole)

    def allows(self, request: Request) -> bool:
        if self.namespace is not None and request.namespace != self.namespace:
            return False
        base = request.resource.split("/", 1)[0]
        resource_ok = (
            "*" in self.resources
            or request.resource in self.resources
            or ("/" in request.resource and f"{base}/*" in self.resources)
        )
        return (
            ("*" in self.verbs or request.verb in self.verbs)
            and ("*" in self.api_groups or request.group in self.api_groups)
            and resource_ok
            and (not self.resource_names or request.name in self.resource_names)
        )

    def scopes(self) -> set[tuple[str, str, str]]:
        return {(v, g, r) for v in self.verbs for g in self.api_groups for r in self.resources}


def rules_of(role: Mapping[str, Any], namespace: str | None) -> list[Rule]:
    return [
        Rule(
            frozenset(rule.get("apiGroups", [])),
            frozenset(rule.get("resources", [])),
            frozenset(rule.get("verbs", [])),
            frozenset(rule.get("resourceNames", [])),
            namespace,
        )
        for rule in role.get("rules", [])
    ]


@dataclass(frozen=True)
class Grants:
    """Everything one service account may do, from rendered RBAC objects."""

    cluster_rules: tuple[Rule, ...]
    namespaced_rules: tuple[Rule, ...]

    @property
    def rules(self) -> tuple[Rule, ...]:
        return (*self.cluster_rules, *self.namespaced_rules)

    def allows(self, request: Request) -> bool:
        return any(rule.allows(request) for rule in self.rules)

    @classmethod
    def for_service_account(cls, objects: Iterable[Mapping[str, Any]], namespace: str, name: str) -> Grants:
        objects = list(objects)

        def binds(binding: Mapping[str, Any]) -> bool:
            return any(
                s.get("kind") == "ServiceAccount"
                and s.get("name") == name
                and s.get("namespace") == namespace
                for s in binding.get("subjects", [])
            )

        def role(kind: str, role_name: str, role_namespace: str | None = None) -> Mapping[str, Any]:
            found = [
                o
                for o in objects
                if o["kind"] == kind
                and o["metadata"]["name"] == role_name
                and o["metadata"].get("namespace") == role_namespace
            ]
            assert found, f"a binding refers to {kind} {role_name}, which is not rendered"
            return found[0]

        cluster: list[Rule] = []
        local: list[Rule] = []
        for binding in objects:
            if binding["kind"] == "ClusterRoleBinding" and binds(binding):
                cluster += rules_of(role("ClusterRole", binding["roleRef"]["name"]), None)
            elif binding["kind"] == "RoleBinding" and binds(binding):
                where = binding["metadata"]["namespace"]
                ref = binding["roleRef"]
                source = role(ref["kind"], ref["name"], where if ref["kind"] == "Role" else None)
                local += rules_of(source, where)
        return cls(tuple(cluster), tuple(local))
