"""The Slack Web API stand-in answers the real slack_sdk client and a real Bolt app like Slack would."""

from __future__ import annotations

import json
import struct
import threading
import time
import urllib.request
import zlib
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs

import pytest
from slack_bolt import Ack, App, Respond, Say
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler
from slack_sdk.signature import Clock, SignatureVerifier
from slack_sdk.webhook import WebhookClient

from tests.support.slack_api import (
    BOT_ID,
    BOT_USER_ID,
    TEAM_ID,
    SlackWebAPI,
    app_mention_event,
    block_actions_body,
    block_problems,
    bolt_request,
    event_callback_body,
    message_event,
    message_shortcut_body,
    post,
    post_signed,
    serve_bolt,
    serve_slack,
    signed_headers,
    slash_command_body,
    url_verification_body,
)

SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
ONCALL = "S0GPUONCALL"
SECTION = {
    "type": "section",
    "block_id": "summary",
    "text": {"type": "mrkdwn", "text": "*raydiag-gpu* is stuck"},
}
BUTTONS = {
    "type": "actions",
    "block_id": "raydiag_actions",
    "elements": [
        {
            "type": "button",
            "action_id": "rerun",
            "text": {"type": "plain_text", "text": "Re-run"},
            "value": "ml/raydiag-gpu",
        }
    ],
}


class FrozenClock(Clock):
    def __init__(self, now: float) -> None:
        self._now = now

    def now(self) -> float:
        return self._now


def tiny_png() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00")
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


@pytest.fixture
def api() -> Iterator[SlackWebAPI]:
    with serve_slack(usergroups={ONCALL: ["U111", "U222"]}) as stand_in:
        yield stand_in


@pytest.fixture
def client(api: SlackWebAPI) -> WebClient:
    return WebClient(token="xoxb-test", base_url=api.url)


# --------------------------------------------------------------------------------------------------
# The Web API through slack_sdk
# --------------------------------------------------------------------------------------------------


def test_base_url_looks_like_slacks(api: SlackWebAPI) -> None:
    assert api.url.endswith("/api/")
    assert api.url.startswith("http://127.0.0.1:")
    assert api.response_url("abc") == f"{api.root}response/abc"


def test_auth_test_identifies_the_bot(client: WebClient) -> None:
    answer = client.auth_test()
    assert answer["user_id"] == BOT_USER_ID
    assert answer["bot_id"] == BOT_ID
    assert answer["team_id"] == TEAM_ID
    assert answer["user"] == "raydiag"
    assert answer["url"].startswith("https://")


def test_post_message_records_blocks_and_issues_increasing_ts(api: SlackWebAPI, client: WebClient) -> None:
    first = client.chat_postMessage(channel="C111", text="stuck", blocks=[SECTION, BUTTONS])
    second = client.chat_postMessage(channel="C111", text="reply", thread_ts=first["ts"])

    assert first["ok"] and first["channel"] == "C111"
    assert first["message"]["blocks"] == [SECTION, BUTTONS]
    assert first["message"]["bot_id"] == BOT_ID
    assert first["ts"] == "1733000000.000100"
    assert float(second["ts"]) > float(first["ts"])
    assert second["message"]["thread_ts"] == first["ts"]

    calls = api.calls_to("chat.postMessage")
    assert [call.params["text"] for call in calls] == ["stuck", "reply"]
    assert calls[0].params["blocks"] == [SECTION, BUTTONS]
    assert calls[0].token == "xoxb-test"
    assert calls[0].headers["authorization"] == "Bearer xoxb-test"

    replies = client.conversations_replies(channel="C111", ts=first["ts"])
    assert [m["text"] for m in replies["messages"]] == ["stuck", "reply"]
    history = client.conversations_history(channel="C111")
    assert [m["text"] for m in history["messages"]] == ["reply", "stuck"]


