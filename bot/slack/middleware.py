"""What every request goes through before a listener sees it.

A request id for its logs; Bolt's filter of raydiag's own events (except deletions, which must
reach ``forget_deleted``); one answer per event however often Slack retries it; and buttons acted
on only where they sit on a message raydiag posted.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from typing import Any

from slack_bolt import App, BoltContext, BoltResponse
from slack_bolt.middleware import IgnoringSelfEvents
from slack_bolt.request import BoltRequest
from slack_sdk.errors import SlackApiError

from bot.observe.logs import new_request_id, set_request_id
from bot.render.messages import say
from bot.slack.bot import Bot
from bot.slack.buttons import pressed_on_our_message, thread_of

LOG = logging.getLogger(__name__)


class IgnoringSelfEventsButDeletions(IgnoringSelfEvents):
    """Bolt's own filter of the events raydiag caused, which keeps one more: the deletion of a
    message. Bolt counts the deletion of raydiag's message as raydiag's own event, yet a deleted
    diagnosis must forget what it kept (``forget_deleted``)."""

    def process(
        self, *, req: BoltRequest, resp: BoltResponse, next: Callable[[], BoltResponse]
    ) -> BoltResponse:
        event = req.body.get("event")
        if isinstance(event, dict) and event.get("subtype") == "message_deleted":
            return next()
        return super().process(req=req, resp=resp, next=next)


def register(app: App, bot: Bot) -> None:
    """The middleware, in the order each request meets it."""
    client = app.client

    @app.middleware
    def tag_request(body: dict[str, Any], next: Callable[[], BoltResponse]) -> BoltResponse | None:
        # Set before Bolt hands the request to its executor, so acks and lazy work inherit it.
        set_request_id(new_request_id(body))
        return next()

    app.use(IgnoringSelfEventsButDeletions())

    @app.middleware
    def answer_each_event_once(body: dict[str, Any], next: Callable[[], BoltResponse]) -> BoltResponse | None:
        # Slack retries (X-Slack-Retry-Num) carry the same event_id: the first delivery answers.
        event_id = body.get("event_id") if body.get("type") == "event_callback" else None
        if isinstance(event_id, str) and not bot.seen.first(event_id):
            return BoltResponse(status=200, body="")
        return next()

    @app.middleware
    def buttons_only_on_our_messages(
        body: dict[str, Any], context: BoltContext, next: Callable[[], BoltResponse]
    ) -> BoltResponse | None:
        # Buttons act on the thread of the message they sit on: a payload that names someone
        # else's message would let a press post into (or mute from) a thread raydiag never wrote.
        if body.get("type") == "block_actions" and not pressed_on_our_message(body, context):
            channel, _ = thread_of(body)
            user = str((body.get("user") or {}).get("id") or "")
            LOG.warning("refused a button press on a message raydiag did not post (user %s)", user)
            if channel and user:
                with contextlib.suppress(SlackApiError):
                    client.chat_postEphemeral(
                        channel=channel, user=user, text=say("slack.refused_message", bot.lang(channel, user))
                    )
            return BoltResponse(status=200, body="")
        return next()
