"""Post a rendered thread to Slack: root in the channel, details as replies.

Rate limits are retried by the Web client's RateLimitErrorRetryHandler (it honours Retry-After).
If Slack ever rejects our blocks (``invalid_blocks``, ``msg_too_long``), the same content goes out
as plain text rather than the user getting nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_handlers import (
    ConnectionErrorRetryHandler,
    RateLimitErrorRetryHandler,
    ServerErrorRetryHandler,
)

from bot.deliver.metered import MeteredWebClient
from bot.observe.metrics import Metrics

LOG = logging.getLogger(__name__)
BLOCK_ERRORS = frozenset({"invalid_blocks", "invalid_blocks_format", "msg_too_long", "too_many_attachments"})
PLAIN_LIMIT = 3900


def web_client(token: str, base_url: str | None = None, metrics: Metrics | None = None) -> WebClient:
    """A Web API client that retries connection errors, 429 (after Retry-After) and 5xx; metered if asked."""
    handlers = [
        ConnectionErrorRetryHandler(),
        RateLimitErrorRetryHandler(max_retry_count=3),
        # 500/503 from Slack are brief; two retries with backoff, then the caller's fallback speaks.
        ServerErrorRetryHandler(max_retry_count=2),
    ]
    url = base_url or WebClient.BASE_URL
    if metrics is not None:
        return MeteredWebClient(token=token, base_url=url, retry_handlers=handlers, metrics=metrics)
    return WebClient(token=token, base_url=url, retry_handlers=handlers)


def plain_text(message: dict[str, Any]) -> str:
    """The readable text of a message's blocks, for the fallback."""
    parts: list[str] = []
    for block in message.get("blocks", []):
        text = block.get("text")
        if isinstance(text, dict) and isinstance(text.get("text"), str):
            parts.append(text["text"])
        for element in block.get("elements", []) if block.get("type") == "context" else []:
            if isinstance(element, dict) and isinstance(element.get("text"), str):
                parts.append(element["text"])
    body = "\n".join(parts) or str(message.get("text", ""))
    return body[:PLAIN_LIMIT]


def post(
    client: WebClient, channel: str, message: dict[str, Any], thread_ts: str | None = None
) -> str | None:
    """Post one message; returns its ts. Falls back to plain text when Slack refuses the blocks."""
    try:
        response = client.chat_postMessage(
            channel=channel, text=message["text"], blocks=message["blocks"], thread_ts=thread_ts
        )
    except SlackApiError as error:
        if error.response.get("error") not in BLOCK_ERRORS:
            raise
        LOG.warning("Slack refused blocks (%s); posting plain text", error.response.get("error"))
        response = client.chat_postMessage(channel=channel, text=plain_text(message), thread_ts=thread_ts)
    ts = response.get("ts")
    return str(ts) if ts else None


def post_thread(
    client: WebClient, channel: str, messages: Sequence[dict[str, Any]], thread_ts: str | None = None
) -> str | None:
    """Root message (or a reply, when ``thread_ts`` is given) then the replies under it."""
    if not messages:
        return None
    root_ts = post(client, channel, messages[0], thread_ts)
    under = thread_ts or root_ts
    for message in messages[1:]:
        post(client, channel, message, under)
    return root_ts


def update(client: WebClient, channel: str, ts: str, message: dict[str, Any]) -> bool:
    """Replace a message we posted; False (logged) when Slack refuses, e.g. it was deleted."""
    try:
        client.chat_update(channel=channel, ts=ts, text=str(message["text"]), blocks=message["blocks"])
    except SlackApiError as error:
        LOG.warning("could not update message %s in %s: %s", ts, channel, error.response.get("error"))
        return False
    return True


def upload_file(
    client: WebClient, channel: str, thread_ts: str | None, content: bytes, filename: str, title: str
) -> bool:
    """Upload a file (a chart) into a channel or a thread; False (logged) when Slack refuses."""
    try:
        client.files_upload_v2(
            channel=channel, thread_ts=thread_ts, file=content, filename=filename, title=title
        )
    except SlackApiError as error:
        LOG.warning("%s not uploaded to %s: %s", filename, channel, error.response.get("error"))
        return False
    return True