def test_form_encoded_blocks_are_decoded(api: SlackWebAPI) -> None:
    body = f"channel=C111&text=hi&blocks={json.dumps([SECTION])}".encode()
    request = urllib.request.Request(
        api.url + "chat.postMessage",
        data=body,
        headers={"Authorization": "Bearer xoxb-test", "Content-Type": "application/x-www-form-urlencoded"},
    )
    with urllib.request.urlopen(request, timeout=5) as response:
        assert json.load(response)["ok"] is True
    assert api.calls_to("chat.postMessage")[0].params["blocks"] == [SECTION]


def test_rate_limit_is_retried_after_retry_after(api: SlackWebAPI, client: WebClient) -> None:
    api.fail("chat.postMessage", error="rate_limited", status=429, retry_after=1, times=1)
    client.retry_handlers.append(RateLimitErrorRetryHandler(max_retry_count=2))

    started = time.monotonic()
    answer = client.chat_postMessage(channel="C111", text="hi")
    elapsed = time.monotonic() - started

    assert answer["ok"]
    calls = api.calls_to("chat.postMessage")
    assert [call.status for call in calls] == [429, 200]
    assert elapsed >= 1.0


def test_rate_limit_without_retry_handler_raises(api: SlackWebAPI, client: WebClient) -> None:
    api.fail("chat.postMessage", retry_after=7)
    with pytest.raises(SlackApiError) as raised:
        client.chat_postMessage(channel="C111", text="hi")
    assert raised.value.response.status_code == 429
    assert raised.value.response["error"] == "ratelimited"
    assert raised.value.response.headers["Retry-After"] == "7"
    assert client.chat_postMessage(channel="C111", text="hi")["ok"]


@pytest.mark.parametrize("error", ["invalid_blocks", "msg_too_long"])
def test_injected_errors_raise_slack_api_error(api: SlackWebAPI, client: WebClient, error: str) -> None:
    api.fail("chat.postMessage", error=error, status=200)
    with pytest.raises(SlackApiError) as raised:
        client.chat_postMessage(channel="C111", text="hi", blocks=[SECTION])
    assert raised.value.response["error"] == error
    assert raised.value.response.status_code == 200


def test_server_errors_and_permanent_faults(api: SlackWebAPI, client: WebClient) -> None:
    api.fail("users.info", status=500, times=None)
    for _ in range(3):
        with pytest.raises(SlackApiError) as raised:
            client.users_info(user="U111")
        assert raised.value.response.status_code == 500
        assert raised.value.response["error"] == "internal_error"
    api.clear_faults()
    assert client.users_info(user="U111")["ok"]


def test_slow_answers_are_delayed(api: SlackWebAPI, client: WebClient) -> None:
    api.slow("reactions.add", 0.3)
    started = time.monotonic()
    assert client.reactions_add(channel="C111", timestamp="1733000000.000100", name="eyes")["ok"]
    assert time.monotonic() - started >= 0.3


def test_blocks_are_checked_like_slack_does(api: SlackWebAPI, client: WebClient) -> None:
    too_long = {"type": "section", "text": {"type": "mrkdwn", "text": "x" * 3001}}
    with pytest.raises(SlackApiError) as raised:
        client.chat_postMessage(channel="C111", text="hi", blocks=[too_long])
    assert raised.value.response["error"] == "invalid_blocks"
    assert raised.value.response["errors"] == [
        "must be less than 3001 characters [json-pointer:/blocks/0/text/text]"
    ]
    assert raised.value.response["response_metadata"]["messages"][0].startswith("[ERROR] ")

    header = {"type": "header", "text": {"type": "mrkdwn", "text": ""}}
    assert block_problems([header, SECTION, SECTION]) == [
        "must be one of plain_text [json-pointer:/blocks/0/text/type]",
        "must be more than 0 characters [json-pointer:/blocks/0/text/text]",
        "duplicate block_id [json-pointer:/blocks/2/block_id]",
    ]
    assert block_problems([SECTION, BUTTONS]) == []
    assert block_problems([{"type": "divider"}] * 51) == [
        "no more than 50 items allowed [json-pointer:/blocks]"
    ]


