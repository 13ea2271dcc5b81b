"""The probe buttons: GPU probe (allow-listed, one at a time per cluster), head check, ray status.

Who pressed what is posted in the thread before the probe runs, so the channel can see who started
work on a cluster. A refused press gets an ephemeral answer and starts nothing.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable
from typing import Any

from slack_bolt import App
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.collect.deadline import Deadline
from bot.collect.kubernetes import KubernetesReader
from bot.collect.live import kubernetes_client
from bot.deliver.blocks.probes import gpu_probe_message, head_check_message, status_message
from bot.deliver.slack_poster import post
from bot.diagnoser import dashboard_url, target_of
from bot.observe.metrics import ProbeResult
from bot.probes import Outcome
from bot.probes.gpu import run_gpu_probe
from bot.probes.head import check_head
from bot.probes.status import ray_status_text
from bot.render.messages import say
from bot.render.slack import ACTION_GPU_PROBE, ACTION_HEAD_CHECK, ACTION_RAY_STATUS
from bot.slack.bot import Bot, ack_only
from bot.slack.buttons import button_press

LOG = logging.getLogger(__name__)
GROUP_CACHE_S = 300.0
_group_cache: dict[str, tuple[float, frozenset[str]]] = {}


def probe_result(outcome: Outcome) -> ProbeResult:
    """A probe's outcome in the metric's words: it ran, it timed out, or it could not run."""
    if outcome == "ran":
        return "run"
    return "timed_out" if outcome == "pending_timeout" else "failed"


def may_start_work(bot: Bot, client: WebClient, user: str) -> bool:
    probes = bot.config.probes
    if user in probes.allowed_users:
        return True
    for group in probes.allowed_groups:
        cached = _group_cache.get(group)
        if cached is None or cached[0] < time.monotonic() - GROUP_CACHE_S:
            try:
                members = frozenset(client.usergroups_users_list(usergroup=group).get("users") or [])
            except SlackApiError:
                LOG.warning("cannot read user group %s", group)
                members = frozenset()
            cached = (time.monotonic(), members)
            _group_cache[group] = cached
        if user in cached[1]:
            return True
    return False


def _gpu_type(body: dict[str, Any]) -> str | None:
    """The GPU type carried by the button: only ``accelerator_type:<name>``-shaped values count."""
    try:
        value = json.loads(body["actions"][0].get("value") or "{}")
    except (KeyError, IndexError, TypeError, ValueError):
        return None
    gpu_type = value.get("gpu_type") if isinstance(value, dict) else None
    if isinstance(gpu_type, str) and re.fullmatch(r"(accelerator_type:)?[A-Za-z0-9_.-]{1,40}", gpu_type):
        return gpu_type
    return None


def gpu_probe(bot: Bot, body: dict[str, Any], client: WebClient) -> None:

    press = button_press(bot, body, client)
    if press is None:
        return
    cluster, channel, thread, user, lang = press.cluster, press.channel, press.thread, press.user, press.lang
    if not may_start_work(bot, client, user):
        bot.metrics.record_probe("gpu", "refused")
        client.chat_postEphemeral(
            channel=channel, user=user, text=say("slack.refused_probe", lang, cluster=cluster.name)
        )
        return
    if not bot.probe_locks.try_acquire(cluster.name):
        bot.metrics.record_probe("gpu", "refused")
        client.chat_postEphemeral(
            channel=channel, user=user, text=say("slack.probe_busy", lang, cluster=cluster.name)
        )
        return
    try:
        press.announce(client, say("slack.gpu_probe", lang))
        result = run_gpu_probe(
            dashboard_url(cluster), gpu_type=_gpu_type(body), timeout_s=bot.config.probes.gpu_timeout_s
        )
        bot.metrics.record_probe("gpu", probe_result(result.outcome))
        post(client, channel, gpu_probe_message(result, cluster.name, lang), thread)
    finally:
        bot.probe_locks.release(cluster.name)


def head_check(bot: Bot, body: dict[str, Any], client: WebClient) -> None:

    press = button_press(bot, body, client)
    if press is None:
        return
    cluster, channel, thread, lang = press.cluster, press.channel, press.thread, press.lang
    press.announce(client, say("slack.head_check", lang))
    target = target_of(cluster)
    try:
        reader: KubernetesReader | None = KubernetesReader(
            kubernetes_client(target), Deadline(bot.config.collection.deadline_s)
        )
    except Exception:  # no credentials: check what can be checked from the dashboard URL alone
        reader = None
    result = check_head(reader, cluster.namespace, target.raycluster_name, dashboard_url(cluster))
    bot.metrics.record_probe("head", probe_result(result.outcome))
    post(client, channel, head_check_message(result, cluster.name, lang), thread)


def ray_status(bot: Bot, body: dict[str, Any], client: WebClient) -> None:

    press = button_press(bot, body, client)
    if press is None:
        return
    cluster, channel, thread, lang = press.cluster, press.channel, press.thread, press.lang
    press.announce(client, say("slack.ray_status", lang))
    result = ray_status_text(dashboard_url(cluster), timeout_s=bot.config.collection.call_timeout_s)
    bot.metrics.record_probe("ray_status", probe_result(result.outcome))
    post(client, channel, status_message(result, cluster.name, lang), thread)


PROBE_HANDLERS: dict[str, Callable[[Bot, dict[str, Any], WebClient], None]] = {
    ACTION_GPU_PROBE: gpu_probe,
    ACTION_HEAD_CHECK: head_check,
    ACTION_RAY_STATUS: ray_status,
}


def register(app: App, bot: Bot) -> None:
    """The probe buttons: acked at once, the probe run lazily."""
    for action, handler in PROBE_HANDLERS.items():
        app.action(action)(ack=ack_only, lazy=[_listener(bot, handler)])


def _listener(
    bot: Bot, handler: Callable[[Bot, dict[str, Any], WebClient], None]
) -> Callable[[dict[str, Any], WebClient], None]:
    def listener(body: dict[str, Any], client: WebClient) -> None:
        handler(bot, body, client)

    return listener
