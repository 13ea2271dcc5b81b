"""kube-scheduler's FailedScheduling messages and cluster-autoscaler's NotTriggerScaleUp, in every wording.

One grammar for every reader: the paste's event and loose-line readers, the live collectors' events,
and the classifier, which replays the scheduler (:mod:`bot.classify.fit`) and compares its reasons
with the ones the message gives. Messages are split into their counted reasons
(``parse_scheduler_message``), reasons are put in kinds (``reason_category``) and made comparable
across versions (``normalise_reason``); a reason quoted in a sentence, without the message around
it, is found by ``quoted_reasons``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from bot.snapshot.gpu import LEGACY_GPU_RESOURCE

# A reason quoted without its message, in prose or a title: ``error with `Pod's node affinity/selector```,
# ``X insufficient nvidia.com/gpu``. Only wordings kube-scheduler alone writes count, in each
# version's spelling; a basic resource is taken only with the scheduler's capital ``Insufficient``
# (``insufficient memory`` is also everyday English), a named one (``vendor/resource``) either way.
_QUOTED_REASON = re.compile(
    r"(?P<reason>"
    r"\bInsufficient (?:cpu|memory|pods|ephemeral-storage|hugepages-\w+)\b|"
    r"\b[Ii]nsufficient [a-z][\w.-]*\.[a-z]{2,}/[\w.-]*\w|"
    r"(?:\bdidn't match |\b)Pod's node affinity/selector|"
    r"\bdidn't match (?:node selector|pod affinity rules|pod anti-affinity rules|"
    r"pod topology spread constraints)|"
    r"\bhad (?:untolerated )?taints? \{[^{}\n]{0,200}\}(?:, that the pod didn't tolerate)?|"
    r"\bhad volume node affinity conflict|\bvolume node affinity conflict|"
    r"\bdidn't have free ports for the requested pod ports|"
    r"\bpod has unbound (?:immediate )?PersistentVolumeClaims|"
    r"\bnode\(s\) were unschedulable"
    r")"
)


def quoted_reasons(text: str) -> Counter[str]:
    """Scheduler reasons named somewhere in ``text`` without the message around them, once each."""
    found: Counter[str] = Counter()
    for match in _QUOTED_REASON.finditer(text):
        reason = match.group("reason")
        if reason.startswith("Pod's"):
            reason = "node(s) didn't match Pod's node affinity/selector"
        elif reason.startswith(("had ", "didn't ", "were ")):
            reason = f"node(s) {reason}"
        elif reason.startswith("volume"):
            reason = f"node(s) had {reason}"
        elif reason.startswith("insufficient"):
            reason = "I" + reason[1:]
        found[reason] = 1
    return found


REASON_NODE_NAME = "node(s) didn't match the requested node name"
REASON_TOO_MANY_PODS = "Too many pods"
REASON_UNBOUND_PVC = "pod has unbound immediate PersistentVolumeClaims"
REASON_POD_AFFINITY = "node(s) didn't match pod affinity rules"
REASON_POD_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
# NodeAffinity's PreFilter (1.27 on) when required terms name nodes by ``metadata.name``: the nodes
# not named get this status without being filtered; terms naming no node in common reject the Pod.
REASON_NOT_NAMED = "node(s) didn't satisfy plugin(s) [NodeAffinity]"
REASON_NAMES_CONFLICT = "pod affinity terms conflict"
# Taint reasons that name no taint: 1.34 on, and 1.10 to 1.16. Counts of reasons that name one
# are added up before they are compared with these.
UNNAMED_TAINTS = "untolerated taint(s)"
_UNNAMED_TAINT_REASONS = (
    "node(s) had untolerated taint(s)",
    "node(s) had taints that the pod didn't tolerate",
)


def insufficient_reason(resource: str) -> str:
    return f"Insufficient {resource}"


def format_summary(total: int, reasons: Mapping[str, int], prefilter: str | None = None) -> str:
    """kube-scheduler's FitError text: reasons counted, sorted as strings (count first)."""
    message = f"0/{total} nodes are available:"
    if prefilter:
        return f"{message} {prefilter}."
    parts = sorted(f"{count} {reason}" for reason, count in reasons.items())
    return f"{message} {', '.join(parts)}." if parts else f"{message}"


