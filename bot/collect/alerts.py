"""Alerts as raydiag reads them: from the Slack message another app posted, or from Alertmanager's
webhook, into one ``Alert`` (status, name, labels, the words it shows, a key stable across re-sends).

Where the wordings come from (each recorded from the real tool where one runs here, see
``tools/record_alertmanager.py`` and ``tests/fixtures/alertmanager/``):

- Alertmanager's Slack receiver puts everything in one attachment. Its default template has no
  text at all: the title is ``[FIRING:<n>] <group label values> (<other common label values>)``
  (``[RESOLVED]`` when resolved) — values without their names. Teams' own templates add the
  annotations (``summary: …``) or list each label (`` • *pod:* `x` ``).
- Grafana's Slack contact point keeps the same title and, by default, lists ``Labels:`` and
  ``Annotations:`` as `` - name = value`` lines.
- Alertmanager's webhook (``version: "4"``) carries the labels by name, per alert, with each
  alert's ``fingerprint`` and the group's ``groupKey``.
- PagerDuty, Opsgenie and Datadog post their own apps' messages (``Triggered``/``Resolved``,
  ``Recovered``); their labels appear, if at all, as ``name: value`` text.

Nothing here decides which cluster an alert is about; ``cluster_of`` maps an alert to one of the
configured clusters, from its labels, its Pod (looked up by the caller) or the words it shows.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

AlertStatus = Literal["firing", "resolved"]

# Labels that name the RayCluster outright (``ray_io_cluster`` is ``ray.io/cluster`` as
# kube-state-metrics and Prometheus relabelling spell a Pod label).
CLUSTER_LABELS = ("raycluster", "ray_io_cluster", "ray_cluster")
MAX_TEXT = 4000

_STATUS = re.compile(r"\[(?P<status>FIRING|RESOLVED)(?::\d+)?\]", re.IGNORECASE)
_OTHER_STATUS = re.compile(
    r"\b(?P<resolved>resolved|recovered|closed)\b|\b(?P<firing>triggered|firing|alert created|opened)\b",
    re.IGNORECASE,
)
# ``• *pod:* `x` ``, `` - pod = x``, ``pod: x``, ``pod=x``: a label with its name, on its own line
# or as one item of a list.
_NAMED = re.compile(
    r"(?:^|[\n•·,;|]|\s-\s)\s*\*?(?P<name>[A-Za-z_][A-Za-z0-9_.]{0,62})\*?\s*(?::|=)\*?\s*"
    r"`?(?P<value>[^`\s,;|*]{1,253})`?",
)
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]{0,252}")
_MRKDWN_LINK = re.compile(r"<(?P<url>[^|>]+)\|(?P<label>[^>]*)>")
# Names a ``name: value`` reader must not take for labels (prose and Slack markup).
_NOT_LABELS = frozenset({"http", "https", "summary", "description", "value", "source", "runbook_url"})
# A Kubernetes object name with at least one dash (a bare word is too likely to be prose).
_POD_NAME = re.compile(r"[a-z0-9](?:[-a-z0-9.]*[a-z0-9])?")
MAX_POD_LOOKUPS = 8


@dataclass(frozen=True)
class Alert:
    status: AlertStatus
    name: str  # the alert's name (``alertname``), else its title
    labels: Mapping[str, str] = field(default_factory=dict)  # by name, where the source names them
    words: tuple[str, ...] = ()  # every word it shows (the default title has values without names)
    text: str = ""  # its readable text, cut to MAX_TEXT
    key: str = ""  # the same on every re-send of this alert (or group)
    sender: str = "unknown"  # alertmanager | grafana | pagerduty | opsgenie | datadog | unknown

    @property
    def pod(self) -> tuple[str | None, str | None]:
        """(namespace, pod) the alert names, where it names a Pod by label."""
        return self.labels.get("namespace") or self.labels.get("exported_namespace"), self.labels.get("pod")


# --- Slack messages ------------------------------------------------------------------------------


def message_text(message: Mapping[str, Any]) -> str:
    """Everything readable in a Slack message: ``text``, each attachment's pretext, title, text,
    fields and footer (its fallback only when it has nothing else), and the text of its blocks."""
    parts: list[str] = [_str(message.get("text"))]
    for attachment in _dicts(message.get("attachments")):
        own = [_str(attachment.get(k)) for k in ("pretext", "author_name", "title", "text")]
        own += [f"{_str(f.get('title'))}: {_str(f.get('value'))}" for f in _dicts(attachment.get("fields"))]
        own.append(_str(attachment.get("footer")))
        if not any(own):
            own.append(_str(attachment.get("fallback")))
        parts += own
        parts += _block_texts(attachment.get("blocks"))
    parts += _block_texts(message.get("blocks"))
    text = "\n".join(p for p in parts if p)
    return _MRKDWN_LINK.sub(lambda m: m.group("label") or m.group("url"), text)[:MAX_TEXT]


def _block_texts(blocks: Any) -> list[str]:
    found: list[str] = []
    for block in _dicts(blocks):
        text = block.get("text")
        if isinstance(text, Mapping):
            found.append(_str(text.get("text")))
        for item in _dicts(block.get("fields")):
            found.append(_str(item.get("text")))
        for element in _dicts(block.get("elements")):
            found += _element_texts(element)
    return found


def _element_texts(element: Mapping[str, Any]) -> list[str]:
    """A context or rich-text element: its text, or the texts of the elements it holds."""
    if isinstance(element.get("text"), str):
        return [element["text"]]
    if isinstance(element.get("text"), Mapping):
        return [_str(element["text"].get("text"))]
    inner = [t for child in _dicts(element.get("elements")) for t in _element_texts(child)]
    return ["".join(inner)] if inner else []


def from_slack_message(message: Mapping[str, Any], sender: str = "unknown") -> Alert | None:
    """The alert a Slack message announces, or None when it reads as no alert (no status word)."""
    text = message_text(message)
    if not text.strip():
        return None
    title = _title(message) or text.splitlines()[0]
    status: AlertStatus | None = None
    if bracket := _STATUS.search(text):
        status = "firing" if bracket.group("status").upper() == "FIRING" else "resolved"
    elif word := _OTHER_STATUS.search(title) or _OTHER_STATUS.search(text):
        status = "resolved" if word.group("resolved") else "firing"
    if status is None:
        return None
    labels = named_labels(text)
    # The default title's values are sorted by label name, so ``alertname`` comes first (unless a
    # label sorts before it); other senders put the alert's name first too.
    shown = _STATUS.sub("", title).split()
    name = labels.get("alertname") or (shown[0] if shown else title)
    # The key leaves out the status (``[FIRING:2]`` and ``[RESOLVED]`` are the same alert).
    key = " ".join(_STATUS.sub("", title).split())
    return Alert(
        status=status,
        name=name,
        labels=labels,
        words=tuple(dict.fromkeys(_WORD.findall(text))),
        text=text,
        key=key,
        sender=sender,
    )


def _title(message: Mapping[str, Any]) -> str:
    for attachment in _dicts(message.get("attachments")):
        if title := _str(attachment.get("title")):
            return title
    return ""


def named_labels(text: str) -> dict[str, str]:
    """The ``name: value`` / ``name = value`` pairs of a text, first value of each name kept."""
    found: dict[str, str] = {}
    for match in _NAMED.finditer(text):
        name, value = match.group("name"), match.group("value").strip("`*")
        if name.lower() in _NOT_LABELS or not any(c.isalnum() for c in value) or "://" in value:
            continue
        found.setdefault(name, value)
    return found


# --- Alertmanager's webhook ----------------------------------------------------------------------


class WebhookError(ValueError):
    """The body is not an Alertmanager webhook notification; the message says what is wrong."""


def from_webhook(payload: Any) -> list[Alert]:
    """Each alert of an Alertmanager webhook notification (``version: "4"``), in its order."""
    if not isinstance(payload, Mapping):
        raise WebhookError("the body is not a JSON object")
    if str(payload.get("version", "")) != "4":
        raise WebhookError(f"unsupported webhook version {payload.get('version')!r} (Alertmanager sends 4)")
    alerts = payload.get("alerts")
    if not isinstance(alerts, list):
        raise WebhookError("the body has no list of alerts")
    group = _str(payload.get("groupKey"))
    found: list[Alert] = []
    for item in alerts:
        if not isinstance(item, Mapping):
            continue
        labels = {str(k): str(v) for k, v in _mapping(item.get("labels")).items()}
        notes = {str(k): str(v) for k, v in _mapping(item.get("annotations")).items()}
        status: AlertStatus = "resolved" if item.get("status") == "resolved" else "firing"
        text = "\n".join(f"{k}: {v}" for k, v in (*labels.items(), *notes.items()))[:MAX_TEXT]
        found.append(
            Alert(
                status=status,
                name=labels.get("alertname", ""),
                labels=labels,
                words=tuple(dict.fromkeys(labels.values())),
                text=text,
                key=_str(item.get("fingerprint")) or f"{group} {sorted(labels.items())}",
                sender="alertmanager",
            )
        )
    return found


# --- which cluster -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ClusterRef:
    """A configured cluster as the mapping needs it: its name, RayCluster and namespace."""

    name: str
    raycluster: str
    namespace: str


@dataclass(frozen=True)
class Target:
    cluster: str  # the configured cluster's name
    pod: str | None  # the Pod the alert names (shown first in the diagnosis)
    via: Literal["label", "pod", "text"]  # how it was found
    detail: str = ""  # the label's name, or namespace/pod

    @property
    def because(self) -> str:
        return f"{self.via} {self.detail}".strip()


def cluster_of(
    alert: Alert,
    clusters: Sequence[ClusterRef],
    *,
    cluster_label: str | None = None,
    pod_cluster: Callable[[str, str], str | None] | None = None,
) -> Target | None:
    """The configured cluster an alert is about, or None (an alert about something else).

    In order: a label that names the RayCluster (``raycluster``, ``ray_io_cluster``, or the
    configured ``cluster_label``) and matches a configured cluster's name or RayCluster; the Pod
    it names (namespace and pod labels), through ``pod_cluster`` (the Pod's ``ray.io/cluster``
    label, read by the caller); a configured cluster's name or RayCluster among its words.
    """
    namespace, pod = alert.pod
    for label in (cluster_label, *CLUSTER_LABELS):
        value = alert.labels.get(label) if label else None
        if value and (ref := _named(value, namespace, clusters)):
            return Target(ref.name, pod, "label", label or "")
    if namespace and pod and pod_cluster is not None:
        owner = pod_cluster(namespace, pod)
        if owner and (ref := _named(owner, namespace, clusters)):
            return Target(ref.name, pod, "pod", f"{namespace}/{pod}")
    words = set(alert.words)
    for ref in clusters:
        if ref.name in words or ref.raycluster in words:
            return Target(ref.name, pod, "text")
    if pod_cluster is not None and not pod:
        # Alertmanager's default title shows label values without their names: a word shaped like
        # a Pod name may be one, in a configured cluster's namespace (a bounded number of lookups).
        shaped = [w for w in alert.words if "-" in w and _POD_NAME.fullmatch(w)][:MAX_POD_LOOKUPS]
        for ref in clusters:
            for word in shaped:
                owner = pod_cluster(ref.namespace, word)
                if owner and owner == ref.raycluster:
                    return Target(ref.name, word, "pod", f"{ref.namespace}/{word}")
    return None


def _named(value: str, namespace: str | None, clusters: Iterable[ClusterRef]) -> ClusterRef | None:
    candidates = [c for c in clusters if value in (c.name, c.raycluster)]
    if namespace:
        candidates = [c for c in candidates if c.namespace == namespace] or candidates
    return candidates[0] if candidates else None


# --- reading JSON defensively ------------------------------------------------------------------------


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _dicts(value: Any) -> list[Mapping[str, Any]]:
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}
