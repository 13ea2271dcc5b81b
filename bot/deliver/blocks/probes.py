"""Slack messages for probe results: facts first, then what they mean, in the user's language.

Built with ``slack_sdk.models`` blocks and validated before they leave this module.
"""

from __future__ import annotations

from typing import Any

from slack_sdk.models.blocks import Block, ContextBlock, MarkdownTextObject, SectionBlock

from bot.deliver.blocks import validated
from bot.probes import HEAD_VERDICT_MESSAGES, PROBE_MESSAGES
from bot.probes.gpu import GpuProbeResult
from bot.probes.head import HeadCheckResult
from bot.probes.status import StatusResult
from bot.render.messages import Lang
from bot.render.slack import FALLBACK_LIMIT, SECTION_LIMIT, clip, escape


def _message(text: str, sections: list[str], context: str | None = None) -> dict[str, Any]:
    blocks: list[Block] = [
        SectionBlock(text=MarkdownTextObject(text=clip(s, SECTION_LIMIT, "en"))) for s in sections if s
    ]
    if context:
        blocks.append(ContextBlock(elements=[MarkdownTextObject(text=clip(context, 2000, "en"))]))
    return {"text": clip(text, FALLBACK_LIMIT, "en"), "blocks": validated(blocks)}


def _facts(pairs: list[tuple[str, object]]) -> str:
    return "\n".join(
        f"• *{name}:* `{escape(str(value))}`" for name, value in pairs if value not in (None, "", ())
    )


def gpu_probe_message(result: GpuProbeResult, cluster: str, lang: Lang) -> dict[str, Any]:
    title = {
        "en": f"*GPU probe on `{cluster}`:* {result.outcome}",
        "zh": f"*`{cluster}` 上的 GPU 探针：* {result.outcome}",
    }
    facts = _facts(
        [
            ("node", result.node_ip or result.node_id),
            ("node id", result.node_id),
            ("CUDA_VISIBLE_DEVICES", result.cuda_visible_devices),
            ("devices seen", result.device_count),
            ("GPU type", result.gpu_resource),
            ("job", f"{result.submission_id} ({result.job_status})" if result.submission_id else None),
            ("stopped after timeout", "yes" if result.stopped_after_timeout else None),
            ("elapsed", f"{result.elapsed_s:.1f}s"),
            ("error", result.error),
        ]
    )
    logs = "```" + "\n".join(result.log_tail[-10:]).replace("```", "'''") + "```" if result.log_tail else ""
    meaning = PROBE_MESSAGES[result.outcome][lang]
    return _message(f"GPU probe {result.outcome} on {cluster}", [title[lang], facts, logs], meaning)


def head_check_message(result: HeadCheckResult, cluster: str, lang: Lang) -> dict[str, Any]:
    title = {
        "en": f"*Head check on `{cluster}`:* {result.verdict}",
        "zh": f"*`{cluster}` 的 head 检查：* {result.verdict}",
    }
    addresses = [f"{a.ip} → {a.pod or '?'} ({'ready' if a.ready else 'not ready'})" for a in result.addresses]
    ports = [
        f"{p.port_name} {p.host}:{p.port} "
        + (
            f"✅ {p.latency_ms:.0f} ms"
            if p.reachable and p.latency_ms is not None
            else "✅"
            if p.reachable
            else f"❌ {p.error or ''}"
        )
        for p in result.ports
    ]
    facts = _facts(
        [
            ("service", result.service),
            ("selector", ", ".join(f"{k}={v}" for k, v in result.selector)),
            ("endpoints", "; ".join(addresses) or "none"),
            ("errors", "; ".join(result.errors)),
        ]
    )
    table = "```" + "\n".join(ports) + "```" if ports else ""
    return _message(
        f"Head check {result.verdict} on {cluster}",
        [title[lang], facts, table],
        HEAD_VERDICT_MESSAGES[result.verdict][lang],
    )


def status_message(result: StatusResult, cluster: str, lang: Lang) -> dict[str, Any]:
    title = {"en": f"*ray status on `{cluster}`*", "zh": f"*`{cluster}` 的 ray status*"}
    if result.text:
        body = "```" + result.text.replace("```", "'''")[: SECTION_LIMIT - 10] + "```"
        return _message(f"ray status of {cluster}", [title[lang], body], result.note)
    reason = result.error or result.note or result.outcome
    return _message(
        f"ray status of {cluster}: {result.outcome}",
        [title[lang], escape(str(reason))],
        PROBE_MESSAGES[result.outcome][lang] if result.outcome == "unreachable" else None,
    )
