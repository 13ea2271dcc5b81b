"""The Bolt app: listeners that acknowledge at once and hand the slow work to lazy functions.

Every listener here is thin. It validates what Slack sent against the configuration, acks within
Slack's 3 seconds, and delegates: diagnoses to ``Diagnoser`` (collect → classify), rendering to
``bot.deliver.blocks``, posting to ``bot.deliver.slack_poster``, probes to ``bot.slack.probe_actions``.
A failure in one diagnosis is reported in its thread and never reaches the listener.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Literal

from slack_bolt import Ack, App, BoltContext, BoltResponse, Respond
from slack_bolt.middleware import IgnoringSelfEvents
from slack_bolt.request import BoltRequest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.catalogue import Catalogue, default_catalogue
from bot.collect.live import pod_ray_cluster
from bot.config import ClusterConfig, Config
from bot.deliver.blocks import note
from bot.deliver.slack_poster import post, web_client
from bot.diagnoser import (
    CollectSnapshot,
    Diagnose,
    Diagnoser,
    Trigger,
)
from bot.diagnosis import Diagnosis
from bot.observe.logs import (
    ContextExecutor,
    current_request_id,
    new_request_id,
    request_context,
    set_request_id,
)
from bot.observe.metrics import Metrics
from bot.render.messages import Lang, say
from bot.render.slack import ACTION_MUTE, ACTION_RERUN
from bot.slack.alerts import answer_alert, is_own
from bot.slack.commands import HANDLED_KINDS, Command, named_clusters, parse_command
from bot.slack.diagnosis_posts import forget_deleted, post_diagnosis
from bot.slack.state import (
    AlertAnswers,
    AnsweredOnce,
    ClusterLocks,
    MemoryAlertAnswers,
    MuteList,
    Mutes,
    SeenOnce,
    StoredAlertAnswers,
    StoredMutes,
    StoredSeenOnce,
)
from bot.snapshot.redact import redact
from bot.store import Store, StoreError
from bot.workers import Busy, SharedRuns, Submitted

LOG = logging.getLogger(__name__)
SHORTCUT_CALLBACK = "raydiag_diagnose_message"

# How a message reached the bot: mentioned, posted in an incident channel, or sent by the shortcut.
MessageTrigger = Literal["mention", "incident", "shortcut"]
# A sub-command's lazy handler: (bot, parsed command, Slack's command payload, client, respond).
CommandHandler = Callable[["Bot", Command, dict[str, Any], WebClient, Respond], None]


@dataclass
class Bot:
    """What the listeners share: configuration, the one ``Diagnoser``, and small state."""

    config: Config
    # Reads and classifies one cluster; the live collector in production, recorded data in tests.
    diagnose: Diagnose | None = None
    catalogue: Catalogue = field(default_factory=default_catalogue)
    # Durable state shared by replicas (schedules, mutes, answered events, quiz); None: in-process only.
    store: Store | None = None
    mutes: MuteList = field(default_factory=Mutes)
    seen: AnsweredOnce = field(default_factory=SeenOnce)
    probe_locks: ClusterLocks = field(default_factory=ClusterLocks)
    diagnoser: Diagnoser = field(init=False)
    # Sub-commands (capacity, quiz, schedule …) by kind; a kind without a handler is "not available".
    handlers: dict[str, CommandHandler] = field(default_factory=dict)
    # Reads a cluster for pictures that need more than the diagnosis (capacity); None: live.
    snapshot_of: CollectSnapshot | None = None
    metrics: Metrics = field(default_factory=Metrics)
    # What was said about each alert, so a re-send is answered only when the findings change.
    alerts: AlertAnswers = field(default_factory=MemoryAlertAnswers)
    # The RayCluster a Pod belongs to (its ``ray.io/cluster``), for alerts that name a Pod;
    # None: read from the configured clusters' Kubernetes APIs.
    pod_lookup: Callable[[str, str], str | None] | None = None
    _posted: dict[tuple[int, str], str] = field(default_factory=dict)  # (run, channel) already answered
    _posted_lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.diagnoser = Diagnoser(
            self.config,
            self.diagnose,
            catalogue=self.catalogue,
            metrics=self.metrics,
            snapshot_of=self.snapshot_of,
        )
        if self.store is not None:
            self.mutes, self.seen = StoredMutes(self.store), StoredSeenOnce(self.store)
            self.alerts = StoredAlertAnswers(self.store)

    def pod_owner(self, namespace: str, pod: str) -> str | None:
        """The ``ray.io/cluster`` of a Pod, asked of each configured cluster in that namespace."""
        if self.pod_lookup is not None:
            return self.pod_lookup(namespace, pod)
        asked: set[tuple[str | None, str | None]] = set()
        for cluster in self.config.clusters:
            where = (cluster.kubeconfig, cluster.context)
            if cluster.namespace != namespace or where in asked:
                continue
            asked.add(where)
            owner = pod_ray_cluster(*where, namespace, pod, self.config.collection.call_timeout_s)
            if owner:
                return owner
        return None

    @property
    def runs(self) -> SharedRuns[Diagnosis]:
        return self.diagnoser.runs

    def lang(self, channel: str | None, user: str | None) -> Lang:
        return self.config.language_for(channel, user)

    def start(self, cluster: ClusterConfig, namespace: str, trigger: Trigger) -> Submitted[Diagnosis]:
        """The shared run for this cluster: started now (or queued), or joined if one is running."""
        return self.diagnoser.submit(cluster, namespace, trigger)

    def claim_post(self, run_id: int, channel: str) -> bool:
        """True for the first caller of a shared run in a channel: that one posts, the others point to it."""
        with self._posted_lock:
            key = (run_id, channel)
            if key in self._posted:
                return False
            if len(self._posted) > 10_000:
                self._posted.clear()
            self._posted[key] = channel
            return True


def usage_blocks(config: Config, lang: Lang, note: str | None = None) -> list[dict[str, Any]]:
    names = ", ".join(f"`{c.name}`" for c in config.clusters)
    clusters = say("slack.clusters", lang, names=names) if names else say("slack.no_clusters", lang)
    text = "\n\n".join(part for part in (note, say("slack.usage", lang), clusters) if part)
    return [{"type": "section", "text": {"type": "mrkdwn", "text": text[:3000]}}]


def command_reply(
    command: Command, config: Config, lang: Lang, handled: frozenset[str] = frozenset()
) -> list[dict[str, Any]] | None:
    """The ephemeral answer for commands that need no lazy work; None when a diagnosis or handler runs."""
    if command.kind == "diagnose" or command.kind in handled:
        return None
    if command.kind in HANDLED_KINDS:
        return usage_blocks(config, lang, say("slack.unavailable", lang, what=command.kind))
    note = {
        "help": None,
        "bad-schedule": say("slack.bad_schedule", lang, text=command.word[:100]),
        "unknown-cluster": say("slack.unknown_cluster", lang, name=command.word),
        "bad-namespace": say("slack.bad_namespace", lang, name=command.word),
        "invalid": say("slack.invalid", lang, text=command.word[:100]),
    }[command.kind]
    return usage_blocks(config, lang, note)


def deliver_diagnosis(
    bot: Bot,
    client: WebClient,
    cluster: ClusterConfig,
    namespace: str,
    channel: str,
    user: str | None,
    thread_ts: str | None = None,
    notify: Callable[[str], None] | None = None,
    *,
    trigger: Trigger,
) -> None:
    """Start (or join) the diagnosis; it is posted when it finishes, from the diagnosis thread.

    The caller returns at once: Bolt's listener threads are never held while a cluster is read,
    so acknowledgements stay fast however many diagnoses are running.
    """
    lang = bot.lang(channel, user)
    try:
        submitted = bot.start(cluster, namespace, trigger)
    except Busy:
        _tell(client, channel, user, say("slack.busy", lang), thread_ts, notify)
        return
    if submitted.ahead:
        # Every worker is busy: say so now, so a late answer is not taken for a lost one.
        _tell(client, channel, user, say("slack.queued", lang, ahead=submitted.ahead), thread_ts, notify)

    request_id = current_request_id()

    def deliver(done: Future[Diagnosis]) -> None:
        # Runs in whichever thread finished the diagnosis: the asker's request id is set again here.
        with request_context(request_id):
            try:
                _deliver(bot, client, done, cluster, channel, user, thread_ts, notify, trigger)
            except Exception:  # posting failed even after retries: logged, never raised into a pool
                LOG.exception("could not deliver the diagnosis of %s", cluster.name)

    submitted.future.add_done_callback(deliver)


def _deliver(
    bot: Bot,
    client: WebClient,
    future: Future[Diagnosis],
    cluster: ClusterConfig,
    channel: str,
    user: str | None,
    thread_ts: str | None,
    notify: Callable[[str], None] | None,
    trigger: Trigger,
) -> None:
    lang = bot.lang(channel, user)
    run_id = id(future)
    try:
        diagnosis = future.result()
    except Exception as error:  # one bad diagnosis must not take the listener down
        LOG.exception("diagnosis of %s failed", cluster.name)
        _tell(
            client,
            channel,
            user,
            say("slack.failed", lang, cluster=cluster.name, error=redact(str(error))[:300]),
            thread_ts,
            notify,
        )
        return
    if thread_ts is None and not bot.claim_post(run_id, channel):
        _tell(client, channel, user, say("slack.joined", lang, cluster=cluster.name), None, notify)
        return
    try:
        post_diagnosis(bot, client, channel, diagnosis, lang, thread_ts, trigger=trigger)
    except SlackApiError as error:
        if error.response.get("error") in ("not_in_channel", "channel_not_found"):
            _tell(client, channel, user, say("slack.not_in_channel", lang), thread_ts, notify)
            return
        raise


def _tell(
    client: WebClient,
    channel: str,
    user: str | None,
    text: str,
    thread_ts: str | None,
    notify: Callable[[str], None] | None,
) -> None:
    if notify is not None:
        notify(text)
        return
    if user:
        client.chat_postEphemeral(channel=channel, user=user, text=text, thread_ts=thread_ts)
    else:
        client.chat_postMessage(channel=channel, text=text, thread_ts=thread_ts)


@dataclass(frozen=True)
class Press:
    """A button press on a diagnosis: who, where (the thread), and which configured cluster."""

    cluster: ClusterConfig
    channel: str
    thread: str
    user: str
    lang: Lang

    def announce(self, client: WebClient, action: str) -> None:
        """Say in the thread who pressed what, before anything runs."""
        text = say("slack.pressed", self.lang, user=self.user, action=action, cluster=self.cluster.name)
        post(client, self.channel, note(text), self.thread)


def button_press(bot: Bot, body: dict[str, Any], client: WebClient) -> Press | None:
    """The press, or None after an ephemeral refusal when the button names no configured cluster."""
    channel, thread = thread_of(body)
    user = str((body.get("user") or {}).get("id") or "")
    lang = bot.lang(channel, user)
    cluster = button_cluster(bot, body)
    if cluster is None:
        client.chat_postEphemeral(channel=channel, user=user, text=say("slack.refused_cluster", lang))
        return None
    return Press(cluster, channel, thread, user, lang)


def button_cluster(bot: Bot, body: dict[str, Any]) -> ClusterConfig | None:
    """The configured cluster a button names; crafted payloads naming anything else get None."""
    try:
        value = json.loads(body["actions"][0].get("value") or "{}")
    except (KeyError, IndexError, TypeError, ValueError):
        return None
    name = value.get("cluster") if isinstance(value, dict) else None
    return bot.config.cluster(name) if isinstance(name, str) else None


def pressed_on_our_message(body: dict[str, Any], context: BoltContext) -> bool:
    """Whether a button sits on a message this bot posted.

    An ephemeral message (the quiz's) was shown by this app to the one person pressing it, and
    Slack may send it without its ``message``: that is ours too.
    """
    if (body.get("container") or {}).get("is_ephemeral"):
        return True
    message = body.get("message")
    if not isinstance(message, dict):
        return False
    ours = {v for v in (context.get("bot_id"), context.get("bot_user_id")) if v}
    return bool(ours) and (message.get("bot_id") in ours or message.get("user") in ours)


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


def thread_of(body: dict[str, Any]) -> tuple[str, str]:
    container = body.get("container") or {}
    message = body.get("message") or {}
    channel = container.get("channel_id") or (body.get("channel") or {}).get("id") or ""
    thread = message.get("thread_ts") or container.get("message_ts") or message.get("ts") or ""
    return str(channel), str(thread)


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
    probe_handlers: dict[str, Callable[..., None]] | None = None,
) -> App:
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
        # Replaced by IgnoringSelfEventsButDeletions below, which lets deletions of its messages in.
        ignoring_self_events_enabled=False,
    )

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

    def ack_command(ack: Ack, command: dict[str, Any]) -> None:
        parsed = parse_command(command.get("text", ""), bot.config)
        lang = bot.lang(command.get("channel_id"), command.get("user_id"))
        reply = command_reply(parsed, bot.config, lang, frozenset(bot.handlers))
        if reply is not None:
            ack(response_type="ephemeral", blocks=reply, text=say("slack.usage", lang)[:300])
            return
        if parsed.kind in bot.handlers:
            ack()
            return
        assert parsed.cluster is not None
        ack(response_type="ephemeral", text=say("slack.working", lang, cluster=parsed.cluster.name))

    def run_command(command: dict[str, Any], client: WebClient, respond: Respond) -> None:
        parsed = parse_command(command.get("text", ""), bot.config)
        handler = bot.handlers.get(parsed.kind)
        if handler is not None:
            try:
                handler(bot, parsed, command, client, respond)
            except Exception:  # a failing sub-command is logged and told, never raised into Bolt
                LOG.exception("/raydiag %s failed", parsed.kind)
                _respond(
                    respond,
                    say(
                        "slack.failed",
                        bot.lang(command.get("channel_id"), None),
                        cluster=parsed.kind,
                        error="internal error",
                    ),
                )
            return
        if parsed.kind != "diagnose" or parsed.cluster is None:
            return
        deliver_diagnosis(
            bot,
            client,
            parsed.cluster,
            parsed.namespace or parsed.cluster.namespace,
            command["channel_id"],
            command.get("user_id"),
            notify=lambda text: _respond(respond, text),
            trigger="slash",
        )

    app.command("/raydiag")(ack=ack_command, lazy=[run_command])

    def ack_only(ack: Ack) -> None:
        ack()

    def rerun(body: dict[str, Any], client: WebClient) -> None:
        press = button_press(bot, body, client)
        if press is not None:
            press.announce(client, say("slack.rerun", press.lang))
            deliver_diagnosis(
                bot,
                client,
                press.cluster,
                press.cluster.namespace,
                press.channel,
                press.user,
                thread_ts=press.thread,
                trigger="button",
            )

    def mute(body: dict[str, Any], client: WebClient) -> None:
        press = button_press(bot, body, client)
        if press is None:
            return
        hours = bot.config.slack.mute_hours
        try:
            bot.mutes.mute(press.cluster.name, hours * 3600, by=press.user)
        except StoreError as error:
            LOG.warning("mute of %s not saved: %s", press.cluster.name, error)
            client.chat_postEphemeral(
                channel=press.channel, user=press.user, text=say("state.mute_failed", press.lang)
            )
            return
        text = say("slack.muted", press.lang, user=press.user, cluster=press.cluster.name, hours=hours)
        post(client, press.channel, note(text), press.thread)

    app.action(ACTION_RERUN)(ack=ack_only, lazy=[rerun])
    app.action(ACTION_MUTE)(ack=ack_only, lazy=[mute])
    for action, handler in (probe_handlers or {}).items():
        app.action(action)(ack=ack_only, lazy=[_probe_listener(bot, handler)])

    def on_mention(event: dict[str, Any], client: WebClient) -> None:
        enrich(bot, client, event, trigger="mention")

    def on_message(
        event: dict[str, Any], client: WebClient, context: dict[str, Any], body: dict[str, Any]
    ) -> None:
        if event.get("subtype") == "message_deleted":
            # A deleted diagnosis, or a deleted paste it answered: its kept input goes with it.
            forget_deleted(bot, event)
            return
        if event.get("channel") not in bot.config.slack.incident_channels:
            return
        if event.get("bot_id") or event.get("subtype") == "bot_message":
            # Another app's message: an alert, perhaps. raydiag's own posts are never read back.
            own = frozenset(
                i for i in (context.get("bot_id"), context.get("bot_user_id"), body.get("api_app_id")) if i
            )
            if not is_own(event, own):
                answer_alert(bot, client, event)
            return
        # A message that mentions the bot also arrives as app_mention; that listener answers it.
        mention = f"<@{context.get('bot_user_id')}>"
        if mention not in str(event.get("text")):
            enrich(bot, client, event, trigger="incident")

    app.event("app_mention")(ack=ack_only, lazy=[on_mention])
    app.event("message")(ack=ack_only, lazy=[on_message])

    def on_shortcut(body: dict[str, Any], client: WebClient) -> None:
        message = body.get("message") or {}
        event = {
            "channel": (body.get("channel") or {}).get("id"),
            "user": (body.get("user") or {}).get("id"),
            "text": message.get("text", ""),
            "ts": message.get("ts"),
            "thread_ts": message.get("thread_ts"),
        }
        enrich(bot, client, event, trigger="shortcut")

    app.shortcut(SHORTCUT_CALLBACK)(ack=ack_only, lazy=[on_shortcut])
    return app


def _respond(respond: Respond, text: str) -> None:
    respond(response_type="ephemeral", text=text)


def _probe_listener(bot: Bot, handler: Callable[..., None]) -> Callable[..., None]:
    def listener(body: dict[str, Any], client: WebClient) -> None:
        handler(bot, body, client)

    return listener


def enrich(bot: Bot, client: WebClient, event: dict[str, Any], *, trigger: MessageTrigger) -> None:
    """A mention, a shortcut or an incident-channel message: diagnose the cluster it names, or
    explain the output it pastes. An incident-channel message that names nothing known and
    explains nothing gets no answer; a mention gets the usage."""
    if event.get("bot_id") or event.get("subtype") in ("bot_message", "message_changed", "message_deleted"):
        return
    mentioned = trigger != "incident"
    channel = str(event.get("channel") or "")
    user = event.get("user")
    text = str(event.get("text") or "")
    thread = str(event.get("thread_ts") or event.get("ts") or "") or None
    lang = bot.lang(channel, user)
    for cluster in named_clusters(text, bot.config)[:2]:
        if not mentioned and bot.mutes.muted(cluster.name):
            continue
        deliver_diagnosis(
            bot, client, cluster, cluster.namespace, channel, None, thread_ts=thread, trigger=trigger
        )
        return
    try:
        diagnosis = bot.diagnoser.explain(text, "paste")
    except Busy:
        if mentioned:
            post(client, channel, note(say("slack.busy", lang)), thread)
        return
    if diagnosis.findings:
        post_diagnosis(
            bot,
            client,
            channel,
            diagnosis,
            lang,
            thread,
            trigger=trigger,
            pasted=text,
            source_ts=str(event.get("ts") or "") or None,
        )
    elif mentioned:
        post(
            client,
            channel,
            {"text": say("slack.usage", lang), "blocks": usage_blocks(bot.config, lang)},
            thread,
        )