def test_message_arguments_are_checked(client: WebClient) -> None:
    with pytest.raises(SlackApiError, match="no_text"), pytest.warns(UserWarning, match="`text` argument"):
        client.chat_postMessage(channel="C111")
    with pytest.raises(SlackApiError, match="channel_not_found"):
        client.chat_postMessage(channel="", text="hi")
    with pytest.raises(SlackApiError, match="msg_too_long"):
        client.chat_postMessage(channel="C111", text="x" * 40_001)


def test_other_message_methods(client: WebClient) -> None:
    posted = client.chat_postMessage(channel="C111", text="working")
    updated = client.chat_update(channel="C111", ts=posted["ts"], text="done", blocks=[SECTION])
    assert updated["ts"] == posted["ts"]
    assert client.conversations_history(channel="C111")["messages"][0]["text"] == "done"

    ephemeral = client.chat_postEphemeral(channel="C111", user="U111", text="only you")
    assert float(ephemeral["message_ts"]) > float(posted["ts"])
    link = client.chat_getPermalink(channel="C111", message_ts=posted["ts"])
    assert link["permalink"].endswith("/archives/C111/p1733000000000100")
    assert client.chat_postMessage(channel="U111", text="dm")["channel"] == "D111"

    view = {"type": "modal", "title": {"type": "plain_text", "text": "raydiag"}, "blocks": [SECTION]}
    opened = client.views_open(trigger_id="123.456.abc", view=view)
    assert opened["view"]["type"] == "modal"
    assert opened["view"]["id"].startswith("V")
    assert client.api_call("team.info")["ok"]


def test_users_info_has_timezone_and_locale_on_request(client: WebClient) -> None:
    plain = client.users_info(user="U111")["user"]
    assert plain["id"] == "U111"
    assert plain["tz"] == "America/Los_Angeles"
    assert "locale" not in plain
    assert client.users_info(user="U111", include_locale=True)["user"]["locale"] == "en-US"


def test_configured_users_override_defaults() -> None:
    with serve_slack(users={"U333": {"tz": "Europe/Berlin", "locale": "de-DE"}}) as api:
        client = WebClient(token="xoxb-test", base_url=api.url)
        user = client.users_info(user="U333", include_locale=True)["user"]
        assert (user["tz"], user["locale"]) == ("Europe/Berlin", "de-DE")
        with pytest.raises(SlackApiError, match="user_not_found"):
            client.users_info(user="U404")


def test_usergroup_members_come_from_configuration(api: SlackWebAPI, client: WebClient) -> None:
    assert client.usergroups_users_list(usergroup=ONCALL)["users"] == ["U111", "U222"]
    api.usergroups["S0NEW"] = ["U999"]
    assert client.usergroups_users_list(usergroup="S0NEW")["users"] == ["U999"]
    with pytest.raises(SlackApiError, match="no_such_subteam"):
        client.usergroups_users_list(usergroup="S0MISSING")


def test_files_upload_v2_goes_end_to_end(api: SlackWebAPI, client: WebClient) -> None:
    png = tiny_png()
    answer = client.files_upload_v2(
        channel="C111", thread_ts="1733000000.000100", filename="timeline.png", content=png, title="Timeline"
    )

    assert [call.method for call in api.calls] == [
        "files.getUploadURLExternal",
        "file_upload",
        "files.completeUploadExternal",
    ]
    file_id = answer["file"]["id"]
    assert api.uploads[file_id] == png
    assert answer["file"]["size"] == len(png)
    assert answer["file"]["title"] == "Timeline"
    upload = api.calls_to("file_upload")[0]
    assert upload.params == {"file_id": file_id, "size": len(png)}
    complete = api.calls_to("files.completeUploadExternal")[0].params
    assert complete["channel_id"] == "C111"
    assert complete["thread_ts"] == "1733000000.000100"
    assert complete["files"] == [{"id": file_id, "title": "Timeline"}]


