"""``raydiag serve``: the service, wired: the bot in Socket Mode (SLACK_APP_TOKEN set) or over HTTP
(``--http``), its state store, scheduled posts, quiz, leader election and HTTP server.

This is the composition root, above every trigger: the Slack transport, schedules and the quiz
do not import each other, they are put together here. Configuration comes from the environment
and the YAML file named by RAYDIAG_CONFIG. A missing token or one of the wrong kind (``xoxb-`` for
the bot, ``xapp-`` for Socket Mode), an unreadable ``*_FILE`` or a bad config file stops start-up
with one clear line before anything connects to Slack; then ``auth.test`` checks the bot token.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from slack_bolt import App
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.collect.live import api_client
from bot.config import Config, ConfigError, load_config
from bot.leadership import Leadership, LeaseSettings
from bot.observe.logs import configure_logging
from bot.observe.metrics import Metrics
from bot.schedule.jobs import HealthScheduler
from bot.schedule.service import start_health_posts
from bot.slack import probe_actions, quiz_actions, verdict_actions
from bot.slack.alerts import webhook_receiver
from bot.slack.app import CORE, build_app, slack_api_url
from bot.slack.bot import Bot
from bot.slack.capacity_command import register_capacity
from bot.slack.quiz_actions import register_quiz
from bot.slack.schedule_commands import register_schedules
from bot.slack.server import SlackHTTPServer
from bot.store import Store, StoreError, open_store

LOG = logging.getLogger(__name__)
SERVICE_ACCOUNT_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")


class StartupError(Exception):
    """The bot cannot start; the message says what to set."""


# The variables that hold secrets. Each may instead name a file holding it (``<NAME>_FILE``, as a
# mounted Secret or a Vault agent provides); after start-up reads them they leave the environment.
SECRET_VARIABLES = (
    "SLACK_BOT_TOKEN",
    "SLACK_APP_TOKEN",
    "SLACK_SIGNING_SECRET",
    "RAYDIAG_ALERTMANAGER_TOKEN",
)
MIN_WEBHOOK_TOKEN = 16
# What a token's prefix says it is, to name a token put in the wrong variable.
TOKEN_KINDS = (
    ("xoxb-", "a bot token (xoxb-...)"),
    ("xapp-", "an app-level token (xapp-...)"),
    ("xoxp-", "a user token (xoxp-...)"),
    ("xoxe.", "a rotating token (xoxe.xox...), which raydiag does not refresh"),
    ("xoxe-", "a refresh token (xoxe-...)"),
)
# auth.test answers that mean the token itself is no good (wrong, revoked, app uninstalled).
BAD_TOKEN_ERRORS = frozenset(
    {
        "invalid_auth",
        "not_authed",
        "token_revoked",
        "token_expired",
        "account_inactive",
        "not_allowed_token_type",
    }
)


def _secret(env: Mapping[str, str], name: str) -> str | None:
    """``name`` from the environment, or from the file ``<name>_FILE`` names; setting both is an error
    (as in the Docker images that read ``_FILE`` variables), so which one counts is never a guess."""
    value = env.get(name, "").strip()
    path = env.get(f"{name}_FILE", "").strip()
    if value and path:
        raise StartupError(f"both {name} and {name}_FILE are set: set only one of them")
    if not path:
        return value or None
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise StartupError(f"{name}_FILE: {path} is not UTF-8 text") from None
    except OSError as error:
        raise StartupError(f"{name}_FILE: cannot read {path} ({error.strerror or error})") from None
    value = text.strip()
    if not value:
        raise StartupError(f"{name}_FILE: {path} is empty")
    if len(value.splitlines()) > 1:
        raise StartupError(f"{name}_FILE: {path} holds more than one line; it should hold only the secret")
    return value


def _kind(token: str) -> str | None:
    return next((kind for prefix, kind in TOKEN_KINDS if token.startswith(prefix)), None)


def _check_bot_token(token: str) -> None:
    if token.startswith("xoxb-"):
        return
    kind = _kind(token)
    if kind is not None:
        raise StartupError(f"SLACK_BOT_TOKEN holds {kind}; it needs the app's bot token (xoxb-...)")
    raise StartupError("SLACK_BOT_TOKEN is not a Slack bot token (a bot token starts with xoxb-)")


def _check_app_token(token: str) -> None:
    if token.startswith("xapp-"):
        return
    kind = _kind(token)
    if kind is not None:
        raise StartupError(f"SLACK_APP_TOKEN holds {kind}; Socket Mode needs an app-level token (xapp-...)")
    raise StartupError(
        "SLACK_APP_TOKEN is not a Slack app-level token (an app-level token starts with xapp-)"
    )


def _api_url(env: Mapping[str, str]) -> str | None:
    url = env.get("RAYDIAG_SLACK_API_URL", "").strip()
    if not url:
        return None
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise StartupError(f"RAYDIAG_SLACK_API_URL is not an http(s) URL: {url[:200]}")
    return slack_api_url(url)


@dataclass(frozen=True)
class Environment:
    bot_token: str
    signing_secret: str
    app_token: str | None
    config_path: Path | None
    api_url: str | None
    # The bearer token of POST /alertmanager; None: the endpoint is not served.
    alertmanager_token: str | None = None

    @classmethod
    def read(cls, env: Mapping[str, str], http: bool) -> Environment:
        """What start-up needs, checked before anything connects: each problem is one line."""
        bot_token = _secret(env, "SLACK_BOT_TOKEN")
        if bot_token is None:
            raise StartupError(
                "SLACK_BOT_TOKEN is not set (the bot token, xoxb-...; or SLACK_BOT_TOKEN_FILE)"
            )
        _check_bot_token(bot_token)
        # Each mode reads only what it uses: HTTP mode the signing secret, Socket Mode the app token.
        secret = _secret(env, "SLACK_SIGNING_SECRET") if http else None
        app_token = None if http else _secret(env, "SLACK_APP_TOKEN")
        if http and secret is None:
            raise StartupError(
                "SLACK_SIGNING_SECRET is not set (HTTP mode needs it to verify Slack's requests; "
                "or SLACK_SIGNING_SECRET_FILE)"
            )
        if not http and app_token is None:
            raise StartupError(
                "SLACK_APP_TOKEN is not set: Socket Mode needs an app-level token (xapp-..., scope "
                "connections:write; or SLACK_APP_TOKEN_FILE), or run `raydiag serve --http`"
            )
        if app_token is not None:
            _check_app_token(app_token)
        config = env.get("RAYDIAG_CONFIG")
        webhook = _secret(env, "RAYDIAG_ALERTMANAGER_TOKEN")
        if webhook is not None and len(webhook) < MIN_WEBHOOK_TOKEN:
            raise StartupError(
                f"RAYDIAG_ALERTMANAGER_TOKEN is too short to guard a webhook: use {MIN_WEBHOOK_TOKEN} "
                "characters or more (e.g. `openssl rand -hex 32`)"
            )
        return cls(
            bot_token, secret or "", app_token, Path(config) if config else None, _api_url(env), webhook
        )


def forget_secrets(environ: MutableMapping[str, str]) -> None:
    """Take the secrets out of the process environment once they are read: no child process inherits
    them, and no library falls back to them (Bolt reads SLACK_BOT_TOKEN when given a client, and warns
    that the token is unused)."""
    for name in SECRET_VARIABLES:
        environ.pop(name, None)


def _slack_error(error: SlackApiError) -> str:
    """Slack's error code (``invalid_auth``), or the HTTP status when the answer was not Slack's JSON."""
    data = error.response.data
    code = data.get("error") if isinstance(data, dict) else None
    return str(code) if code else f"HTTP {error.response.status_code}"


def check_slack(client: WebClient) -> None:
    """``auth.test`` through the client the app uses: a wrong or revoked token, or a Web API that cannot
    be reached, stops start-up now with one line, rather than failing the first command."""
    try:
        answer = client.auth_test()
    except SlackApiError as error:
        code = _slack_error(error)
        hint = (
            " (the token is wrong or revoked, or the app was uninstalled: reinstall the app and use its "
            "Bot User OAuth Token)"
            if code in BAD_TOKEN_ERRORS
            else ""
        )
        raise StartupError(f"Slack refused SLACK_BOT_TOKEN: auth.test answered {code}{hint}") from None
    except OSError as error:
        reason = getattr(error, "reason", None) or error
        raise StartupError(f"cannot reach the Slack Web API at {client.base_url} ({reason})") from None
    LOG.info(
        "Slack: workspace %s (%s), bot user %s (%s)",
        answer.get("team"),
        answer.get("team_id"),
        answer.get("user"),
        answer.get("user_id"),
    )


class SocketReadiness:
    """Whether the Socket Mode connection is open, for ``/readyz``: a replica whose socket is not
    connected (not yet, or dropped and reconnecting) hears nothing from Slack and is not Ready.

    Connected means: the client's current session has opened (on_open) and not closed since, and its
    socket is still there. During a refresh the new session is not yet open for up to half a second
    (slack_sdk starts it on its next half-second tick), which one readiness probe may see."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self._open: object | None = None
        self._lock = threading.Lock()
        client.on_open_listeners.append(self._opened)
        client.on_close_listeners.append(self._closed)

    def _opened(self, session: object) -> None:
        with self._lock:
            self._open = session
        LOG.info("Socket Mode: connected")

    def _closed(self, session: object) -> None:
        with self._lock:
            if self._open is not session:
                return
            self._open = None
        if not self._client.closed:
            LOG.info("Socket Mode: disconnected; not ready until it reconnects")

    def __call__(self) -> bool:
        with self._lock:
            session = self._open
        return (
            session is not None
            and session is self._client.current_session
            and bool(self._client.is_connected())
        )


