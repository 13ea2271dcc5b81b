"""The "Right cause?" buttons as Slack sees them: signed requests into the Bolt app, Web API calls to
the loopback stand-in, verdicts kept in a real state database (a SQLite file and the session's
PostgreSQL).

Diagnoses are real (recorded scenarios served by the loopback Kubernetes API, pastes from the rule
cases); every message and the modal go through the stand-in's Block Kit checks. The verdicts end
as a corpus batch that ``raydiag corpus export`` writes, checked by the corpus's own meta-tests.

Kubernetes is never read here: the diagnoses are the recorded scenarios' snapshots (``recorded``),
and the loopback API server only gives the configuration's kubeconfig a live address (measured: it
answered no request in this module). The live diagnosis path runs on the real control plane in
tests/integration/test_compound_real_stack.py and test_live_kubernetes.py.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import time
from collections.abc import Iterator
from io import StringIO
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from slack_sdk.models.views import View

from benchmarks.corpus_eval import FORMATS, evaluate, load_corpus
from bot.cli import run
from bot.config import load_config
from bot.deliver.blocks.thread import render_thread
from bot.diagnosis import Diagnosis
from bot.slack import verdict_actions
from bot.slack.app import CORE, build_app
from bot.slack.bot import Bot
from bot.store import Store, open_store
from tests.corpus import test_corpus_accuracy
from tests.slack.test_bot_scenarios import (
    ALLOWED,
    CHANNEL,
    INCIDENTS,
    SECRET,
    command,
    recorded,
    validate_blocks,
    write_config,
)
from tests.support import scenarios
from tests.support.bolt_server import bolt_over_http
from tests.support.cluster import CLUSTER
from tests.support.corpus import CORPUS
from tests.support.kube_api import ObjectStore, serve
from tests.support.postgres import shared
from tests.support.slack_api import (
    APP_ID,
    BOT_USER_ID,
    TEAM_ID,
    Call,
    HttpAnswer,
    SlackWebAPI,
    app_mention_event,
    block_actions_body,
    event_callback_body,
    message_event,
    post_signed,
    serve_slack,
)
from tests.support.waiting import eventually

SECOND = "U0GPUOPS02"
THIRD = "U0GPUOPS03"
OUTSIDER = "U0OUTSIDER"
PASTE = Path(__file__).resolve().parents[1] / "cases" / "ray-gpu-driver-error" / "fires" / "raylet-nvml.txt"
SECRET_LINE = "export HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz0123"
PASTE_TS = "1733000300.000100"


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/state/raydiag-state.db"
    return shared.fresh_database(request.getfixturevalue("postgres"))


@pytest.fixture
def slack() -> Iterator[SlackWebAPI]:
    with serve_slack() as api:
        yield api


@contextlib.contextmanager
def verdict_bot(
    tmp_path: Path, slack: SlackWebAPI, store_url: str, bundle: Any = None
) -> Iterator[tuple[str, Store]]:
    """The bot as ``raydiag serve`` wires it, with a state store; three people on the allow-list."""
    chosen = bundle or scenarios.gpu_worker_without_toleration()
    with serve(ObjectStore.from_bundle(chosen)) as kube:
        path = write_config(
            tmp_path,
            kube.kubeconfig(tmp_path / "kubeconfig"),
            "http://127.0.0.1:9",
            extra={"probes": {"allowed_users": [ALLOWED, SECOND, THIRD]}},
        )
        store = open_store(store_url)
        bot = Bot(config=load_config(path), diagnose=recorded(chosen), store=store)
        app = build_app(
            bot,
            token="xoxb-test",
            signing_secret=SECRET,
            api_url=slack.url,
            surfaces=(*CORE, verdict_actions.register),
        )
        try:
            with bolt_over_http(bot, app) as url:
                yield url, store
        finally:
            store.close()


def verdict_root(slack: SlackWebAPI, channel: str) -> tuple[dict[str, Any], str]:
    """The posted message carrying "Right cause?" and the diagnosis id its buttons carry."""
    roots = [m for m in slack.messages(channel) if _verdict_value(m) is not None]
    assert len(roots) == 1, [m.get("text") for m in slack.messages(channel)]
    value = _verdict_value(roots[0])
    assert value is not None
    return roots[0], value


def _verdict_value(message: dict[str, Any]) -> str | None:
    for block in message.get("blocks") or []:
        if block.get("block_id") == "raydiag_verdict":
            return str(block["elements"][0]["value"])
    return None


def press(
    url: str, action: str, root: dict[str, Any], value: str, user: str, channel: str = CHANNEL
) -> HttpAnswer:
    body = block_actions_body(
        action,
        value=value,
        user_id=user,
        channel_id=channel,
        message_ts=root["ts"],
        thread_ts=root.get("thread_ts"),
        message_blocks=root["blocks"],
    )
    return post_signed(url, body, SECRET)


def submit(url: str, opened: dict[str, Any], user: str, choice: str, text: str | None) -> HttpAnswer:
    """The ``view_submission`` Slack sends when ``user`` saves the modal the bot opened."""
    values: dict[str, Any] = {
        "raydiag_verdict_cause": {
            "cause": {"type": "static_select", "selected_option": {"value": choice, "text": {}}}
        },
        "raydiag_verdict_other": {"text": {"type": "plain_text_input", "value": text}},
    }
    payload = {
        "type": "view_submission",
        "team": {"id": TEAM_ID, "domain": "raydiag-test"},
        "user": {"id": user, "username": user.lower(), "name": user.lower(), "team_id": TEAM_ID},
        "api_app_id": APP_ID,
        "token": "legacy-verification-token",
        "trigger_id": f"{int(time.time())}.4711.{user}",
        "view": {
            "id": "V0VERDICT1",
            "team_id": TEAM_ID,
            "type": "modal",
            **opened,
            "state": {"values": values},
            "hash": "1733000000.abcd",
            "app_id": APP_ID,
            "bot_id": "BBOT123",
        },
        "response_urls": [],
        "is_enterprise_install": False,
    }
    return post_signed(url, urlencode({"payload": json.dumps(payload)}), SECRET)


def in_thread(slack: SlackWebAPI, thread: str, words: str) -> list[Call]:
    return [
        c
        for c in slack.calls_to("chat.postMessage")
        if c.params.get("thread_ts") == thread and words in str(c.params.get("text"))
    ]


def ephemerals(slack: SlackWebAPI, user: str) -> list[str]:
    return [
        str(c.params["text"]) for c in slack.calls_to("chat.postEphemeral") if c.params.get("user") == user
    ]


def test_a_paste_gets_verdicts_once_each_and_they_export_as_corpus_cases(
    tmp_path: Path, slack: SlackWebAPI, store_url: str
) -> None:
    with verdict_bot(tmp_path, slack, store_url) as (url, store):
        text = f"<@{BOT_USER_ID}> why is my GPU worker stuck?\n{PASTE.read_text()}\n{SECRET_LINE}\n"
        event = app_mention_event(text=text, channel=CHANNEL, ts=PASTE_TS)
        assert post_signed(url, event_callback_body(event, event_id="Ev0VERDICT1"), SECRET).status == 200
        assert eventually(lambda: len(slack.calls_to("chat.postMessage")) >= 2, timeout_s=30)
        for call in slack.calls_to("chat.postMessage"):
            validate_blocks(call)
        root, value = verdict_root(slack, CHANNEL)
        diagnosis_id = json.loads(value)["diagnosis"]
        # Kept once the whole thread is posted (the root first, the findings under it).
        assert eventually(lambda: store.diagnosis(diagnosis_id) is not None, timeout_s=10)
        kept = store.diagnosis(diagnosis_id)
        assert kept is not None and (kept.channel, kept.message_ts, kept.thread_ts) == (
            CHANNEL,
            root["ts"],
            PASTE_TS,
        )
        assert kept.trigger == "mention" and "NVML" in kept.input
        assert "hf_abcdefghij" not in kept.input and "[REDACTED]" in kept.input
        assert BOT_USER_ID not in kept.input
        assert "Right cause?" in json.dumps(root["blocks"])

        # Yes, twice: one verdict, one audit line naming who gave it; the second click is told so.
        assert press(url, "raydiag_verdict_right", root, value, ALLOWED).status == 200
        assert eventually(lambda: bool(in_thread(slack, PASTE_TS, "right cause")), timeout_s=10)
        assert press(url, "raydiag_verdict_right", root, value, ALLOWED).status == 200
        assert eventually(lambda: any("already" in t for t in ephemerals(slack, ALLOWED)), timeout_s=10)
        [audit] = in_thread(slack, PASTE_TS, "right cause")
        assert f"<@{ALLOWED}>" in audit.params["text"]
        validate_blocks(audit)

        # Someone off the allow-list is refused; nothing is kept for them.
        assert press(url, "raydiag_verdict_right", root, value, OUTSIDER).status == 200
        assert eventually(lambda: any("allow-list" in t for t in ephemerals(slack, OUTSIDER)), timeout_s=10)
        assert store.verdict(diagnosis_id, OUTSIDER) is None

        # No: a modal with the causes (the one raydiag named left out), then the true one.
        assert press(url, "raydiag_verdict_wrong", root, value, SECOND).status == 200
        [opened] = slack.wait_for("views.open", timeout=10)
        view = opened.params["view"]
        View(**view).validate_json()
        options = [o["value"] for o in view["blocks"][1]["element"]["options"]]
        assert "other" in options and str(kept.asked_cause) not in options and len(options) == 10
        assert "3" in options and "7" in options
        assert submit(url, view, SECOND, "7", "the A100 label was misspelt").status == 200
        assert eventually(lambda: bool(in_thread(slack, PASTE_TS, "GPU type chain broken")), timeout_s=10)
        second = store.verdict(diagnosis_id, SECOND)
        assert second is not None and (second.right, second.cause) == (False, 7)

        # "Something else" needs words: Slack is told to show the error, and nothing is kept.
        refused = submit(url, view, THIRD, "other", "  ")
        assert refused.status == 200 and refused.json()["response_action"] == "errors"
        assert "raydiag_verdict_other" in refused.json()["errors"]
        time.sleep(0.5)
        assert store.verdict(diagnosis_id, THIRD) is None
        assert submit(url, view, THIRD, "other", "the node pool was being upgraded").status == 200
        assert eventually(lambda: bool(in_thread(slack, PASTE_TS, "something else")), timeout_s=10)

        # The same button on another message raydiag posted: refused, whoever presses it.
        elsewhere = {**root, "ts": "1733000999.000100"}
        assert press(url, "raydiag_verdict_wrong", elsewhere, value, THIRD).status == 200
        assert eventually(lambda: any("does not belong" in t for t in ephemerals(slack, THIRD)), timeout_s=10)
        assert len(slack.calls_to("views.open")) == 1

    out = tmp_path / "exported" / "team-verdicts"
    answer = StringIO()
    assert run(["corpus", "export", "--out", str(out), "--db", store_url], StringIO(), answer) == 0
    assert answer.getvalue().startswith("1 case(s) written")
    [case] = load_corpus(out.parent)
    entry = json.loads((out / "expected.json").read_text())[0]
    assert case.kind == "thread" and case.path.read_text().rstrip("\n") == kept.input.rstrip("\n")
    # Right, 7 and something else each once: the earliest (right) settles it.
    assert case.causes == (kept.asked_cause,) and entry["verdicts"] == {"right": 1, "wrong": 2, "named": [7]}
    assert "ray-log" in case.formats and set(case.formats) <= set(FORMATS)
    assert entry["what_happened"] == "the A100 label was misspelt / the node pool was being upgraded"
    outcomes, _ = evaluate([case])
    assert outcomes[0].hit  # raydiag's answer, confirmed, is what the case now expects

    # The exported batch beside the project's corpus passes the corpus's own meta-tests.
    corpus = tmp_path / "corpus"
    shutil.copytree(CORPUS, corpus, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    shutil.copytree(out, corpus / "team-verdicts")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(test_corpus_accuracy, "CORPUS", corpus)
        test_corpus_accuracy.test_every_case_is_well_formed_and_its_thread_counted_once()
        test_corpus_accuracy.test_every_cause_and_format_is_in_the_corpus()
    assert len(load_corpus(corpus)) == len(load_corpus(CORPUS)) + 1

    # Exporting again into the same batch refreshes its cases rather than adding them twice.
    assert run(["corpus", "export", "--out", str(out), "--db", store_url], StringIO(), StringIO()) == 0
    assert len(json.loads((out / "expected.json").read_text())) == 1


def test_a_slash_diagnosis_asks_and_a_deleted_one_refuses(
    tmp_path: Path, slack: SlackWebAPI, store_url: str
) -> None:
    with verdict_bot(tmp_path, slack, store_url) as (url, store):
        assert command(url, slack, "gpu-prod").status == 200
        assert eventually(lambda: len(slack.calls_to("chat.postMessage")) >= 2, timeout_s=30)
        root, value = verdict_root(slack, CHANNEL)
        diagnosis_id = json.loads(value)["diagnosis"]
        assert eventually(lambda: store.diagnosis(diagnosis_id) is not None, timeout_s=10)
        kept = store.diagnosis(diagnosis_id)
        assert kept is not None and kept.trigger == "slash" and kept.cluster == CLUSTER
        assert kept.thread_ts is None and kept.message_ts == root["ts"]
        # A cluster the bot read itself: its findings' verbatim quotes, which the readers read back.
        assert "untolerated taint" in kept.input or "didn't tolerate" in kept.input

        # The message is deleted: the kept diagnosis goes, and a late click changes nothing.
        deleted = {
            "type": "message",
            "subtype": "message_deleted",
            "hidden": True,
            "channel": CHANNEL,
            "deleted_ts": root["ts"],
            "ts": "1733000500.000100",
            "event_ts": "1733000500.000100",
            "previous_message": {
                "type": "message",
                "user": BOT_USER_ID,
                "bot_id": "BBOT123",
                "ts": root["ts"],
            },
        }
        assert post_signed(url, event_callback_body(deleted, event_id="Ev0DELETED1"), SECRET).status == 200
        assert eventually(lambda: store.diagnosis(diagnosis_id) is None, timeout_s=10)
        assert press(url, "raydiag_verdict_right", root, value, ALLOWED).status == 200
        assert eventually(
            lambda: any("no longer keep" in t for t in ephemerals(slack, ALLOWED)), timeout_s=10
        )
        assert press(url, "raydiag_verdict_wrong", root, value, ALLOWED).status == 200
        assert eventually(lambda: len(ephemerals(slack, ALLOWED)) == 2, timeout_s=10)
        assert slack.calls_to("views.open") == []
        assert in_thread(slack, root["ts"], "says") == []
        assert store.judged_diagnoses() == []


def test_an_alert_answer_asks_too_and_someone_elses_message_is_refused(
    tmp_path: Path, slack: SlackWebAPI, store_url: str
) -> None:
    with verdict_bot(tmp_path, slack, store_url) as (url, store):
        alert = message_event(
            text="[FIRING:1] KubePodNotReady gpu-prod: a GPU worker is not ready",
            channel=INCIDENTS,
            user=None,
            ts="1733000600.000100",
            bot_id="B0ALERTMGR",
            subtype="bot_message",
        )
        alert["username"] = "Alertmanager"
        assert post_signed(url, event_callback_body(alert, event_id="Ev0ALERT001"), SECRET).status == 200
        assert eventually(lambda: len(slack.calls_to("chat.postMessage")) >= 3, timeout_s=30)
        root, value = verdict_root(slack, INCIDENTS)
        diagnosis_id = json.loads(value)["diagnosis"]
        assert eventually(lambda: store.diagnosis(diagnosis_id) is not None, timeout_s=10)
        kept = store.diagnosis(diagnosis_id)
        assert kept is not None and kept.trigger == "alert" and kept.thread_ts == "1733000600.000100"

        # The same value on a person's message never reaches the verdict listeners.
        body = block_actions_body(
            "raydiag_verdict_right",
            value=value,
            user_id=ALLOWED,
            channel_id=INCIDENTS,
            message_ts=root["ts"],
            message_author="U0SOMEONE1",
        )
        assert post_signed(url, body, SECRET).status == 200
        assert eventually(
            lambda: any("messages raydiag posted" in t for t in ephemerals(slack, ALLOWED)), timeout_s=10
        )
        assert store.judged_diagnoses() == []
        # A value that names no diagnosis at all is refused as well.
        assert (
            press(url, "raydiag_verdict_right", root, '{"diagnosis": "../x"}', ALLOWED, INCIDENTS).status
            == 200
        )
        assert eventually(
            lambda: any("does not belong" in t for t in ephemerals(slack, ALLOWED)), timeout_s=10
        )
        assert store.judged_diagnoses() == []


def test_without_a_state_store_there_is_nothing_to_ask() -> None:
    diagnosis = Diagnosis(cluster="gpu-prod")
    from bot.catalogue import default_catalogue

    catalogue = default_catalogue()
    asked = render_thread(diagnosis, catalogue, "zh", "d" + "0" * 20)[0]
    assert "原因对吗" in json.dumps(asked, ensure_ascii=False)
    assert "raydiag_verdict" not in json.dumps(render_thread(diagnosis, catalogue, "en")[0])