_SUMMARY = re.compile(r"0/(?P<total>\d+) nodes are available:?(?P<body>.*)", re.IGNORECASE | re.DOTALL)
# A message cut before its "0/N nodes are available:" head still lists counted reasons.
_BARE_REASONS = re.compile(
    r"(?P<body>\b\d+ (?:node\(s\)|insufficient |too many pods|pod has|persistentvolumeclaim).*)",
    re.IGNORECASE | re.DOTALL,
)
# Kubernetes 1.6 to 1.9 put the count after each reason: ``No nodes are available that match all of
# the following predicates:: Insufficient cpu (2), PodToleratesNodeTaints (1).``
_PREDICATES_SUMMARY = re.compile(
    r"No nodes are available that match all of the (?:following )?predicates:*\s*(?P<body>.*)",
    re.IGNORECASE | re.DOTALL,
)
# Kubernetes 1.2 to 1.5: ``pod (x) failed to fit in any node`` and then either a summary
# (``fit failure summary on nodes : NoVolumeZoneConflict (4), ...``) or one line per node
# (``fit failure on node (node-1): MatchNodeSelector``).
_FIT_SUMMARY = re.compile(r"fit failure summary on nodes\s*:\s*(?P<body>.*)", re.IGNORECASE | re.DOTALL)
_FIT_PER_NODE = re.compile(
    r"fit failure on node \([^)]*\):\s*(?P<reasons>.*?)(?=fit failure on node|\Z)", re.IGNORECASE | re.DOTALL
)
# Kubernetes 1.0 and 1.1 named one failed predicate of one node and no counts.
_ONE_PREDICATE = re.compile(r"\bFailed for reason (?P<reason>[A-Za-z][\w.-]*)", re.IGNORECASE)
_COUNTED = re.compile(r"^(?P<count>\d+)\s+(?P<reason>.+)$", re.DOTALL)
_COUNT_AFTER = re.compile(r"^(?P<reason>.+?)\s*\((?P<count>\d+)\)$", re.DOTALL)
# Kubernetes 1.11 to 1.13 folded identical reasons:
# ``3 pod has unbound PersistentVolumeClaims (repeated 3 times)``.
_REPEATED = re.compile(r"\s*\(repeated \d+ times?\)\s*$", re.IGNORECASE)
_END = re.compile(r"[\s.!\"'`]+$")
# 1.2-era resource reasons carry their figures:
# ``Node didn't have enough resource: CPU, requested: 1000, used: 1420, capacity: 2000``.
_OLD_AMOUNTS = re.compile(r",\s*(?:requested|used|capacity): -?\d+", re.IGNORECASE)
# The GKE console's PodUnschedulable notice quotes one scheduler reason per line, without counts:
# ``Cannot schedule pods: Insufficient cpu.`` (several such lines are one Pod's reasons).
_CONSOLE = re.compile(
    r"Cannot schedule pods:\s*(?P<body>.*?)(?=Cannot schedule pods:|\Z)", re.IGNORECASE | re.DOTALL
)
# Chat and issue trackers turn a taint key that looks like a host name into a link:
# ``{[node.example.com/use](http://node.example.com/use): gpu}``; the key is what the tool wrote.
_AUTOLINK = re.compile(r"\[(?P<text>[^\[\]\s]+)\]\((?:https?://)?(?P=text)/?\)")


def unlinked(message: str) -> str:
    """``message`` with auto-links put back to the text they were made from."""
    return _AUTOLINK.sub(lambda m: m.group("text"), message) if "](" in message else message


