"""Slack messages of the re-verification: a pool's probe verdict that changed, and the
verification order after an upgrade. The words are in ``bot.render.messages``; the facts come
from ``bot.schedule.verification``'s results, passed in as plain values.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from slack_sdk.models.blocks import Block, ContextBlock, MarkdownTextObject, SectionBlock

from bot.deliver.blocks import validated
from bot.probes.verification import STEP_CAUSES, Change, PoolResult, StepResult, VersionChange
from bot.render.messages import Lang, say
from bot.render.slack import FALLBACK_LIMIT, SECTION_LIMIT, clip, escape
from bot.render.verify_text import pool_name, verdict_sentence

_MARK = {"ok": "✅", "failed": "❌", "unknown": "❔", "skipped": "➖"}


def _facts(result: PoolResult) -> str:
    detail = result.detail
    pairs = [
        ("node", result.node),
        ("CUDA_VISIBLE_DEVICES", detail.get("cuda_visible_devices")),
        ("devices seen", detail.get("device_count")),
        ("job", detail.get("submission_id")),
        ("elapsed", f"{result.elapsed_s:.1f}s"),
    ]
    return " · ".join(f"{name} `{escape(str(value))}`" for name, value in pairs if value not in (None, ""))


def _message(text: str, blocks: list[Block]) -> dict[str, Any]:
    return {"text": clip(text, FALLBACK_LIMIT, "en"), "blocks": validated(blocks)}


def _section(text: str, lang: Lang) -> SectionBlock:
    return SectionBlock(text=MarkdownTextObject(text=clip(text, SECTION_LIMIT, lang)))


def probe_change_message(cluster: str, change: Change, lang: Lang, timeout_s: float) -> dict[str, Any]:
    """One pool whose verdict is news: before → after, what it means, how to look again."""
    pool = pool_name(change.pool, lang)
    if change.before is None:
        title = say("verify.probe.first", lang, cluster=cluster, pool=pool, after=change.after.verdict)
    else:
        title = say(
            "verify.probe.changed",
            lang,
            cluster=cluster,
            pool=pool,
            before=change.before,
            after=change.after.verdict,
        )
    blocks: list[Block] = [
        _section(title, lang),
        _section(verdict_sentence(change.after, lang, timeout_s, escape), lang),
    ]
    facts = _facts(change.after)
    if facts:
        blocks.append(ContextBlock(elements=[MarkdownTextObject(text=clip(facts, 2000, lang))]))
    blocks.append(
        ContextBlock(elements=[MarkdownTextObject(text=say("verify.probe.again", lang, cluster=cluster))])
    )
    before = change.before or "first run"
    fallback = f"GPU probe on {cluster}, pool {change.pool}: {before} -> {change.after.verdict}"
    return _message(fallback, blocks)


def verification_message(
    cluster: str,
    upgrades: Sequence[VersionChange],
    steps: Sequence[StepResult],
    results: Sequence[PoolResult],
    lang: Lang,
    *,
    timeout_s: float,
) -> dict[str, Any]:
    """The verification order after a version change: the change, each step, the first to fix."""
    failed = [step for step in steps if step.status == "failed"]
    result = say("verify.upgrade.failed" if failed else "verify.upgrade.passed", lang)
    changed = ", ".join(
        f"{say(f'verify.part.{u.part}', lang)} `{escape(u.before)}` → `{escape(u.after)}`" for u in upgrades
    )
    lines = []
    for number, step in enumerate(steps, 1):
        detail = ", ".join(f"{key} {escape(value)}" for key, value in step.detail.items())
        lines.append(
            f"{number}. {_MARK.get(step.status, '•')} {say(f'verify.step.{step.step}', lang)}: "
            f"{say(f'verify.status.{step.status}', lang)}" + (f" ({detail})" if detail else "")
        )
    blocks: list[Block] = [
        _section(say("verify.upgrade.title", lang, cluster=cluster, changes=changed, result=result), lang),
        _section("\n".join(lines), lang),
    ]
    if failed:
        first = failed[0]
        numbers = ", ".join(str(c) for c in STEP_CAUSES.get(first.step, ()))
        blocks.append(
            _section(
                say(
                    "verify.upgrade.first_failed",
                    lang,
                    step=say(f"verify.step.{first.step}", lang),
                    causes=numbers,
                ),
                lang,
            )
        )
        for probe in results:
            if probe.verdict != "ran":
                blocks.append(
                    _section(
                        f"{pool_name(probe.pool, lang)}: {verdict_sentence(probe, lang, timeout_s, escape)}",
                        lang,
                    )
                )
    else:
        blocks.append(_section(say("verify.upgrade.all_passed", lang), lang))
    parts = ", ".join(f"{u.part} {u.before} -> {u.after}" for u in upgrades)
    fallback = f"{cluster}: {parts}; verification {'failed' if failed else 'passed'}"
    return _message(fallback, blocks[:50])
