"""Slack messages for a diagnosis: a short root message in the channel, the details in its thread.

Built with ``slack_sdk.models`` blocks and validated before they leave this module, so Slack's
limits (3000 characters of section text, 150 of header, 75 of button text, 10 context elements)
are met by construction; the 50-blocks-per-message limit, which the models do not count, is
enforced here. Evidence is quoted verbatim and cut with a visible note when it is too long.

Quiet when healthy: a healthy cluster gets one short root message and no thread replies.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ConfirmObject,
    ContextBlock,
    DividerBlock,
    HeaderBlock,
    MarkdownTextObject,
    PlainTextObject,
    SectionBlock,
)

from bot.catalogue import Catalogue
from bot.deliver.blocks import validated
from bot.deliver.blocks.verdicts import said_words, verdict_blocks
from bot.diagnosis import Diagnosis
from bot.render.localize import LocalizedFinding, localize_all, verdict_summary
from bot.render.messages import Lang, say
from bot.render.seen_before import verdict_of
from bot.render.slack import (
    ACTION_GPU_PROBE,
    ACTION_HEAD_CHECK,
    ACTION_MUTE,
    ACTION_RAY_STATUS,
    ACTION_RERUN,
    FALLBACK_LIMIT,
    HEADER_LIMIT,
    LAYER_EMOJI,
    MAX_BLOCKS,
    SECTION_LIMIT,
    SEVERITY_EMOJI,
    clip,
    escape,
)

EVIDENCE_ITEMS = 6


def _code(lines: Sequence[str], limit: int, lang: Lang) -> str:
    body = "\n".join(line.replace("```", "'''") for line in lines)
    return "```" + clip(body, limit - 6, lang) + "```"


def _section(text: str) -> SectionBlock:
    return SectionBlock(text=MarkdownTextObject(text=text[:SECTION_LIMIT]))


def gpu_type_of(diagnosis: Diagnosis) -> str | None:
    """The GPU type the diagnosis is about, for the probe's constraint (``accelerator_type:A100``)."""
    for finding in diagnosis.findings:
        resource = finding.params.get("resource", "")
        if resource.startswith("accelerator_type:"):
            return resource
    return None


def _buttons(cluster: str | None, lang: Lang, gpu_type: str | None = None) -> ActionsBlock:
    value = json.dumps({"cluster": cluster or "", **({"gpu_type": gpu_type} if gpu_type else {})})
    labels = {
        "en": ("Run GPU probe", "Check head endpoints", "ray status", "Re-run", "Mute 24h"),
        "zh": ("运行 GPU 探针", "检查 head 端点", "ray status", "重新诊断", "静音 24 小时"),
    }[lang]
    ids = (ACTION_GPU_PROBE, ACTION_HEAD_CHECK, ACTION_RAY_STATUS, ACTION_RERUN, ACTION_MUTE)
    return ActionsBlock(
        block_id="raydiag_actions",
        elements=[
            ButtonElement(
                text=PlainTextObject(text=label[:75]),
                action_id=action,
                value=value,
                style="primary" if action == ACTION_GPU_PROBE else None,
                confirm=_probe_confirmation(cluster, lang) if action == ACTION_GPU_PROBE else None,
            )
            for label, action in zip(labels, ids, strict=True)
        ],
    )


def _probe_confirmation(cluster: str | None, lang: Lang) -> ConfirmObject:
    """The GPU probe starts a job on the cluster: Slack asks before sending the press."""
    where = cluster or "?"
    if lang == "zh":
        return ConfirmObject(
            title="运行 GPU 探针？",
            text=f"将在 `{where}` 上提交一个申请 1 张 GPU 的 Ray 任务，超时后自动停止。",
            confirm="运行",
            deny="取消",
        )
    return ConfirmObject(
        title="Run a GPU probe?",
        text=f"This submits a one-GPU Ray task to `{where}`; it is stopped when it times out.",
        confirm="Run it",
        deny="Cancel",
    )


def _figures(diagnosis: Diagnosis, lang: Lang) -> list[str]:
    return [f"*{say('figure.' + key, lang)}:* {value}" for key, value in list(diagnosis.figures.items())[:10]]


def root_message(
    diagnosis: Diagnosis, findings: list[LocalizedFinding], lang: Lang, verdict_id: str | None = None
) -> dict[str, Any]:
    layer = diagnosis.verdict_layer
    summary = verdict_summary(diagnosis, findings, lang)
    where = f"*{escape(diagnosis.cluster)}*" if diagnosis.cluster else "raydiag"
    blocks: list[Block] = [_section(f"{LAYER_EMOJI[layer]} {where} · {escape(summary)}")]
    figures = _figures(diagnosis, lang)
    if figures:
        blocks.append(ContextBlock(elements=[MarkdownTextObject(text=f[:300]) for f in figures]))
    if diagnosis.errors:
        shown = "; ".join(escape(f"{e.source}: {e.message}") for e in diagnosis.errors[:3])
        more = len(diagnosis.errors) - 3
        suffix = f" (+{more})" if more > 0 else ""
        blocks.append(
            ContextBlock(
                elements=[
                    MarkdownTextObject(
                        text=clip(f":warning: {say('heading.errors', lang)}: {shown}{suffix}", 1900, lang)
                    )
                ]
            )
        )
    blocks.append(_buttons(diagnosis.cluster, lang, gpu_type_of(diagnosis)))
    if verdict_id is not None:  # kept in the state store: people may say whether the cause was right
        blocks += verdict_blocks(verdict_id, said_words(diagnosis, lang), lang)
    return _message(summary, blocks)


