"""Finding YAML in a paste and loading it even when it is not valid YAML.

YAML reaches a paste as Kubernetes manifests (``kubectl get -o yaml``, or the file the user
applied), as ``serve status`` output, and as Ray cluster-launcher configs, very often as a snippet
cut out of a larger file: indented, truncated, with aliases whose anchors were not copied
(``BlockDeviceMappings: *mount``). The loader repairs what it can (undefined aliases become
strings, tabs become spaces) and then drops the lines PyYAML complains about, a few times, rather
than giving up on the whole block. Timestamps stay strings, as in JSON, because the readers expect
strings and an impossible date must not abort a load.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from typing import Any

START_MANIFEST = "manifest"
START_LAUNCHER = "launcher"
START_SERVE = "serve"
START_SNIPPET = "snippet"

_MANIFEST = re.compile(r"^(?:apiVersion|kind):\s*\S")
_DOC_MARKER = re.compile(r"^---\s*$")
_TOP_KEYS = re.compile(
    r"^(?:available_node_types|cluster_name|head_node_type|max_workers|provider|idle_timeout_minutes|"
    r"upscaling_speed|headGroupSpec|workerGroupSpecs|rayVersion|metadata|spec|status|items|head|worker|"
    r"additionalWorkerGroups|containerStatuses|lastState|containerID|exitCode|headPodType|podTypes|"
    r"head_node|worker_nodes|min_workers|allocatable|capacity):(?:\s|$)"
)
_SERVE_KEYS = re.compile(r"^(?:applications|proxies|app_status|deployment_statuses|target_capacity):(?:\s|$)")
_SERVE_NAME = re.compile(r"^name:\s*\S")
# One application or deployment cut out of ``serve status``: its status line, in Serve's own words.
_SERVE_STATUS = re.compile(r"^\s*status:\s*['\"]?(?:DEPLOY_FAILED|DEPLOYING|UNHEALTHY)['\"]?\s*$")
_INDENTED_KEYS = re.compile(
    r"^\s+(?:available_node_types|headGroupSpec|workerGroupSpecs):\s*$|^\s*-\s+groupName:\s*\S"
)
_INDENTED_STATUS = re.compile(r"^\s+status:\s*$")
_NODE_STATUS_FIELD = re.compile(r"^\s+(?:addresses|allocatable|capacity|conditions|nodeInfo):(?:\s|$)")
# The KubeRay ``ray-cluster`` chart's values start with ``image:`` and ``repository:`` under it.
_HELM_IMAGE = re.compile(r"^\s+repository:\s*\S")
_NAME_ONLY = re.compile(r"^(\s*)([\w.\"'-]+):\s*(?:#.*)?$")
_NODE_TYPE_FIELDS = re.compile(
    r"^\s+(?:node_config|resources|min_workers|max_workers|docker|worker_setup_commands):"
)
_KEY_LINE = re.compile(r"^\s*[\"']?[\w./-]+[\"']?:(?:\s|$)")
_LIST_ITEM = re.compile(r"^\s*-(?:\s|$)")
_COMMENT = re.compile(r"^\s*#")
_MESSAGE_KEYS = frozenset(
    {"error", "warning", "warn", "info", "note", "hint", "tip", "fatal", "debug", "exception", "caused by"}
)
_ANCHOR = re.compile(r"&([\w-]+)")
_ALIAS = re.compile(r"(^|[\s\[,:{-])\*([\w-]+)")
_MAX_REPAIRS = 8
_MAX_REPAIRED_CHARS = 200_000
_MAX_LINES = 20_000


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _next_content(lines: Sequence[str], i: int, limit: int = 4) -> str | None:
    for j in range(i + 1, min(len(lines), i + 1 + limit)):
        if lines[j].strip() and not _COMMENT.match(lines[j]):
            return lines[j]
    return None


def _is_node_type_entry(lines: Sequence[str], i: int) -> bool:
    match = _NAME_ONLY.match(lines[i])
    if match is None:
        return False
    following = _next_content(lines, i)
    return (
        following is not None
        and _indent(following) > len(match.group(1))
        and bool(_NODE_TYPE_FIELDS.match(following))
    )


def start_kind(lines: Sequence[str], i: int) -> str | None:
    line = lines[i]
    if _MANIFEST.match(line):
        return START_MANIFEST
    if _DOC_MARKER.match(line):
        following = _next_content(lines, i)
        return START_MANIFEST if following is not None and _KEY_LINE.match(following) else None
    if _SERVE_KEYS.match(line) or _SERVE_STATUS.match(line):
        return START_SERVE
    if _SERVE_NAME.match(line) and _SERVE_KEYS.match(_next_content(lines, i) or ""):
        return START_SERVE  # `serve status` of Ray 2.0 to 2.5 opens with the application's name
    if _TOP_KEYS.match(line) or _INDENTED_KEYS.match(line):
        return START_LAUNCHER
    if _INDENTED_STATUS.match(line) and _NODE_STATUS_FIELD.match(_next_content(lines, i) or ""):
        return START_LAUNCHER  # a node's status cut out of ``kubectl get node -o yaml``, indented
    if line.startswith("image:") and _HELM_IMAGE.match(_next_content(lines, i) or ""):
        return START_LAUNCHER
    if _is_node_type_entry(lines, i):
        return START_SNIPPET
    return None


_FAMILIES = {
    **dict.fromkeys(("apiVersion", "kind", "metadata", "spec", "status", "items"), "kubernetes"),
    **dict.fromkeys(
        ("containerID", "exitCode", "finishedAt", "startedAt", "reason", "signal"), "termination"
    ),
    **dict.fromkeys(
        ("applications", "proxies", "app_status", "deployment_statuses", "target_capacity"), "serve"
    ),
    **dict.fromkeys(
        ("available_node_types", "cluster_name", "head_node_type", "provider", "head_node", "worker_nodes"),
        "launcher",
    ),
    **dict.fromkeys(("headPodType", "podTypes"), "legacy-helm"),
    **dict.fromkeys(("head", "worker", "additionalWorkerGroups", "image"), "helm"),
}


def _key(line: str) -> str:
    return line.strip().split(":", 1)[0].strip("\"' ")


def _family(line: str) -> str | None:
    """Which kind of document a top-level key belongs to, when it says."""
    return _FAMILIES.get(_key(line)) if _indent(line) == 0 else None


def _is_message_key(line: str) -> bool:
    key = line.strip().split(":", 1)[0].strip().lower()
    return key in _MESSAGE_KEYS


def extent(lines: Sequence[str], start: int) -> int:
    base = _indent(lines[start])
    # A launcher node type cannot be part of a manifest or of serve output: after a blank line it
    # is a second snippet pasted below, not a continuation.
    own_node_types = start_kind(lines, start) in {START_LAUNCHER, START_SNIPPET}
    family = _family(lines[start])
    seen_keys = {_key(lines[start])}
    last = start
    end = start + 1
    while end < len(lines) and end - start < _MAX_LINES:
        line = lines[end]
        if not line.strip() or _COMMENT.match(line):
            end += 1
            continue
        indent = _indent(line)
        if end > last + 1 and not own_node_types and _is_node_type_entry(lines, end):
            break
        if indent > base or (indent == base and (_DOC_MARKER.match(line) or _LIST_ITEM.match(line))):
            last = end
        elif indent == base and _KEY_LINE.match(line) and not _is_message_key(line):
            # At the margin, manifests and configs only have lower-case keys; a capitalised one is
            # the start of ``kubectl describe`` output pasted after the YAML. A key seen before, or
            # one of another kind of document, starts a second document pasted without ``---``.
            if base == 0 and not line[:1].islower() and line[:1] not in "\"'_":
                break
            key, other = _key(line), _family(line)
            if key in seen_keys or (family and other and other != family):
                break
            seen_keys.add(key)
            family = family or other
            last = end
        else:
            break
        end += 1
    return last + 1


def _dedent(lines: Sequence[str]) -> list[str]:
    margin = min((_indent(line) for line in lines if line.strip()), default=0)
    if margin == 0:
        return list(lines)
    return [line[margin:] if line[:margin].isspace() else line.lstrip(" ") for line in lines]


def _without_undefined_aliases(text: str) -> str:
    if "*" not in text:
        return text
    anchors = set(_ANCHOR.findall(text))

    def replace(match: re.Match[str]) -> str:
        name = match.group(2)
        return match.group(0) if name in anchors else f'{match.group(1)}"*{name}"'

    return _ALIAS.sub(replace, text)


@cache
def safe_loader() -> type[Any]:
    """PyYAML's safe loader without timestamps (a ``creationTimestamp`` stays a string); PyYAML is
    loaded with the first YAML block (or manifest file) read."""
    import yaml  # noqa: PLC0415 - lazy: most pastes hold no YAML, and PyYAML costs 20 ms to import

    base: type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class Loader(base):  # type: ignore[misc]
        pass

    Loader.yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in base.yaml_implicit_resolvers.items()
    }
    return Loader


def load(lines: Sequence[str]) -> tuple[list[Any], bool]:
    """The documents in a YAML block and whether lines had to be dropped to read them."""
    text_lines = _dedent(lines)
    text_lines = _without_undefined_aliases("\n".join(text_lines)).split("\n")
    repaired = False
    attempts = _MAX_REPAIRS if sum(len(line) for line in text_lines) <= _MAX_REPAIRED_CHARS else 1
    import yaml  # noqa: PLC0415 - lazy: see _loader

    for _ in range(attempts):
        try:
            documents = list(yaml.load_all("\n".join(text_lines), Loader=safe_loader()))
            return [doc for doc in documents if doc is not None], repaired
        except yaml.MarkedYAMLError as error:
            mark = error.problem_mark or error.context_mark
            if mark is None or not text_lines:
                return [], repaired
            del text_lines[min(mark.line, len(text_lines) - 1)]
            repaired = True
        except Exception:
            # PyYAML can raise more than YAMLError on hostile input (recursion, bad values).
            return [], repaired
    return [], repaired