def _socket_mode_handler(app: App, app_token: str) -> Any:
    """Bolt's websocket-client adapter. The built-in one, after Slack's ``disconnect``
    (``refresh_requested``), keeps reading the old socket until its 3 s receive timeout, so the first
    envelopes on the new connection wait about 3 s for their ack (BENCHMARKS.md, "Socket Mode")."""
    from slack_bolt.adapter.socket_mode.websocket_client import (  # noqa: PLC0415 - lazy: Socket Mode only
        SocketModeHandler,
    )

    return SocketModeHandler(app, app_token)


def _socket_mode(handler: Any) -> None:
    try:
        handler.start()
    except SlackApiError as error:  # apps.connections.open refused the app-level token
        code = _slack_error(error)
        raise StartupError(f"Slack refused SLACK_APP_TOKEN: apps.connections.open answered {code}") from None
    finally:
        # Say goodbye to Slack (a close frame) without joining slack_sdk's threads: its session thread
        # notices only at its next 10 s poll, and the process is exiting anyway.
        client = handler.client
        client.closed = True
        client.auto_reconnect_enabled = False
        client.disconnect()


def load(environment: Environment) -> Config:
    if environment.config_path is None:
        return Config()
    try:
        return load_config(environment.config_path)
    except ConfigError as error:
        raise StartupError(str(error)) from error


