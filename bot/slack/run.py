"""``raydiag serve``: the bot in Socket Mode (SLACK_APP_TOKEN set) or over HTTP (``--http``).

Configuration comes from the environment and the YAML file named by RAYDIAG_CONFIG; a missing
token or a bad file stops start-up with one clear line, before anything connects to Slack.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from bot.config import Config, ConfigError, load_config


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


def serve(http: bool, host: str, port: int, env: Mapping[str, str] | None = None) -> None:
    from bot.slack.app import Bot, build_app, live_diagnosis
    from bot.slack.probe_actions import PROBE_HANDLERS

    environment = Environment.read(os.environ if env is None else env, http)
    config = load(environment)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    bot = Bot(config=config, diagnose=live_diagnosis(config))
    app = build_app(
        bot,
        token=environment.bot_token,
        signing_secret=environment.signing_secret,
        api_url=environment.api_url,
        probe_handlers=PROBE_HANDLERS,
    )
    if http:
        from bot.slack.server import SlackHTTPServer

        server = SlackHTTPServer(app, host, port)
        logging.getLogger(__name__).info("raydiag listening on %s/slack/events", server.url)
        server.serve_forever()
    else:
        from slack_bolt.adapter.socket_mode import SocketModeHandler

        assert environment.app_token is not None
        SocketModeHandler(app, environment.app_token).start()  # type: ignore[no-untyped-call]