def parse_scheduler_message(message: str) -> tuple[int, Counter[str], str | None] | None:
    """Split a FailedScheduling message into (total nodes, counts per reason, prefilter reason).

    Every wording kube-scheduler has used is read: ``0/N nodes are available: ...`` (1.10 on), the
    predicate summaries of 1.2 to 1.9 with the count in brackets after each reason, the per-node
    ``fit failure on node (...)`` lines of 1.2 to 1.5, and 1.0's single ``Failed for reason X``.
    The total is 0 when the message does not say it (cut before its head, or an old wording); a
    reason an old wording gives without a count counts once.

    The part after ``preemption:`` is about preemption, not about fit, and is left out. A reason the
    grammar cannot split costs that reason only: a chunk without a count continues the reason
    before it (``had taint {k: v}, that the pod didn't tolerate``), and only a leading one is the
    PreFilter reason that applies to every node.
    """
    message = unlinked(message)
    if match := _SUMMARY.search(message):
        counts, prefilter = _counted_reasons(match.group("body"))
        return int(match.group("total")), counts, prefilter
    if match := _PREDICATES_SUMMARY.search(message) or _FIT_SUMMARY.search(message):
        return 0, _bracketed_reasons(match.group("body")), None
    per_node = _FIT_PER_NODE.findall(message)
    if per_node:
        per_reason: Counter[str] = Counter()
        for reasons in per_node:
            for reason in _split_reasons(_END.sub("", _OLD_AMOUNTS.sub("", reasons))):
                per_reason[reason] += 1
        return len(per_node), per_reason, None
    if match := _ONE_PREDICATE.search(message):
        return 0, Counter({match.group("reason"): 1}), None
    if _CONSOLE.search(message):
        console: Counter[str] = Counter()
        for body in _CONSOLE.finditer(message):
            for reason in _split_reasons(_reasons_body(body.group("body").rstrip(" ,"))):
                counted = _COUNTED.match(reason)
                console[counted.group("reason") if counted else reason] += 1
        return 0, console, None
    if match := _BARE_REASONS.search(message):
        counts, prefilter = _counted_reasons(match.group("body"))
        return 0, counts, prefilter
    if quoted := quoted_reasons(message):
        return 0, quoted, None
    return None