def open_state(config: Config, env: Mapping[str, str] | None = None) -> Store | None:
    """The state store, or None after one log line: the bot then answers diagnoses without schedules."""
    try:
        return open_store(config.state.database_url(env))
    except StoreError as error:
        LOG.error("%s; running without schedules, mutes and answered events kept in this process only", error)
        return None


def start_schedules(bot: Bot, client: WebClient, *, leading: bool = True) -> HealthScheduler | None:
    """Scheduled health posts when the bot has a store, with ``/raydiag schedule`` wired to them;
    None (schedules "not available") otherwise."""
    if bot.store is None:
        return None
    try:
        scheduler = start_health_posts(bot, client, leading=leading)
    except StoreError as error:
        LOG.error("%s; running without schedules", error)
        return None
    register_schedules(bot, scheduler)
    return scheduler


def start_leadership(
    config: Config, schedules: HealthScheduler, metrics: Metrics, env: Mapping[str, str]
) -> Leadership:
    """Compete for the Lease; the scheduler runs jobs only while this replica holds it."""
    election = config.leader_election
    namespace = election.namespace or env.get("POD_NAMESPACE") or _service_account_namespace() or "raydiag"
    try:
        client = api_client(election.kubeconfig, election.context)
    except Exception as error:  # no credentials: say so once and stop, rather than post from every replica
        raise StartupError(f"leader election: cannot reach the Kubernetes API ({error})") from error
    settings = LeaseSettings(
        namespace=namespace,
        name=election.lease_name,
        lease_duration_s=election.lease_duration_s,
        renew_deadline_s=election.renew_deadline_s,
        retry_period_s=election.retry_period_s,
    )

    def lead() -> None:
        schedules.lead()
        metrics.set_leading(True)

    def follow() -> None:
        schedules.follow()
        metrics.set_leading(False)

    leadership = Leadership(settings, client, on_lead=lead, on_lose=follow)
    leadership.start()
    return leadership


