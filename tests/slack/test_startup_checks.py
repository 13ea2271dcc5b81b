"""What `raydiag serve` checks before it serves: token kinds and each mode's needs, secrets from files,
the Web API base URL, ``auth.test`` at start, no Bolt warning, no ``/slack/events`` in Socket Mode, and a
manifest that asks for exactly the scopes the code uses.

Process tests run ``python -m bot serve`` against the loopback Slack Web API stand-in; a failed start
must be one line on stderr (exit code 2), never a traceback.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
import yaml
from slack_sdk import WebClient

from bot.config import Config
from bot.serve import SECRET_VARIABLES, Environment, StartupError, check_slack, forget_secrets
from bot.slack.app import build_app
from bot.slack.bot import Bot
from bot.slack.server import SlackHTTPServer
from tests.support.bot_process import REPO, free_port
from tests.support.slack_api import SlackWebAPI, post_signed, serve_slack, slash_command_body

BOT_TOKEN = "xoxb-1234-5678-startupchecks"
APP_TOKEN = "xapp-1-A123-9876-startupchecks"
SECRET = "5f1d0c8e3b2a4f6e8d7c9b0a1e2f3d4c"
UNUSED_TOKEN_WARNING = "will be unused"


def read(env: Mapping[str, str], *, http: bool) -> Environment:
    return Environment.read(env, http)


def refused(env: Mapping[str, str], *, http: bool) -> str:
    with pytest.raises(StartupError) as raised:
        Environment.read(env, http)
    message = str(raised.value)
    assert "\n" not in message
    return message


# -- token kinds and what each mode needs -----------------------------------------------------------


@pytest.mark.parametrize(
    ("token", "problem"),
    [
        (
            APP_TOKEN,
            "SLACK_BOT_TOKEN holds an app-level token (xapp-...); it needs the app's bot token (xoxb-...)",
        ),
        ("xoxp-1-2-3-usertoken", "SLACK_BOT_TOKEN holds a user token (xoxp-...)"),
        (
            "xoxe.xoxb-1-rotating",
            "SLACK_BOT_TOKEN holds a rotating token (xoxe.xox...), which raydiag does not",
        ),
        ("hunter2-not-a-token", "SLACK_BOT_TOKEN is not a Slack bot token (a bot token starts with xoxb-)"),
    ],
)
def test_a_bot_token_of_another_kind_is_named(token: str, problem: str) -> None:
    message = refused({"SLACK_BOT_TOKEN": token, "SLACK_APP_TOKEN": APP_TOKEN}, http=False)
    assert message.startswith(problem)
    # The message names the kind, never the secret itself.
    assert token not in message


def test_a_bot_token_in_the_app_token_variable_is_named_as_such() -> None:
    env = {"SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_APP_TOKEN": BOT_TOKEN}
    assert refused(env, http=False) == (
        "SLACK_APP_TOKEN holds a bot token (xoxb-...); Socket Mode needs an app-level token (xapp-...)"
    )
    assert refused({"SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_APP_TOKEN": "garbage"}, http=False) == (
        "SLACK_APP_TOKEN is not a Slack app-level token (an app-level token starts with xapp-)"
    )


def test_socket_mode_without_an_app_token_says_so_not_the_signing_secret() -> None:
    message = refused({"SLACK_BOT_TOKEN": BOT_TOKEN}, http=False)
    assert message.startswith("SLACK_APP_TOKEN is not set: Socket Mode needs an app-level token (xapp-...")
    assert "raydiag serve --http" in message
    assert "SIGNING_SECRET" not in message


def test_each_mode_needs_only_its_own_secret() -> None:
    socket_mode = read({"SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_APP_TOKEN": APP_TOKEN}, http=False)
    assert (socket_mode.bot_token, socket_mode.app_token, socket_mode.signing_secret) == (
        BOT_TOKEN,
        APP_TOKEN,
        "",
    )
    message = refused({"SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_APP_TOKEN": APP_TOKEN}, http=True)
    assert message.startswith(
        "SLACK_SIGNING_SECRET is not set (HTTP mode needs it to verify Slack's requests"
    )
    # HTTP mode opens no socket: an app token there is neither needed nor read.
    http = read(
        {"SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_SIGNING_SECRET": SECRET, "SLACK_APP_TOKEN": "x"}, http=True
    )
    assert (http.signing_secret, http.app_token) == (SECRET, None)
    assert refused({"SLACK_SIGNING_SECRET": SECRET}, http=True).startswith("SLACK_BOT_TOKEN is not set")


# -- secrets from files -----------------------------------------------------------------------------


def test_secrets_are_read_from_files_without_their_trailing_newline(tmp_path: Path) -> None:
    files = {}
    for name, value in {
        "SLACK_BOT_TOKEN": BOT_TOKEN,
        "SLACK_APP_TOKEN": APP_TOKEN,
        "SLACK_SIGNING_SECRET": SECRET,
    }.items():
        path = tmp_path / name.lower()
        path.write_text(value + "\n", encoding="utf-8")
        files[f"{name}_FILE"] = str(path)
    socket_mode = read(files, http=False)
    assert (socket_mode.bot_token, socket_mode.app_token) == (BOT_TOKEN, APP_TOKEN)
    assert read(files, http=True).signing_secret == SECRET


def test_a_secret_set_both_ways_or_an_unusable_file_is_one_line(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(BOT_TOKEN + "\n", encoding="utf-8")
    both = {
        "SLACK_BOT_TOKEN": BOT_TOKEN,
        "SLACK_BOT_TOKEN_FILE": str(token_file),
        "SLACK_APP_TOKEN": APP_TOKEN,
    }
    assert (
        refused(both, http=False)
        == "both SLACK_BOT_TOKEN and SLACK_BOT_TOKEN_FILE are set: set only one of them"
    )

    missing = tmp_path / "not-mounted"
    env = {"SLACK_BOT_TOKEN_FILE": str(missing), "SLACK_APP_TOKEN": APP_TOKEN}
    assert (
        refused(env, http=False) == f"SLACK_BOT_TOKEN_FILE: cannot read {missing} (No such file or directory)"
    )
    env = {"SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_APP_TOKEN_FILE": str(tmp_path)}
    assert refused(env, http=False) == f"SLACK_APP_TOKEN_FILE: cannot read {tmp_path} (Is a directory)"

    empty = tmp_path / "empty"
    empty.write_text("\n", encoding="utf-8")
    env = {"SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_SIGNING_SECRET_FILE": str(empty)}
    assert refused(env, http=True) == f"SLACK_SIGNING_SECRET_FILE: {empty} is empty"
    two_lines = tmp_path / "two-lines"
    two_lines.write_text(f"{SECRET}\n{SECRET}\n", encoding="utf-8")
    env = {"SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_SIGNING_SECRET_FILE": str(two_lines)}
    assert refused(env, http=True).startswith(
        f"SLACK_SIGNING_SECRET_FILE: {two_lines} holds more than one line"
    )
    binary = tmp_path / "binary"
    binary.write_bytes(b"\xff\xfe\x00token")
    env = {"SLACK_BOT_TOKEN_FILE": str(binary), "SLACK_APP_TOKEN": APP_TOKEN}
    assert refused(env, http=False) == f"SLACK_BOT_TOKEN_FILE: {binary} is not UTF-8 text"


# -- the Web API base URL and auth.test -------------------------------------------------------------


def test_the_api_url_gets_its_trailing_slash_and_must_be_http() -> None:
    base = {"SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_APP_TOKEN": APP_TOKEN}
    assert read({**base, "RAYDIAG_SLACK_API_URL": "http://proxy:8080/api"}, http=False).api_url == (
        "http://proxy:8080/api/"
    )
    assert read({**base, "RAYDIAG_SLACK_API_URL": "https://slack.com/api/"}, http=False).api_url == (
        "https://slack.com/api/"
    )
    assert read(base, http=False).api_url is None
    assert refused({**base, "RAYDIAG_SLACK_API_URL": "slack.com/api"}, http=False) == (
        "RAYDIAG_SLACK_API_URL is not an http(s) URL: slack.com/api"
    )


def new_bot() -> Bot:
    return Bot(config=Config(), store=None)


def test_the_app_calls_slack_where_the_url_says_even_without_its_slash() -> None:
    with serve_slack() as slack:
        bot = new_bot()
        try:
            app = build_app(bot, token=BOT_TOKEN, signing_secret=SECRET, api_url=slack.url.rstrip("/"))
            check_slack(app.client)
            # The method is joined to the whole base path, not in place of its last segment.
            [call] = slack.calls_to("auth.test")
            assert call.path == "/api/auth.test" and call.token == BOT_TOKEN
        finally:
            bot.runs.shutdown()


@pytest.mark.parametrize(
    ("error", "problem"),
    [
        (
            "invalid_auth",
            "Slack refused SLACK_BOT_TOKEN: auth.test answered invalid_auth (the token is wrong or revoked, or "
            "the app was uninstalled: reinstall the app and use its Bot User OAuth Token)",
        ),
        ("token_revoked", "Slack refused SLACK_BOT_TOKEN: auth.test answered token_revoked (the token is"),
        (
            "team_access_not_granted",
            "Slack refused SLACK_BOT_TOKEN: auth.test answered team_access_not_granted",
        ),
    ],
)
def test_auth_test_failing_is_one_line_naming_slacks_error(error: str, problem: str) -> None:
    with serve_slack() as slack:
        slack.fail("auth.test", error, status=200, times=None)
        with pytest.raises(StartupError) as raised:
            check_slack(WebClient(token=BOT_TOKEN, base_url=slack.url))
    assert str(raised.value).startswith(problem) and "\n" not in str(raised.value)
    if error == "team_access_not_granted":
        assert str(raised.value) == problem


def test_an_unreachable_web_api_is_one_line() -> None:
    url = f"http://127.0.0.1:{free_port()}/api/"
    with pytest.raises(StartupError) as raised:
        check_slack(WebClient(token=BOT_TOKEN, base_url=url))
    assert str(raised.value).startswith(f"cannot reach the Slack Web API at {url} (")
    assert "refused" in str(raised.value).lower()


# -- Bolt's warning, and /slack/events in Socket Mode -----------------------------------------------


def bolt_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name.startswith("slack_bolt") and r.levelno >= logging.WARNING
    ]


def test_the_app_is_built_without_bolts_unused_token_warning(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    bot = new_bot()
    try:
        monkeypatch.setenv("SLACK_BOT_TOKEN", BOT_TOKEN)
        with caplog.at_level(logging.WARNING, logger="slack_bolt"):
            build_app(bot, token=BOT_TOKEN, signing_secret=SECRET, api_url="http://127.0.0.1:9/api/")
        # Why serve forgets the secrets: given a client, Bolt still reads SLACK_BOT_TOKEN and warns.
        assert any(UNUSED_TOKEN_WARNING in line for line in bolt_warnings(caplog))
        caplog.clear()

        monkeypatch.setenv("SLACK_APP_TOKEN", APP_TOKEN)
        monkeypatch.setenv("SLACK_SIGNING_SECRET", SECRET)
        monkeypatch.setenv("SLACK_BOT_TOKEN_FILE", "/run/secrets/slack-bot-token")
        forget_secrets(os.environ)
        assert not set(SECRET_VARIABLES) & set(os.environ)
        assert os.environ["SLACK_BOT_TOKEN_FILE"] == "/run/secrets/slack-bot-token"  # a path, not a secret
        with caplog.at_level(logging.WARNING, logger="slack_bolt"):
            app = build_app(bot, token=BOT_TOKEN, signing_secret=SECRET, api_url="http://127.0.0.1:9/api/")
        assert bolt_warnings(caplog) == []
        assert app.client.token == BOT_TOKEN
    finally:
        bot.runs.shutdown()


@contextlib.contextmanager
def http_server(app: object, *, events: bool) -> Iterator[SlackHTTPServer]:
    server = SlackHTTPServer(app, "127.0.0.1", 0, events=events)  # type: ignore[arg-type]
    server.start_background()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def test_socket_mode_serves_no_slack_events_but_http_mode_does(caplog: pytest.LogCaptureFixture) -> None:
    with serve_slack() as slack:
        bot = new_bot()
        try:
            socket_app = build_app(bot, token=BOT_TOKEN, signing_secret="", api_url=slack.url)
            with caplog.at_level(logging.DEBUG), http_server(socket_app, events=False) as server:
                answer = post_signed(server.url + "/slack/events", slash_command_body(text="help"), "")
                with urllib.request.urlopen(server.url + "/healthz", timeout=5) as health:
                    assert health.status == 200
            assert (answer.status, answer.body) == (404, "not found")
            # Bolt never saw the request (it would have logged that the signing secret is empty).
            assert not [r for r in caplog.records if r.name.startswith("slack_bolt")]

            http_app = build_app(bot, token=BOT_TOKEN, signing_secret=SECRET, api_url=slack.url)
            with http_server(http_app, events=True) as server:
                answer = post_signed(server.url + "/slack/events", slash_command_body(text="help"), SECRET)
            assert answer.status == 200 and "blocks" in answer.json()
        finally:
            bot.runs.shutdown()


# -- the real process ---------------------------------------------------------------------------------


def serve_env(tmp_path: Path, slack: SlackWebAPI, **variables: str) -> dict[str, str]:
    config = tmp_path / "raydiag.yaml"
    config.write_text(yaml.safe_dump({"clusters": [{"name": "gpu-prod", "namespace": "ml"}]}))
    inherited = {k: v for k, v in os.environ.items() if not k.startswith("SLACK_")}
    return {
        **inherited,
        "RAYDIAG_CONFIG": str(config),
        "RAYDIAG_DATA_DIR": str(tmp_path / "data"),
        # No trailing "/": the process must still reach the stand-in's methods.
        "RAYDIAG_SLACK_API_URL": slack.url.rstrip("/"),
        **variables,
    }


@contextlib.contextmanager
def serve_process(
    tmp_path: Path, env: Mapping[str, str], *args: str
) -> Iterator[tuple[subprocess.Popen[bytes], str, Path]]:
    """``python -m bot serve`` on a free port, its output in a log; terminated (SIGTERM) at the end,
    so ``process.returncode`` says how it stopped."""
    port = free_port()
    log = tmp_path / "serve.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "bot", "serve", *args, "--host", "127.0.0.1", "--port", str(port)],
            cwd=REPO,
            env=dict(env),
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    try:
        yield process, f"http://127.0.0.1:{port}", log
    finally:
        if process.poll() is None:
            process.terminate()
        process.wait(timeout=20)


def serve_fails(env: Mapping[str, str], *args: str, alone: bool = True) -> str:
    """The error line of a ``raydiag serve`` that exits 2; ``alone``: nothing else was written."""
    done = subprocess.run(
        [sys.executable, "-m", "bot", "serve", "--host", "127.0.0.1", "--port", str(free_port()), *args],
        cwd=REPO,
        env=dict(env),
        capture_output=True,
        timeout=90,
        check=False,
    )
    stderr = done.stderr.decode()
    assert done.returncode == 2, stderr
    assert "Traceback" not in stderr, stderr
    lines = [line for line in stderr.splitlines() if line.strip()]
    if alone:
        assert len(lines) == 1, stderr
    assert lines[-1].startswith("raydiag: error: ")
    return lines[-1].removeprefix("raydiag: error: ")


def test_a_revoked_bot_token_stops_the_process_at_start(tmp_path: Path) -> None:
    with serve_slack() as slack:
        slack.fail("auth.test", "token_revoked", status=200, times=None)
        env = serve_env(tmp_path, slack, SLACK_BOT_TOKEN=BOT_TOKEN, SLACK_SIGNING_SECRET=SECRET)
        line = serve_fails(env, "--http")
        [call] = slack.calls_to("auth.test")
    assert line.startswith("Slack refused SLACK_BOT_TOKEN: auth.test answered token_revoked")
    assert call.token == BOT_TOKEN


def test_a_wrong_token_kind_or_a_refused_app_token_stops_the_process(tmp_path: Path) -> None:
    with serve_slack() as slack:
        env = serve_env(tmp_path, slack, SLACK_BOT_TOKEN=BOT_TOKEN, SLACK_APP_TOKEN=BOT_TOKEN)
        assert serve_fails(env) == (
            "SLACK_APP_TOKEN holds a bot token (xoxb-...); Socket Mode needs an app-level token (xapp-...)"
        )
        # Nothing reached Slack before the kinds were checked.
        assert slack.calls == []

        slack.fail("apps.connections.open", "invalid_auth", status=200, times=None)
        env = serve_env(tmp_path, slack, SLACK_BOT_TOKEN=BOT_TOKEN, SLACK_APP_TOKEN=APP_TOKEN)
        # Found when the socket opens, after start-up logged its progress (and slack_sdk its error).
        line = serve_fails(env, alone=False)
        assert line == "Slack refused SLACK_APP_TOKEN: apps.connections.open answered invalid_auth"
        [opened] = slack.calls_to("apps.connections.open")
    assert opened.token == APP_TOKEN


def test_socket_mode_process_from_env_starts_quietly_and_serves_no_events(tmp_path: Path) -> None:
    with serve_slack() as slack:
        # The socket never opens here: the process waits for apps.connections.open while its HTTP
        # server answers probes.
        slack.slow("apps.connections.open", 25, times=None)
        env = serve_env(tmp_path, slack, SLACK_BOT_TOKEN=BOT_TOKEN, SLACK_APP_TOKEN=APP_TOKEN)
        with serve_process(tmp_path, env) as (process, base, log):
            slack.wait_for("auth.test", timeout=60)
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and process.poll() is None:
                with (
                    contextlib.suppress(OSError),
                    urllib.request.urlopen(base + "/healthz", timeout=2) as health,
                ):
                    if health.status == 200:
                        break
                time.sleep(0.2)
            assert process.poll() is None, log.read_text()
            answer = post_signed(base + "/slack/events", slash_command_body(text="help"), SECRET)
            assert answer.status == 404
        output_text = log.read_text()
        assert process.returncode == 0, output_text
        [checked] = slack.calls_to("auth.test")
    assert checked.token == BOT_TOKEN and checked.path == "/api/auth.test"
    assert UNUSED_TOKEN_WARNING not in output_text
    assert "signing_secret" not in output_text and "Traceback" not in output_text
    assert "raydiag in Socket Mode; health and metrics on" in output_text


def test_http_process_reads_its_secrets_from_files(tmp_path: Path) -> None:
    token_file = tmp_path / "bot-token"
    token_file.write_text(BOT_TOKEN + "\n", encoding="utf-8")
    secret_file = tmp_path / "signing-secret"
    secret_file.write_text(SECRET + "\n", encoding="utf-8")
    with serve_slack() as slack:
        env = serve_env(
            tmp_path, slack, SLACK_BOT_TOKEN_FILE=str(token_file), SLACK_SIGNING_SECRET_FILE=str(secret_file)
        )
        with serve_process(tmp_path, env, "--http") as (process, base, log):
            deadline = time.monotonic() + 60
            answer = None
            while time.monotonic() < deadline and process.poll() is None:
                try:
                    answered_at = time.time()
                    answer = post_signed(base + "/slack/events", slash_command_body(text="help"), SECRET)
                    break
                except (OSError, urllib.error.URLError):
                    time.sleep(0.2)
            assert answer is not None, log.read_text()
            assert answer.status == 200 and "`gpu-prod`" in str(answer.json()["blocks"])
        checks = slack.calls_to("auth.test")
    # The first auth.test is start-up's own, before the command; Bolt makes one more on its first request.
    assert checks and checks[0].time < answered_at
    assert {call.token for call in checks} == {BOT_TOKEN}


# -- least privilege: the manifest's scopes ---------------------------------------------------------

MANIFEST = REPO / "deploy" / "slack-app-manifest.yaml"
# Every Web API method bot/ calls (as the WebClient method), with the bot scope Slack documents for it
# on api.slack.com/methods/<method>; None where the method needs no scope.
WEB_API_SCOPES: dict[str, str | None] = {
    "auth_test": None,
    "chat_postMessage": "chat:write",
    "chat_postEphemeral": "chat:write",
    "chat_update": "chat:write",
    # files.getUploadURLExternal and files.completeUploadExternal
    "files_upload_v2": "files:write",
    "usergroups_users_list": "usergroups:read",
    # The "Right cause?" modal: views.open needs no scope, only the press's trigger_id.
    "views_open": None,
}
# The scope each bot event subscription needs (api.slack.com/events/<event>).
EVENT_SCOPES = {
    "app_mention": "app_mentions:read",
    "message.channels": "channels:history",
    "message.groups": "groups:history",
    "message.im": "im:history",
    "message.mpim": "mpim:history",
}
WEB_API_METHODS = frozenset(name for name in vars(WebClient) if not name.startswith("_"))


def web_api_calls() -> set[str]:
    """The WebClient methods called anywhere in bot/: ``.chat_postMessage(`` and ``api_call("x.y")``."""
    called: set[str] = set()
    for path in (REPO / "bot").rglob("*.py"):
        source = path.read_text(encoding="utf-8")
        called |= {name for name in re.findall(r"\.(\w+)\(", source) if name in WEB_API_METHODS}
        called |= {name.replace(".", "_") for name in re.findall(r"api_call\(\s*[\"']([\w.]+)[\"']", source)}
    return called


def test_the_manifest_asks_for_exactly_the_scopes_the_code_uses() -> None:
    manifest = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))
    scopes = manifest["oauth_config"]["scopes"]["bot"]
    assert len(scopes) == len(set(scopes))

    called = web_api_calls()
    assert called == set(WEB_API_SCOPES), (
        "a Web API method was added or removed in bot/: update WEB_API_SCOPES"
    )
    needed = {scope for scope in WEB_API_SCOPES.values() if scope is not None}
    events = manifest["settings"]["event_subscriptions"]["bot_events"]
    assert set(events) <= set(EVENT_SCOPES)
    needed |= {EVENT_SCOPES[event] for event in events}
    features = manifest["features"]
    if features.get("slash_commands") or features.get("shortcuts"):
        needed.add("commands")
    assert set(scopes) == needed
    assert "users:read" not in scopes
