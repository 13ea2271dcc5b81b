"""Slack's text rules, shared by every Slack message: mrkdwn escaping, Slack's limits, action ids.

Pure text, no Slack client: the Block Kit messages themselves are built and validated with
``slack_sdk.models`` under the Slack transport, in ``bot.deliver.blocks`` (a diagnosis thread, a
health post, probe results). What lives here is what those builders and the text renderers below
them share: ``escape`` for mrkdwn's control characters, ``clip`` to cut a text to a limit with a
visible note, the limits themselves and the action ids the Slack listeners read.
"""

from __future__ import annotations

from bot.render.messages import Lang, say

MAX_BLOCKS = 50
SECTION_LIMIT = 3000
HEADER_LIMIT = 150
FALLBACK_LIMIT = 3000
SEVERITY_EMOJI = {
    "critical": ":red_circle:",
    "warning": ":large_orange_circle:",
    "info": ":large_blue_circle:",
}
LAYER_EMOJI = {
    "kubernetes": ":wheel_of_dharma:",
    "ray": ":zap:",
    "application": ":package:",
    "healthy": ":white_check_mark:",
    "unknown": ":grey_question:",
}

# Button action ids, read by the Slack listeners.
ACTION_GPU_PROBE = "raydiag_gpu_probe"
ACTION_HEAD_CHECK = "raydiag_head_check"
ACTION_RAY_STATUS = "raydiag_ray_status"
ACTION_RERUN = "raydiag_rerun"
ACTION_MUTE = "raydiag_mute"
# "Right cause?": yes records at once; no opens a modal (its callback id) with the ten causes.
ACTION_VERDICT_RIGHT = "raydiag_verdict_right"
ACTION_VERDICT_WRONG = "raydiag_verdict_wrong"
VIEW_VERDICT = "raydiag_verdict"


def escape(text: str) -> str:
    """Slack mrkdwn control characters; everything else is shown as written."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def clip(text: str, limit: int, lang: Lang) -> str:
    if len(text) <= limit:
        return text
    note = " " + say("truncated", lang, count=len(text) - limit)
    return text[: max(0, limit - len(note))] + note
