"""What the classifier concludes, as data.

A ``Finding`` is language-neutral: it names its rule and carries the facts (``params``) that the
rule's English and Chinese templates are filled with at render time, so one diagnosis can be shown
to a Chinese-speaking channel and an English terminal alike. ``evidence`` is always verbatim text
from the snapshot (an event message, a log line, a figure), never a paraphrase.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from bot.snapshot.model import CollectionError

Severity = Literal["critical", "warning", "info"]
Layer = Literal["kubernetes", "ray", "application"]
VerdictLayer = Literal["kubernetes", "ray", "application", "healthy", "unknown"]

SEVERITY_ORDER: dict[str, int] = {"critical": 0, "warning": 1, "info": 2}


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class Subject(_Model):
    kind: str
    name: str | None = None
    namespace: str | None = None

    def label(self) -> str:
        where = f" -n {self.namespace}" if self.namespace else ""
        return f"{self.kind}/{self.name}{where}" if self.name else self.kind


class Evidence(_Model):
    source: str
    text: str


class Finding(_Model):
    rule: str
    code: str
    cause: int | None
    layer: Layer
    severity: Severity
    subject: Subject
    evidence: list[Evidence] = Field(default_factory=list)
    params: dict[str, str] = Field(default_factory=dict)


class Diagnosis(_Model):
    cluster: str | None = None
    # Where the Ray cluster lives; fills {namespace} in commands whose subject has none.
    namespace: str | None = None
    findings: list[Finding] = Field(default_factory=list)
    errors: list[CollectionError] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    # Headline figures for the verdict line ("3/4 worker Pods joined Ray", "GPUs: 8 in Kubernetes,
    # 4 in Ray"); keys are stable identifiers, values already formatted.
    figures: dict[str, str] = Field(default_factory=dict)

    @property
    def top(self) -> Finding | None:
        return self.findings[0] if self.findings else None

    @property
    def verdict_layer(self) -> VerdictLayer:
        alarming = [f for f in self.findings if f.severity != "info"]
        if alarming:
            return alarming[0].layer
        if self.findings or self.figures:
            return "healthy"
        return "unknown"
