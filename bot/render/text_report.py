"""Terminal and Markdown reports, in the guide's reading order for each finding:
layer and cause, evidence, commands, fix, verify.
"""

from __future__ import annotations

from bot.catalogue import Catalogue
from bot.diagnosis import Diagnosis
from bot.render.localize import LocalizedFinding, localize_all, verdict_summary
from bot.render.messages import Lang, known, say
from bot.render.seen_before import report_line

EVIDENCE_LIMIT = 1200


def clip(text: str, lang: Lang, limit: int = EVIDENCE_LIMIT) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + " " + say("truncated", lang, count=len(text) - limit)


def _cause(finding: LocalizedFinding, lang: Lang) -> str:
    return say("cause", lang, cause=finding.cause) if finding.cause else say("no_cause", lang)


def _note(note: str, lang: Lang) -> str:
    key = f"note.{note}"
    return say(key, lang) if known(key) else note


def render_text(diagnosis: Diagnosis, catalogue: Catalogue, lang: Lang) -> str:
    findings = localize_all(diagnosis, catalogue, lang)
    out: list[str] = []
    if diagnosis.cluster:
        out.append(f"{say('heading.cluster', lang)}: {diagnosis.cluster}")
    out.append(f"{say('heading.verdict', lang)}: {verdict_summary(diagnosis, findings, lang)}")
    if diagnosis.figures:
        figures = ", ".join(f"{say('figure.' + k, lang)} {v}" for k, v in diagnosis.figures.items())
        out.append(f"{say('heading.figures', lang)}: {figures}")
    for index, finding in enumerate(findings, 1):
        out.append("")
        out.append(
            f"{index}. [{say('severity.' + finding.severity, lang)}] {finding.code} "
            f"{say('layer.' + finding.layer, lang)} · {_cause(finding, lang)} · {finding.subject.label()}"
        )
        out.append(f"   {finding.title}")
        out.append(f"   {finding.explanation}")
        if finding.evidence:
            out.append(f"   {say('heading.evidence', lang)}:")
            out += [f"     [{e.source}] {clip(e.text, lang)}" for e in finding.evidence]
        if finding.commands:
            out.append(f"   {say('heading.commands', lang)}:")
            out += [f"     $ {command}" for command in finding.commands]
        out.append(f"   {say('heading.fix', lang)}:")
        out += [f"     - {line}" for line in finding.fix]
        out.append(f"   {say('heading.verify', lang)}:")
        out += [f"     {n}. {line}" for n, line in enumerate(finding.verify, 1)]
    if diagnosis.similar:
        out.append("")
        out.append(f"{say('heading.similar', lang)} ({say('similar.intro', lang)}):")
        out += [f"  {n}. {report_line(r, lang)}" for n, r in enumerate(diagnosis.similar, 1)]
    if diagnosis.errors:
        out.append("")
        out.append(f"{say('heading.errors', lang)}:")
        out += [f"  - {e.source}: {e.message}" + (f" ({e.hint})" if e.hint else "") for e in diagnosis.errors]
    if diagnosis.notes:
        out.append("")
        out.append(f"{say('heading.notes', lang)}:")
        out += [f"  - {_note(note, lang)}" for note in diagnosis.notes]
    return "\n".join(out) + "\n"


def _fence(text: str) -> str:
    return text.replace("```", "'''")


def render_markdown(diagnosis: Diagnosis, catalogue: Catalogue, lang: Lang) -> str:
    findings = localize_all(diagnosis, catalogue, lang)
    title = f"raydiag — {diagnosis.cluster}" if diagnosis.cluster else "raydiag"
    out = [
        f"# {title}",
        "",
        f"**{say('heading.verdict', lang)}:** {verdict_summary(diagnosis, findings, lang)}",
    ]
    if diagnosis.figures:
        out += ["", f"| {say('heading.figures', lang)} | |", "|---|---|"]
        out += [f"| {say('figure.' + k, lang)} | {v} |" for k, v in diagnosis.figures.items()]
    for index, finding in enumerate(findings, 1):
        out += [
            "",
            f"## {index}. {finding.title}",
            "",
            f"`{finding.code}` · {say('severity.' + finding.severity, lang)}"
            f" · {say('layer.' + finding.layer, lang)} · {_cause(finding, lang)}"
            f" · `{finding.subject.label()}`",
            "",
            finding.explanation,
        ]
        if finding.evidence:
            out += ["", f"**{say('heading.evidence', lang)}**", "", "```"]
            out += [f"[{e.source}] {_fence(clip(e.text, lang))}" for e in finding.evidence]
            out.append("```")
        if finding.commands:
            out += ["", f"**{say('heading.commands', lang)}**", "", "```sh"]
            out += [_fence(c) for c in finding.commands]
            out.append("```")
        out += ["", f"**{say('heading.fix', lang)}**", ""] + [f"- {line}" for line in finding.fix]
        out += ["", f"**{say('heading.verify', lang)}**", ""]
        out += [f"{n}. {line}" for n, line in enumerate(finding.verify, 1)]
    if diagnosis.similar:
        out += ["", f"## {say('heading.similar', lang)}", "", f"_{say('similar.intro', lang)}_", ""]
        out += [f"{n}. {report_line(r, lang)}" for n, r in enumerate(diagnosis.similar, 1)]
    if diagnosis.errors:
        out += ["", f"## {say('heading.errors', lang)}", ""]
        out += [f"- `{e.source}`: {e.message}" for e in diagnosis.errors]
    if diagnosis.notes:
        out += ["", f"## {say('heading.notes', lang)}", ""] + [f"- {_note(n, lang)}" for n in diagnosis.notes]
    return "\n".join(out) + "\n"
