"""``raydiag serve``: the service, wired: the bot in Socket Mode (SLACK_APP_TOKEN set) or over HTTP
(``--http``), its state store, scheduled posts, quiz, leader election and HTTP server.

This is the composition root, above every trigger: the Slack transport, schedules and the quiz
do not import each other, they are put together here. Configuration comes from the environment
and the YAML file named by RAYDIAG_CONFIG; a missing token or a bad file stops start-up with one
clear line, before anything connects to Slack.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from slack_sdk import WebClient

from bot.collect.live import api_client
from bot.config import Config, ConfigError, load_config
from bot.leadership import Leadership, LeaseSettings
from bot.observe.logs import configure_logging
from bot.observe.metrics import Metrics
from bot.schedule.jobs import HealthScheduler
from bot.schedule.service import start_health_posts
from bot.slack.app import Bot, build_app
from bot.slack.capacity_command import register_capacity
from bot.slack.probe_actions import PROBE_HANDLERS
from bot.slack.quiz_actions import install_quiz_actions, register_quiz
from bot.slack.schedule_commands import register_schedules
from bot.slack.server import SlackHTTPServer
from bot.store import Store, StoreError, open_store

LOG = logging.getLogger(__name__)
SERVICE_ACCOUNT_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")


class StartupError(Exception):
    """The bot cannot start; the message says what to set."""


@dataclass(frozen=True)
class Environment:
    bot_token: str
    signing_secret: str
    app_token: str | None
    config_path: Path | None
    api_url: str | None

    @classmethod
    def read(cls, env: Mapping[str, str], http: bool) -> Environment:
        bot_token = env.get("SLACK_BOT_TOKEN", "")
        secret = env.get("SLACK_SIGNING_SECRET", "")
        app_token = env.get("SLACK_APP_TOKEN") or None
        if not bot_token:
            raise StartupError("SLACK_BOT_TOKEN is not set (the bot token, xoxb-...)")
        if (http or not app_token) and not secret:
            raise StartupError("SLACK_SIGNING_SECRET is not set (needed to verify requests in HTTP mode)")
        if not http and not app_token:
            raise StartupError(
                "set SLACK_APP_TOKEN (xapp-...) for Socket Mode, or run `raydiag serve --http`"
            )
        config = env.get("RAYDIAG_CONFIG")
        return cls(
            bot_token, secret, app_token, Path(config) if config else None, env.get("RAYDIAG_SLACK_API_URL")
        )


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
        probe_handlers=PROBE_HANDLERS,
    )
    install_quiz_actions(app, bot)
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
    server = SlackHTTPServer(app, host, port, metrics=bot.metrics.exposition)
    if http:
        LOG.info("raydiag listening on %s/slack/events", server.url)
        server.serve_forever()
    else:
        from slack_bolt.adapter.socket_mode import SocketModeHandler  # noqa: PLC0415 - lazy: Socket Mode only

        server.start_background()
        LOG.info("raydiag in Socket Mode; health and metrics on %s", server.url)
        assert environment.app_token is not None
        SocketModeHandler(app, environment.app_token).start()  # type: ignore[no-untyped-call]
