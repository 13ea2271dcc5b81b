"""The Bolt app: built here, its listeners registered by the surface modules.

Each surface module registers its own listeners with ``register(app, bot)``: the slash command
(``slash_command``), the buttons under a diagnosis (``diagnosis_buttons``), messages, mentions and
the shortcut (``mentions``), and, as ``raydiag serve`` wires them, the probe buttons
(``probe_actions``), the quiz (``quiz_actions``) and the "Right cause?" buttons
(``verdict_actions``). Every listener is thin: it validates what Slack sent against the
configuration, acks within Slack's 3 seconds, and delegates the work to a lazy function; what every
request goes through first is ``middleware``. A failure in one diagnosis is reported in its thread
and never reaches the listener.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from slack_bolt import App

from bot.deliver.slack_poster import web_client
from bot.observe.logs import ContextExecutor
from bot.slack import diagnosis_buttons, mentions, middleware, slash_command
from bot.slack.bot import Bot

# A surface module's ``register``: puts its listeners on the app; they reach the rest through ``Bot``.
Register = Callable[[App, Bot], None]

# What every app answers; ``raydiag serve`` adds the probe, quiz and verdict buttons (``bot.serve``).
CORE: tuple[Register, ...] = (slash_command.register, diagnosis_buttons.register, mentions.register)


def slack_api_url(url: str | None) -> str | None:
    """The Web API base URL ending in "/". A method's URL is the base joined with its name, and
    without the "/" the last segment would be replaced (``http://proxy/api`` + ``auth.test`` →
    ``http://proxy/auth.test``). slack_sdk 3.48's WebClient adds the "/" itself; this does not
    leave it to the installed version."""
    if not url:
        return None
    return url if url.endswith("/") else url + "/"


def build_app(
    bot: Bot,
    *,
    token: str,
    signing_secret: str,
    api_url: str | None = None,
    surfaces: Sequence[Register] = CORE,
) -> App:
    """The app, with the middleware and the listeners of each of ``surfaces``."""
    client = web_client(token, slack_api_url(api_url), metrics=bot.metrics)
    # Bolt is given the client, never the token (it would warn that the token is unused). It still
    # reads SLACK_BOT_TOKEN from the environment when that is set: `raydiag serve` removes it first.
    app = App(
        signing_secret=signing_secret,
        # Acks and lazy listeners run here; lazy listeners only hand work to the diagnosis pool.
        # Each task runs in the submitter's context, so it logs with the request's id.
        listener_executor=ContextExecutor(max_workers=32, thread_name_prefix="raydiag-listener"),
        client=client,
        process_before_response=False,
        token_verification_enabled=False,
        # Replaced by middleware's IgnoringSelfEventsButDeletions, which lets deletions of its messages in.
        ignoring_self_events_enabled=False,
    )
    middleware.register(app, bot)
    for register in surfaces:
        register(app, bot)
    return app
