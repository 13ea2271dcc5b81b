"""Alerts other apps post in the incident channels, answered in their thread (issue 14).

The message is read by ``bot.collect.alerts`` (text, attachments, blocks) and mapped to one
configured cluster (a label naming the RayCluster, the Pod it names, or its words). The diagnosis
goes through the one ``Diagnoser`` (trigger ``alert``) and is posted in the alert's thread with
the alert's Pod first. Alertmanager re-sends a firing alert every ``repeat_interval``: a re-send
whose findings are the ones already posted gets nothing, a change gets a new answer. A resolved
alert gets one line, and only where raydiag had answered. An alert that maps to nothing, or a
muted cluster, gets nothing.
"""

from __future__ import annotations

import hmac
import json
import logging
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import replace
from typing import Any

from slack_sdk import WebClient

from bot.collect.alerts import (
    Alert,
    ClusterRef,
    Target,
    WebhookError,
    cluster_of,
    from_slack_message,
    from_webhook,
)
from bot.deliver.blocks import note
from bot.deliver.slack_poster import post
from bot.diagnosis import Diagnosis, finding_key
from bot.observe.logs import current_request_id, request_context
from bot.render.messages import Lang, say
from bot.slack.bot import Bot
from bot.slack.diagnosis_posts import post_diagnosis
from bot.slack.state import AlertAnswer
from bot.workers import Busy

LOG = logging.getLogger(__name__)

# Who posted it, from the app's name as Slack shows it (bot_profile.name or username).
_SENDERS = ("alertmanager", "grafana", "pagerduty", "opsgenie", "datadog", "prometheus")


def sender_of(event: Mapping[str, Any]) -> str:
    profile = event.get("bot_profile")
    names = [
        str(event.get("username") or ""),
        str(profile.get("name") or "") if isinstance(profile, dict) else "",
    ]
    said = " ".join(names).lower()
    return next((s for s in _SENDERS if s in said), "unknown")


def is_own(event: Mapping[str, Any], own: frozenset[str]) -> bool:
    """Whether raydiag itself posted the message (its bot id, bot user or app id)."""
    profile = event.get("bot_profile")
    ids = {event.get("bot_id"), event.get("user"), event.get("app_id")}
    if isinstance(profile, dict):
        ids |= {profile.get("id"), profile.get("app_id")}
    return bool({i for i in ids if isinstance(i, str)} & own)


def focused(diagnosis: Diagnosis, pod: str | None) -> Diagnosis:
    """The diagnosis with the findings about the alert's Pod first (their order kept)."""
    if not pod:
        return diagnosis
    about = [f for f in diagnosis.findings if f.subject.name == pod or f.params.get("pod") == pod]
    if not about:
        return diagnosis
    first = {id(f) for f in about}
    rest = [f for f in diagnosis.findings if id(f) not in first]
    return replace(diagnosis, findings=about + rest)


def _why(target: Target, lang: Lang) -> str:
    return say(f"slack.alert_via_{target.via}", lang, detail=target.detail)


def _targets(bot: Bot, alerts: list[Alert]) -> list[tuple[Alert, Target]]:
    refs = [ClusterRef(c.name, c.raycluster_name, c.namespace) for c in bot.config.clusters]
    found = []
    for alert in alerts:
        target = cluster_of(
            alert, refs, cluster_label=bot.config.alerts.cluster_label, pod_cluster=bot.pod_owner
        )
        if target is None:
            LOG.info("alert %r names no configured cluster; not answered", alert.name)
        else:
            found.append((alert, target))
    return found


def answer_alert(bot: Bot, client: WebClient, event: Mapping[str, Any]) -> None:
    """An alert message another app posted in an incident channel: answered in its thread."""
    alert = from_slack_message(event, sender=sender_of(event))
    channel = str(event.get("channel") or "")
    thread = str(event.get("thread_ts") or event.get("ts") or "") or None
    if alert is None or not channel:
        return
    for _, target in _targets(bot, [alert]):
        _answer(bot, client, channel, alert.key, target, [alert], thread)


