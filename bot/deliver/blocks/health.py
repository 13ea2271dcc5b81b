"""A health post as a Slack message: the words of ``bot.render.health``, in Block Kit."""

from __future__ import annotations

from typing import Any

from slack_sdk.models.blocks import Block, ContextBlock, MarkdownTextObject, SectionBlock

from bot.deliver.blocks import validated
from bot.render.health import HealthFacts, health_post_text
from bot.render.messages import Lang
from bot.render.slack import FALLBACK_LIMIT, MAX_BLOCKS, SECTION_LIMIT, clip


def render_health_post(facts: HealthFacts, lang: Lang, *, headline: str | None = None) -> dict[str, Any]:
    """The post as ``{"text": ..., "blocks": [...]}``; ``headline`` e.g. "still pending after 40 min"."""
    post = health_post_text(facts, lang, headline=headline)
    blocks: list[Block] = [
        SectionBlock(text=MarkdownTextObject(text=clip(section, SECTION_LIMIT, lang)))
        for section in post.sections
    ]
    if post.note:
        blocks.append(ContextBlock(elements=[MarkdownTextObject(text=post.note)]))
    assert len(blocks) <= MAX_BLOCKS
    return {"text": clip(post.fallback, FALLBACK_LIMIT, lang), "blocks": validated(blocks)}