def test_legacy_files_upload_is_retired(client: WebClient) -> None:
    with pytest.raises(SlackApiError, match="method_deprecated"):
        client.api_call("files.upload", params={"channels": "C111", "content": "x"})


def test_response_url_posts_are_recorded(api: SlackWebAPI) -> None:
    answer = WebhookClient(api.response_url("cmd-1")).send(text="working on it", response_type="ephemeral")
    assert answer.status_code == 200
    [call] = api.wait_for("response_url")
    assert call.path == "/response/cmd-1"
    assert call.params == {"text": "working on it", "response_type": "ephemeral"}


def test_wait_for_blocks_until_calls_arrive_from_other_threads(api: SlackWebAPI, client: WebClient) -> None:
    def later() -> None:
        time.sleep(0.2)
        for text in ("one", "two"):
            client.chat_postMessage(channel="C111", text=text)

    worker = threading.Thread(target=later)
    worker.start()
    calls = api.wait_for("chat.postMessage", count=2, timeout=5)
    worker.join()
    assert [call.params["text"] for call in calls] == ["one", "two"]

    with pytest.raises(AssertionError, match=r"chat\.update"):
        api.wait_for("chat.update", timeout=0.1)
    api.clear()
    assert api.calls == []


def test_missing_or_malformed_token_is_refused(api: SlackWebAPI) -> None:
    with pytest.raises(SlackApiError) as raised:
        WebClient(base_url=api.url).chat_postMessage(channel="C111", text="hi")
    assert raised.value.response["error"] == "not_authed"
    with pytest.raises(SlackApiError, match="invalid_auth"):
        WebClient(token="not-a-token", base_url=api.url).auth_test()

    answer = post(
        api.url + "auth.test", "token=xoxb-form", {"Content-Type": "application/x-www-form-urlencoded"}
    )
    assert answer.json()["ok"] is True
    assert api.calls_to("auth.test")[-1].token == "xoxb-form"


# --------------------------------------------------------------------------------------------------
# Driving a real Bolt app
# --------------------------------------------------------------------------------------------------


@pytest.fixture
def app(api: SlackWebAPI) -> App:
    bolt = App(signing_secret=SECRET, client=WebClient(token="xoxb-test", base_url=api.url))

    @bolt.command("/raydiag")
    def diagnose(ack: Ack, command: dict[str, Any], say: Say, respond: Respond) -> None:
        ack()
        respond(f"looking at {command['text']}")
        say("hi")

    return bolt


def test_signed_headers_follow_slacks_recipe() -> None:
    headers = signed_headers("a=1", "secret", timestamp=1531420618)
    assert headers["X-Slack-Request-Timestamp"] == "1531420618"
    assert headers["Content-Type"] == "application/x-www-form-urlencoded"
    verifier = SignatureVerifier("secret", clock=FrozenClock(1531420618))
    assert verifier.is_valid("a=1", "1531420618", headers["X-Slack-Signature"])
    assert signed_headers("{}", "secret")["Content-Type"] == "application/json"


def test_slash_command_body_has_slacks_fields() -> None:
    fields = parse_qs(slash_command_body(text="raydiag-gpu -n ml"))
    assert list(fields) == [
        "token",
        "team_id",
        "team_domain",
        "channel_id",
        "channel_name",
        "user_id",
        "user_name",
        "command",
        "text",
        "api_app_id",
        "is_enterprise_install",
        "response_url",
        "trigger_id",
    ]
    assert fields["command"] == ["/raydiag"]
    assert fields["text"] == ["raydiag-gpu -n ml"]