SCALE_UP_REFUSAL = re.compile(
    r"(?:pod )?(?:didn't|did not) trigger scale-up(?P<wouldnt> \(it wouldn't fit if a new node is added\))?:?"
    r"(?P<body>[^\n]*)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class ScaleUpRefusal:
    """cluster-autoscaler's NotTriggerScaleUp message: why no node group was scaled for a Pod.

    ``reasons`` counts node groups per reason: scheduler reasons for groups whose template node
    would not take the Pod, and the autoscaler's own (``max node group size reached``, ``in
    backoff after failed scale-up``, ``max cluster cpu, memory limit reached``) for skipped groups.
    Releases before 1.12 or so wrote ``(it wouldn't fit if a new node is added)`` and often no
    reasons at all.
    """

    reasons: Counter[str]
    wouldnt_fit: bool
    whole: str | None = None  # a reason for the whole cluster: "max total nodes in cluster reached"


def parse_scale_up_refusal(message: str) -> ScaleUpRefusal | None:
    match = SCALE_UP_REFUSAL.search(unlinked(message))
    if match is None:
        return None
    # People shorten the message they quote: ``pod didn't trigger scale-up ... 1 node(s) had ...``.
    body = re.sub(r"^[\s.…:]+", "", match.group("body"))
    counts, whole = _counted_reasons(body)
    return ScaleUpRefusal(counts, bool(match.group("wouldnt")), whole)


# The ways a scheduler message begins, every version (for ``has_scheduler_head`` and prefilters).
SCHEDULER_HEADS = (_SUMMARY, _PREDICATES_SUMMARY, _FIT_SUMMARY, _FIT_PER_NODE, _ONE_PREDICATE)


def has_scheduler_head(message: str) -> bool:
    """Whether a FailedScheduling message starts as kube-scheduler wrote it, not mid-list."""
    return any(p.search(message) for p in SCHEDULER_HEADS)


# FitError appends the PostFilter plugins' message after the counted reasons' final period: the
# preemption summary (``preemption: ...``) and, from 1.31, DynamicResources' own (``no new claims to
# deallocate``, ``still not schedulable``) before it; when a PreFilter refused the Pod before
# DynamicResources ran, 1.34's DynamicResources finds no state of its own and says ``not found``
# (recorded: ``pod has unbound immediate PersistentVolumeClaims. not found``). None of them is a
# reason why a node did not fit.
_POST_FILTER = re.compile(
    r"\.?\s*preemption:|\.\s+(?=(?:no new claims to deallocate|still not schedulable)\b|not found\.?\s*$)",
    re.IGNORECASE,
)


def _reasons_body(body: str) -> str:
    body = _POST_FILTER.split(body, maxsplit=1)[0]
    return _END.sub("", body.strip()).strip()


def _counted_reasons(body: str) -> tuple[Counter[str], str | None]:
    counts: Counter[str] = Counter()
    prefilter = None
    last: str | None = None
    for chunk in _split_reasons(_reasons_body(body)):
        counted = _COUNTED.match(chunk)
        if counted:
            last = _REPEATED.sub("", counted.group("reason")).strip()
            counts[last] += int(counted.group("count"))
        elif last is not None:
            # A reason with a comma of its own (the old taint wording, "max cluster cpu, memory
            # limit reached"): the uncounted tail belongs to the reason before it.
            count = counts.pop(last)
            last = f"{last}, {chunk}"
            counts[last] += count
        elif prefilter is None:
            prefilter = _REPEATED.sub("", chunk)
        else:
            prefilter = f"{prefilter}, {chunk}"
    return counts, prefilter


def _bracketed_reasons(body: str) -> Counter[str]:
    counts: Counter[str] = Counter()
    for chunk in _split_reasons(_reasons_body(body)):
        counted = _COUNT_AFTER.match(chunk)
        if counted:
            counts[counted.group("reason").strip()] += int(counted.group("count"))
        elif chunk:
            counts[chunk] += 1
    return counts


def _split_reasons(body: str) -> list[str]:
    """Split on commas that are not inside a taint's braces."""
    chunks: list[str] = []
    current: list[str] = []
    depth = 0
    for char in body:
        if char == "{":
            depth += 1
        elif char == "}":
            depth = max(0, depth - 1)
        if char == "," and depth == 0:
            chunks.append("".join(current).strip())
            current = []
        else:
            current.append(char)
    chunks.append("".join(current).strip())
    return [c for c in chunks if c]


# The predicate names of Kubernetes 1.0 to 1.9 (and the plugin names cluster-autoscaler logs as
# ``predicateName=``), by the kind of constraint each checks.
_PREDICATE_CATEGORIES: dict[str, str] = {
    **dict.fromkeys(
        (
            "podfitsresources",
            "podexceedsfreecpu",
            "podexceedsfreememory",
            "podexceedsmaxpodnumber",
            "noderesourcesfit",
        ),
        "resources",
    ),
    **dict.fromkeys(("podfitshostports", "podfitsports", "nodeports"), "ports"),
    **dict.fromkeys(
        ("podtoleratesnodetaints", "podtoleratesnodenoexecutetaints", "tainttoleration"), "taint"
    ),
    **dict.fromkeys(
        (
            "matchnodeselector",
            "podselectormatches",
            "hostname",
            "podfitshost",
            "checknodelabelpresence",
            "nodeaffinity",
            "nodename",
        ),
        "selector",
    ),
    **dict.fromkeys(
        (
            "novolumezoneconflict",
            "novolumenodeconflict",
            "volumenodeaffinityconflict",
            "volumebindingnomatch",
            "checkvolumebinding",
            "nodiskconflict",
            "maxebsvolumecount",
            "maxgcepdvolumecount",
            "maxazurediskvolumecount",
            "maxcsivolumecountpred",
            "maxvolumecount",
            "volumebinding",
            "volumezone",
            "volumerestrictions",
            "nodevolumelimits",
        ),
        "volume",
    ),
    **dict.fromkeys(
        (
            "matchinterpodaffinity",
            "checkserviceaffinity",
            "podaffinityrulesnotmatch",
            "podantiaffinityrulesnotmatch",
            "existingpodsantiaffinityrulesnotmatch",
            "evenpodsspread",
            "interpodaffinity",
            "podtopologyspread",
        ),
        "topology",
    ),
    **dict.fromkeys(("checknodeunschedulable", "nodeunschedulable"), "cordoned"),
    **dict.fromkeys(
        (
            "checknodecondition",
            "checknodememorypressure",
            "checknodediskpressure",
            "checknodepidpressure",
            "nodenotready",
            "nodeundermemorypressure",
            "nodeunderdiskpressure",
            "nodeunderpidpressure",
            "nodeoutofdisk",
            "nodenetworkunavailable",
            "nodeunknowncondition",
        ),
        "node-condition",
    ),
}
# Read in this order: "volume node affinity conflict" is about a volume, not about node affinity.
_CATEGORY_WORDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("preemption", re.compile(r"preemption|preemptor|no preemption victims")),
    # The taints the node lifecycle controller and the kubelet put on a node for its own condition
    # (1.17 on: ``had untolerated taint {node.kubernetes.io/not-ready: }``) say the node is unwell,
    # not that the Pod lacks a toleration; ``unschedulable`` is a cordon.
    ("cordoned", re.compile(r"taints? \{node\.kubernetes\.io/unschedulable\b")),
    (
        "node-condition",
        re.compile(
            r"taints? \{(?:node\.kubernetes\.io/(?:not-ready|unreachable|memory-pressure|disk-pressure|"
            r"pid-pressure|network-unavailable|out-of-disk)|node\.cloudprovider\.kubernetes\.io/"
            r"(?:uninitialized|shutdown))\b"
        ),
    ),
    # DynamicResources (1.32 on) says ``cannot allocate all claims`` when no node has the free
    # devices a claim asks for: the structured-parameters form of ``Insufficient <device>``.
    (
        "resources",
        re.compile(r"^insufficient |too many pods|didn't have enough resource|cannot allocate all claims"),
    ),
    # cluster-autoscaler's limits on a scale-up (core/scaleup/orchestrator/skippedreasons.go and
    # rejectedreasons.go): a group's or the cluster's size or resources (``exceeded quota: "<id>",
    # resources: ...`` from 1.36, its own resource limits, not a ResourceQuota), an atomic
    # (all-or-nothing) request that would not fit whole.
    (
        "scale-limit",
        re.compile(
            r"max node group size|max cluster .*limit|max total nodes|size limit|^exceeded quota: \"|"
            r"atomic scale-up exceeds|all-or-nothing"
        ),
    ),
    ("scale-backoff", re.compile(r"in backoff|backoff after failed|not ready for scale-?up")),
    (
        "volume",
        re.compile(
            r"volume|persistentvolumeclaim|persistent ?volumes?|\bpvcs?\b|disk conflict|available disk|"
            r"free storage"
        ),
    ),
    (
        "node-condition",
        re.compile(
            r"were not ready|memory pressure|disk pressure|pid pressure|out of disk|unavailable network|"
            r"unknown condition|\bhad conditions?\b"
        ),
    ),
    ("taint", re.compile(r"taint")),
    ("ports", re.compile(r"free ports|host ?port")),
    ("cordoned", re.compile(r"unschedulable")),
    # NodeAffinity's PreFilter, when required terms name nodes (``metadata.name In``): the nodes
    # left out, and terms that name no node in common. Not pod affinity, whatever the words say.
    ("selector", re.compile(r"didn't satisfy plugin\(s\) \[nodeaffinity\]|^pod affinity terms conflict$")),
    (
        "topology",
        re.compile(r"pod affinity|anti-affinity|topology spread|spread constraint|service affinity"),
    ),
    (
        "selector",
        re.compile(
            r"node affinity|node selector|affinity/selector|requested node name|requested hostname|"
            r"requested labels"
        ),
    ),
)


