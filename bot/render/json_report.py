"""The machine-readable report: exactly the documented JSON contract, one object."""

from __future__ import annotations

import json
from typing import Any

from bot.catalogue import Catalogue
from bot.diagnosis import Diagnosis
from bot.render.localize import localize_all, verdict_summary
from bot.render.messages import Lang


def report_dict(diagnosis: Diagnosis, catalogue: Catalogue, lang: Lang) -> dict[str, Any]:
    findings = localize_all(diagnosis, catalogue, lang)
    return {
        "cluster": diagnosis.cluster,
        "verdict": {"layer": diagnosis.verdict_layer, "summary": verdict_summary(diagnosis, findings, lang)},
        "findings": [
            {
                "rule": f.rule,
                "code": f.code,
                "cause": f.cause,
                "layer": f.layer,
                "severity": f.severity,
                "title": f.title,
                "subject": {"kind": f.subject.kind, "name": f.subject.name, "namespace": f.subject.namespace},
                "evidence": [{"source": e.source, "text": e.text} for e in f.evidence],
                "commands": f.commands,
                "fix": f.fix,
                "verify": f.verify,
            }
            for f in findings
        ],
        "errors": [{"source": e.source, "message": e.message} for e in diagnosis.errors],
        "similar": [
            {
                "id": r.id,
                "causes": list(r.causes),
                "resolution": r.resolution,
                "address": r.address,
                "score": r.score,
                "shared_words": r.shared_words,
                "healthy": r.healthy,
            }
            for r in diagnosis.similar
        ],
    }


def render_json(diagnosis: Diagnosis, catalogue: Catalogue, lang: Lang) -> str:
    return json.dumps(report_dict(diagnosis, catalogue, lang), ensure_ascii=False, indent=2)