def test_bolt_dispatch_acks_a_command_and_talks_to_the_stand_in(api: SlackWebAPI, app: App) -> None:
    assert api.calls_to("auth.test")
    body = slash_command_body(text="raydiag-gpu", response_url=api.response_url("cmd"))

    response = app.dispatch(bolt_request(body, SECRET))

    assert response.status == 200
    [said] = api.wait_for("chat.postMessage")
    assert (said.params["channel"], said.params["text"]) == ("C111", "hi")
    [responded] = api.wait_for("response_url")
    assert responded.params["text"] == "looking at raydiag-gpu"


def test_bolt_over_http_checks_signatures(api: SlackWebAPI, app: App) -> None:
    body = slash_command_body(response_url=api.response_url())
    with serve_bolt(app) as url:
        forged = post(url, body, {**signed_headers(body, SECRET), "X-Slack-Signature": "v0=" + "0" * 64})
        stale = post_signed(url, body, SECRET, timestamp=int(time.time()) - 6 * 60)
        wrong_secret = post_signed(url, body, "not-the-secret")
        good = post_signed(url, body, SECRET)
        challenge = post_signed(url, url_verification_body("abc123"), SECRET)
        elsewhere = post(url.replace("/slack/events", "/other"), body, signed_headers(body, SECRET))

    assert (forged.status, stale.status, wrong_secret.status) == (401, 401, 401)
    assert good.status == 200
    assert challenge.status == 200
    assert challenge.json() == {"challenge": "abc123"}
    assert elsewhere.status == 404
    assert len(api.wait_for("chat.postMessage")) == 1


def test_bolt_routes_interactions_and_events_built_here(api: SlackWebAPI) -> None:
    app = App(signing_secret=SECRET, client=WebClient(token="xoxb-test", base_url=api.url))
    seen: dict[str, dict[str, Any]] = {}
    messages: list[dict[str, Any]] = []

    @app.action("rerun")
    def rerun(ack: Ack, body: dict[str, Any]) -> None:
        ack()
        seen["action"] = body

    @app.event("app_mention")
    def mentioned(event: dict[str, Any]) -> None:
        seen["mention"] = event

    @app.event("message")
    def message(event: dict[str, Any]) -> None:
        messages.append(event)

    @app.shortcut("raydiag_diagnose")
    def shortcut(ack: Ack, shortcut: dict[str, Any]) -> None:
        ack()
        seen["shortcut"] = shortcut

    def dispatch(body: str) -> int:
        return app.dispatch(bolt_request(body, SECRET)).status

    action = block_actions_body(
        "rerun",
        "ml/raydiag-gpu",
        message_ts="1733000000.000100",
        thread_ts="1733000000.000050",
        message_blocks=[BUTTONS],
    )
    own_post = message_event("posted by raydiag", user=BOT_USER_ID, bot_id=BOT_ID)
    statuses = [
        dispatch(action),
        dispatch(event_callback_body(app_mention_event(thread_ts="1733000000.000050"))),
        dispatch(event_callback_body(own_post, event_id="Ev124")),
        dispatch(event_callback_body(message_event("kubectl get pods output"), event_id="Ev125")),
        dispatch(message_shortcut_body()),
    ]
    assert statuses == [200] * 5

    deadline = time.monotonic() + 5
    while (len(seen) < 3 or not messages) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert seen["action"]["actions"][0]["block_id"] == "raydiag_actions"
    assert seen["action"]["actions"][0]["value"] == "ml/raydiag-gpu"
    assert seen["action"]["container"]["channel_id"] == "C111"
    assert seen["action"]["message"]["thread_ts"] == "1733000000.000050"
    assert seen["mention"]["text"] == f"<@{BOT_USER_ID}> raydiag-gpu"
    assert seen["mention"]["thread_ts"] == "1733000000.000050"
    # Bolt drops the bot's own posts, knowing its bot_id from auth.test on the stand-in.
    assert [m["text"] for m in messages] == ["kubectl get pods output"]
    assert seen["shortcut"]["message"]["text"] == "raycluster raydiag-gpu is stuck"