def reason_category(reason: str) -> str:
    """Which kind of constraint a scheduler (or cluster-autoscaler) reason is about.

    ``resources``, ``taint``, ``selector``, ``cordoned``, ``ports``, ``volume``, ``topology``
    (pod affinity and spread), ``node-condition`` (not ready, pressure), ``scale-limit`` and
    ``scale-backoff`` (cluster-autoscaler's reasons for a node group), ``preemption``, or ``other``.
    """
    text = reason.strip().rstrip(".")
    named = _PREDICATE_CATEGORIES.get(text.lower())
    if named is not None:
        return named
    lowered = text.lower()
    for category, words in _CATEGORY_WORDS:
        if words.search(lowered):
            return category
    return "other"


_OLD_RESOURCE_NAMES = {"cpu": "cpu", "memory": "memory", "podcount": "pods", "nvidiagpu": LEGACY_GPU_RESOURCE}


def normalise_reason(reason: str) -> str:
    """Map older and newer wordings of one scheduler reason to one key for comparisons."""
    text = _REPEATED.sub("", reason.strip().rstrip("."))
    taint = re.match(r"node\(s\) had (?:untolerated )?taint \{(?P<t>[^}]*)\}", text)
    if taint:
        return f"taint {{{taint.group('t')}}}"
    lowered = text.lower()
    if lowered in _UNNAMED_TAINT_REASONS:
        return UNNAMED_TAINTS
    resource = insufficient_resource(text)
    if resource is not None:
        return f"insufficient {resource}"
    if lowered == "too many pods":
        return "insufficient pods"
    if "node affinity/selector" in lowered or "didn't match node selector" in lowered:
        return "node affinity/selector"
    return lowered