def answer_webhook(bot: Bot, client: WebClient, payload: Any) -> tuple[int, str]:
    """An Alertmanager webhook notification: each configured cluster its alerts name gets one
    diagnosis in ``alertmanager.channel``, change-only, as a new message with the diagnosis in its
    thread. Returns the HTTP status and a short body; the diagnoses run after it is answered."""
    channel = bot.config.alertmanager.channel
    if channel is None:
        return 503, "no alertmanager.channel is configured\n"
    try:
        alerts = from_webhook(payload)
    except WebhookError as error:
        return 400, f"{error}\n"
    by_cluster: dict[str, list[tuple[Alert, Target]]] = {}
    for alert, target in _targets(bot, alerts):
        by_cluster.setdefault(target.cluster, []).append((alert, target))
    for cluster, found in by_cluster.items():
        firing = [pair for pair in found if pair[0].status == "firing"]
        target = (firing or found)[0][1]
        # One answer per cluster in the channel, whichever alerts of it fire.
        _answer(bot, client, channel, f"alertmanager:{cluster}", target, [a for a, _ in found], None)
    return 202, f"{len(by_cluster)} cluster(s) to diagnose\n"


def _answer(
    bot: Bot,
    client: WebClient,
    channel: str,
    key: str,
    target: Target,
    alerts: list[Alert],
    thread: str | None,
) -> None:
    lang = bot.lang(channel, None)
    previous = bot.alerts.last(channel, key)
    if all(a.status == "resolved" for a in alerts):
        if previous is not None and previous.thread_ts:
            post(client, channel, note(say("slack.alert_resolved", lang)), previous.thread_ts)
            bot.alerts.remember(channel, key, AlertAnswer(previous.findings, None))
        return
    cluster = bot.config.cluster(target.cluster)
    if cluster is None or bot.mutes.muted(cluster.name):
        return
    try:
        submitted = bot.start(cluster, cluster.namespace, "alert")
    except Busy:
        LOG.warning("too busy to diagnose %s for alert %r", cluster.name, alerts[0].name)
        return
    request_id = current_request_id()

    def deliver(done: Future[Diagnosis]) -> None:
        with request_context(request_id):
            try:
                _deliver(bot, client, done.result(), key, target, channel, thread, previous, lang)
            except Exception:  # a failed diagnosis or post is logged; the alert thread stays quiet
                LOG.exception("could not answer alert %r about %s", alerts[0].name, cluster.name)

    submitted.future.add_done_callback(deliver)


def _deliver(
    bot: Bot,
    client: WebClient,
    diagnosis: Diagnosis,
    key: str,
    target: Target,
    channel: str,
    thread: str | None,
    previous: AlertAnswer | None,
    lang: Lang,
) -> None:
    keys = frozenset(finding_key(f) for f in diagnosis.findings)
    if previous is not None and previous.thread_ts and previous.findings == keys:
        LOG.info("alert re-sent, findings unchanged: %s not posted again", target.cluster)
        return
    intro = say("slack.alert_intro", lang, cluster=target.cluster, because=_why(target, lang))
    # In the alert's thread; for the webhook, a new message that the diagnosis then answers.
    intro_ts = post(client, channel, note(intro), thread)
    under = thread or intro_ts
    post_diagnosis(bot, client, channel, focused(diagnosis, target.pod), lang, under, trigger="alert")
    bot.alerts.remember(channel, key, AlertAnswer(keys, under))


# The largest notification read: Alertmanager caps a notification's alerts (``max_alerts``) and a
# few hundred alerts with their labels are well under this.
MAX_WEBHOOK_BODY = 1 << 20
Receiver = Callable[[bytes, str | None], tuple[int, str]]


def webhook_receiver(bot: Bot, client: WebClient, token: str) -> Receiver:
    """``POST /alertmanager``: (body, Authorization header) → (HTTP status, body). A wrong or
    missing bearer token is refused and changes nothing; so is a body that is not JSON."""
    expected = f"Bearer {token}".encode()

    def receive(body: bytes, authorization: str | None) -> tuple[int, str]:
        given = (authorization or "").strip().encode()
        if not hmac.compare_digest(given, expected):
            return 401, "a bearer token is required (RAYDIAG_ALERTMANAGER_TOKEN)\n"
        if len(body) > MAX_WEBHOOK_BODY:
            return 413, "the notification is too large\n"
        try:
            payload = json.loads(body)
        except ValueError:
            return 400, "the body is not JSON\n"
        return answer_webhook(bot, client, payload)

    return receive