def finding_message(finding: LocalizedFinding, index: int, lang: Lang) -> dict[str, Any]:
    cause = say("cause", lang, cause=finding.cause) if finding.cause else say("no_cause", lang)
    header = f"{index}. {finding.title}"
    blocks: list[Block] = [
        HeaderBlock(text=PlainTextObject(text=clip(header, HEADER_LIMIT, lang))),
        ContextBlock(
            elements=[
                MarkdownTextObject(
                    text=f"{SEVERITY_EMOJI[finding.severity]} *{say('severity.' + finding.severity, lang)}*"
                ),
                MarkdownTextObject(text=f"`{finding.code}`"),
                MarkdownTextObject(text=say("layer." + finding.layer, lang)),
                MarkdownTextObject(text=cause),
                MarkdownTextObject(text=f"`{escape(finding.subject.label())}`"[:300]),
            ]
        ),
        _section(clip(escape(finding.explanation), SECTION_LIMIT, lang)),
    ]
    if finding.evidence:
        lines = [f"[{e.source}] {e.text}" for e in finding.evidence[:EVIDENCE_ITEMS]]
        title = f"*{say('heading.evidence', lang)}*\n"
        blocks.append(_section(title + _code(lines, SECTION_LIMIT - len(title), lang)))
    if finding.commands:
        title = f"*{say('heading.commands', lang)}*\n"
        blocks.append(_section(title + _code(finding.commands, SECTION_LIMIT - len(title), lang)))
    fix = "\n".join(f"• {escape(line)}" for line in finding.fix)
    blocks.append(_section(clip(f"*{say('heading.fix', lang)}*\n{fix}", SECTION_LIMIT, lang)))
    verify = "\n".join(f"{n}. {escape(line)}" for n, line in enumerate(finding.verify, 1))
    blocks.append(_section(clip(f"*{say('heading.verify', lang)}*\n{verify}", SECTION_LIMIT, lang)))
    blocks.append(DividerBlock())
    return _message(f"{finding.code} {finding.title}", blocks)


def seen_before_message(diagnosis: Diagnosis, lang: Lang) -> dict[str, Any]:
    """The closest resolved reports: a heading, then one section per report (cause, how it was
    resolved, a link to its thread). A handful of blocks, well inside Slack's 50."""
    title = say("heading.similar", lang)
    blocks: list[Block] = [
        HeaderBlock(text=PlainTextObject(text=clip(title, HEADER_LIMIT, lang))),
        ContextBlock(elements=[MarkdownTextObject(text=escape(say("similar.intro", lang)))]),
    ]
    for n, report in enumerate(diagnosis.similar, 1):
        address = report.address
        link = f"<{address}|{escape(report.id)}>" if address.startswith("https://") else escape(address)
        score = say("similar.score", lang, score=f"{report.score:g}")
        text = f"*{n}. {verdict_of(report, lang)}* · {escape(report.resolution)}\n{link} · {score}"
        blocks.append(_section(clip(text, SECTION_LIMIT, lang)))
    return _message(title, blocks)


def _message(text: str, blocks: list[Block]) -> dict[str, Any]:
    if len(blocks) > MAX_BLOCKS:
        blocks = [*blocks[: MAX_BLOCKS - 1], ContextBlock(elements=[MarkdownTextObject(text="…")])]
    return {"text": clip(text, FALLBACK_LIMIT, "en"), "blocks": validated(blocks)}


def render_thread(
    diagnosis: Diagnosis, catalogue: Catalogue, lang: Lang, verdict_id: str | None = None
) -> list[dict[str, Any]]:
    """The root message first, then one thread reply per finding and the closest resolved reports
    (none when healthy; for a paste nothing recognised, only what likeness to those reports says).
    With ``verdict_id`` (the id the diagnosis is kept under) the root message asks "Right cause?"."""
    findings = localize_all(diagnosis, catalogue, lang)
    messages = [root_message(diagnosis, findings, lang, verdict_id)]
    if diagnosis.verdict_layer == "healthy" or not (findings or diagnosis.similar):
        return messages
    messages += [finding_message(f, i, lang) for i, f in enumerate(findings, 1)]
    if diagnosis.similar:
        messages.append(seen_before_message(diagnosis, lang))
    return messages