def comparable_reasons(reasons: Mapping[str, int], like: Mapping[str, int]) -> Counter[str]:
    """``reasons`` by ``normalise_reason`` key, worded as ``like`` (normalised) words them: when
    ``like`` names no taint (``had untolerated taint(s)``), taints named one by one are added up."""
    found: Counter[str] = Counter()
    for reason, count in reasons.items():
        found[normalise_reason(reason)] += count
    if UNNAMED_TAINTS in like:
        for key in [k for k in found if k.startswith("taint {")]:
            found[UNNAMED_TAINTS] += found.pop(key)
    return found


_INSUFFICIENT = re.compile(
    r"^(?:insufficient (?P<name>\S+)|node didn't have enough resource: (?P<old>[^,\s]+))", re.IGNORECASE
)


def insufficient_resource(reason: str) -> str | None:
    """The resource an ``Insufficient X`` reason names, with 1.1-era names (``CPU``) made current."""
    match = _INSUFFICIENT.match(reason.strip())
    if match is None:
        lowered = reason.strip().lower()
        if lowered in ("podexceedsfreecpu",):
            return "cpu"
        if lowered in ("podexceedsfreememory",):
            return "memory"
        if lowered in ("podexceedsmaxpodnumber", "too many pods"):
            return "pods"
        return None
    name = (match.group("name") or match.group("old")).rstrip(".,")
    return _OLD_RESOURCE_NAMES.get(name.lower(), name)


# Taints the control plane or a node's own condition puts on nodes: they keep workloads off by design
# (or say the node is unwell), so a Pod that does not tolerate them is not what holds it.
BY_DESIGN_TAINT_PREFIXES = (
    "node-role.kubernetes.io/",
    "node.kubernetes.io/",
    "node.cloudprovider.kubernetes.io/",
)


def is_by_design_taint(reason: str) -> bool:
    """A taint reason about the control plane or another role taint (``node-role.kubernetes.io/...``)."""
    taint = re.search(r"taints? \{(?P<key>[^:}]*)", reason)
    return taint is not None and taint.group("key").strip().startswith("node-role.kubernetes.io/")


def taint_of(reason: str) -> str:
    """``{key: value}`` from a taint reason, or the reason itself when the message names no taint."""
    taint = re.search(r"\{[^}]*\}", reason)
    return taint.group() if taint else reason
