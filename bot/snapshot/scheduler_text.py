"""kube-scheduler's reasons as people quote them: inside a sentence, without the message around them.

The whole FailedScheduling grammar lives with the classifier (``bot.classify.fit``); this is the
one part the paste reader also needs, to know that a line of prose carries a scheduler reason.
"""

from __future__ import annotations

import re
from collections import Counter

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
