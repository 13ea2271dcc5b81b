"""Block Kit messages, built with ``slack_sdk.models`` and validated before they leave here.

The renderers below (``bot.render``) write the words; these modules put them into Slack's blocks:
``thread`` for a diagnosis (a root message and one thread reply per finding), ``health`` for a
scheduled health post, ``probes`` for what a probe button found. Every message is
``{"text": fallback, "blocks": [...]}``, each block checked with ``validate_json`` so Slack's
limits (section text, header, button text, context elements) are met by construction.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from slack_sdk.models.blocks import Block, ContextBlock, MarkdownTextObject


def validated(blocks: Sequence[Block]) -> list[dict[str, Any]]:
    """The blocks as Slack's JSON, each validated against Slack's limits first."""
    for block in blocks:
        block.validate_json()
    return [block.to_dict() for block in blocks]


def note(text: str) -> dict[str, Any]:
    """A one-line note (mrkdwn as given) in a context block, the same text as its fallback."""
    return {
        "text": text,
        "blocks": validated([ContextBlock(elements=[MarkdownTextObject(text=text[:3000])])]),
    }