def _stop_on_sigterm() -> None:
    """The kubelet stops a Pod with SIGTERM; as PID 1, Python would ignore it until SIGKILL."""

    def stop(signum: int, frame: object) -> None:
        LOG.info("SIGTERM: stopping")
        raise SystemExit(0)

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, stop)


def _service_account_namespace() -> str | None:
    try:
        return SERVICE_ACCOUNT_NAMESPACE.read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def serve(http: bool, host: str, port: int, env: Mapping[str, str] | None = None) -> None:
    variables = os.environ if env is None else env
    environment = Environment.read(variables, http)
    if env is None:
        forget_secrets(os.environ)
    config = load(environment)
    log_format = variables.get("RAYDIAG_LOG_FORMAT") or config.log_format
    configure_logging("json" if log_format == "json" else "text")
    # No `diagnose`: the Diagnoser reads the configured clusters live and classifies them.
    bot = Bot(config=config, store=open_state(config, env))
    register_capacity(bot)
    register_quiz(bot)
    app = build_app(
        bot,
        token=environment.bot_token,
        signing_secret=environment.signing_secret,
        api_url=environment.api_url,
        surfaces=(*CORE, probe_actions.register, quiz_actions.register, verdict_actions.register),
    )
    check_slack(app.client)
    elect = config.leader_election.enabled
    if elect and config.state.database_url(env).startswith("sqlite"):
        LOG.warning(
            "leader election is on but state is a SQLite file: replicas cannot share it (mutes, "
            "answered events, posted runs); run one replica, or use PostgreSQL (state.url)"
        )
    schedules = start_schedules(bot, app.client, leading=not elect)
    if elect and schedules is not None:
        start_leadership(config, schedules, bot.metrics, variables)
    else:
        bot.metrics.set_leading(schedules is not None)
    _stop_on_sigterm()
    # HTTP mode: Slack's endpoint. Socket Mode: the same server answers probes and Prometheus.
    # In Socket Mode events come over the socket: /slack/events answers 404 there.
    receiver = (
        webhook_receiver(bot, app.client, environment.alertmanager_token)
        if environment.alertmanager_token
        else None
    )
    server = SlackHTTPServer(
        app, host, port, metrics=bot.metrics.exposition, events=http, alertmanager=receiver
    )
    if receiver is not None:
        where = config.alertmanager.channel or "nowhere: set alertmanager.channel (it answers 503 until then)"
        LOG.info("Alertmanager webhook on %s/alertmanager, posting to %s", server.url, where)
    if http:
        LOG.info("raydiag listening on %s/slack/events", server.url)
        server.serve_forever()
    else:
        assert environment.app_token is not None
        handler = _socket_mode_handler(app, environment.app_token)
        # Ready only while the socket is connected: set before the first probe can be answered.
        server.ready = SocketReadiness(handler.client)
        server.start_background()
        LOG.info("raydiag in Socket Mode; health and metrics on %s", server.url)
        _socket_mode(handler)
