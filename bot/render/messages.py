"""Every user-facing sentence that does not belong to a rule, in English and Chinese."""

from __future__ import annotations

from typing import Literal

Lang = Literal["en", "zh"]

_MESSAGES: dict[str, dict[str, str]] = {
    "layer.kubernetes": {"en": "Kubernetes layer", "zh": "Kubernetes 层"},
    "layer.ray": {"en": "Ray layer", "zh": "Ray 层"},
    "layer.application": {"en": "Application layer", "zh": "应用层"},
    "layer.healthy": {"en": "Healthy", "zh": "健康"},
    "layer.unknown": {"en": "Unknown", "zh": "未知"},
    "severity.critical": {"en": "CRITICAL", "zh": "严重"},
    "severity.warning": {"en": "WARNING", "zh": "警告"},
    "severity.info": {"en": "INFO", "zh": "提示"},
    "cause": {"en": "cause {cause}", "zh": "原因 {cause}"},
    "no_cause": {"en": "outside the ten causes", "zh": "不属于十类原因"},
    "verdict.found": {
        "en": "{layer}: {title} ({cause}) — {count} finding(s)",
        "zh": "{layer}：{title}（{cause}，共 {count} 项发现）",
    },
    "verdict.healthy": {
        "en": "No scheduling problem found in the layers that were read.",
        "zh": "在已读取的各层中没有发现调度问题。",
    },
    "verdict.unknown": {
        "en": "Nothing to judge: no known output format or cluster state was recognised.",
        "zh": "无法判断：没有识别出任何已知的输出格式或集群状态。",
    },
    "verdict.unknown_errors": {
        "en": "Nothing could be read; see the collection errors.",
        "zh": "没有读到任何数据，请查看采集错误。",
    },
    "heading.evidence": {"en": "Evidence", "zh": "证据"},
    "heading.commands": {"en": "Commands", "zh": "命令"},
    "heading.fix": {"en": "Fix", "zh": "修复"},
    "heading.verify": {"en": "Verify", "zh": "验证"},
    "heading.errors": {"en": "Could not read", "zh": "未能读取"},
    "heading.notes": {"en": "Notes", "zh": "说明"},
    "heading.figures": {"en": "Figures", "zh": "关键数字"},
    "heading.cluster": {"en": "Cluster", "zh": "集群"},
    "heading.verdict": {"en": "Verdict", "zh": "结论"},
    "heading.subject": {"en": "Subject", "zh": "对象"},
    "unknown": {"en": "(unknown)", "zh": "（未知）"},
    "pasted_input": {"en": "pasted input", "zh": "粘贴的输出"},
    "truncated": {"en": "… (truncated, {count} more characters)", "zh": "…（已截断，还有 {count} 个字符）"},
    "figure.kubernetes_nodes": {"en": "Kubernetes nodes", "zh": "Kubernetes 节点"},
    "figure.gpu_nodes": {"en": "GPU nodes", "zh": "GPU 节点"},
    "figure.pods_pending": {"en": "Pods pending", "zh": "Pending 的 Pod"},
    "figure.ray_pods_running": {"en": "Ray Pods running", "zh": "运行中的 Ray Pod"},
    "figure.gpus_given_to_ray_pods": {"en": "GPUs given to Ray Pods", "zh": "分配给 Ray Pod 的 GPU"},
    "figure.ray_nodes_alive": {"en": "Ray nodes alive", "zh": "存活的 Ray 节点"},
    "figure.gpus_registered_in_ray": {"en": "GPUs registered in Ray", "zh": "Ray 登记的 GPU"},
    "figure.ray_pending_demands": {"en": "Ray demands waiting", "zh": "等待中的 Ray 资源需求"},
    "slack.usage": {
        "en": "*Usage*\n`/raydiag <cluster> [namespace]` diagnoses both layers of a cluster and posts the "
        "verdict here, with the details in its thread.\n"
        "`/raydiag <cluster> capacity` draws where the cluster's GPUs are, layer by layer.\n"
        "`/raydiag schedule add <cluster> <cron> [time zone] [changes|digest]`, `/raydiag schedule list`, "
        "`/raydiag schedule remove <id>` manage health posts in this channel.\n"
        "`/raydiag quiz` starts the onboarding quiz; `/raydiag quiz stats` shows the team's results.\n"
        "`/raydiag help` shows this.\n"
        "Mention `@raydiag <cluster>` in any thread, or use the message shortcut *Diagnose with raydiag* "
        "on a pasted `ray status` or `kubectl describe`.",
        "zh": "*用法*\n`/raydiag <集群> [命名空间]`：诊断集群的两层调度，在本频道发结论，细节放在回复串里。\n"
        "`/raydiag <集群> capacity`：逐层画出集群的 GPU 去向。\n"
        "`/raydiag schedule add <集群> <cron> [时区] [changes|digest]`、`/raydiag schedule list`、"
        "`/raydiag schedule remove <id>`：管理本频道的定时健康播报。\n"
        "`/raydiag quiz`：开始入门测验；`/raydiag quiz stats`：查看团队成绩。\n"
        "`/raydiag help`：显示本说明。\n在任意回复串里 `@raydiag <集群>`，或对贴出的 `ray status`、"
        "`kubectl describe` 使用消息快捷操作 *Diagnose with raydiag*。",
    },
    "slack.bad_schedule": {
        "en": "That schedule cannot run: `{text}`. Give five cron fields, e.g. `0 9 * * 1-5 Europe/Berlin`.",
        "zh": "这个定时无法运行：`{text}`。请给出五段 cron，例如 `0 9 * * 1-5 Asia/Shanghai`。",
    },
    "slack.unavailable": {
        "en": "That part of raydiag is not running here (`{what}`); diagnoses still work.",
        "zh": "本实例没有启用这项功能（`{what}`）；诊断仍然可用。",
    },
    "slack.clusters": {"en": "*Configured clusters:* {names}", "zh": "*已配置的集群：*{names}"},
    "slack.no_clusters": {
        "en": "No cluster is configured yet; add one under `clusters:` in the raydiag config.",
        "zh": "还没有配置任何集群；请在 raydiag 配置的 `clusters:` 下添加。",
    },
    "slack.unknown_cluster": {
        "en": "I don't know a cluster called `{name}`.",
        "zh": "没有名为 `{name}` 的集群。",
    },
    "slack.bad_namespace": {
        "en": "`{name}` is not a valid namespace name.",
        "zh": "`{name}` 不是合法的命名空间名。",
    },
    "slack.invalid": {
        "en": "I could not read that: `{text}`.",
        "zh": "无法理解这条命令：`{text}`。",
    },
    "slack.busy": {
        "en": "raydiag is busy with other diagnoses right now; please try again in a minute.",
        "zh": "raydiag 正在处理其他诊断，请一分钟后再试。",
    },
    "slack.working": {
        "en": "Diagnosing `{cluster}`…",
        "zh": "正在诊断 `{cluster}`……",
    },
    "slack.joined": {
        "en": "A diagnosis of `{cluster}` was already running; its answer is posted in this channel.",
        "zh": "`{cluster}` 的诊断已在进行中，结果已发在本频道。",
    },
    "slack.failed": {
        "en": "The diagnosis of `{cluster}` failed: {error}",
        "zh": "`{cluster}` 的诊断失败：{error}",
    },
    "slack.not_in_channel": {
        "en": "I can't post in this channel; invite me with `/invite @raydiag` and try again.",
        "zh": "我无法在本频道发言；请先 `/invite @raydiag` 再试。",
    },
    "slack.refused_probe": {
        "en": "Only people on the probe allow-list may start work on `{cluster}`; nothing was started.",
        "zh": "只有探针白名单中的成员可以在 `{cluster}` 上启动任务；本次未启动任何操作。",
    },
    "slack.refused_cluster": {
        "en": "That button names a cluster that is not configured; nothing was started.",
        "zh": "该按钮指向一个未配置的集群；本次未启动任何操作。",
    },
    "slack.probe_busy": {
        "en": "A probe is already running on `{cluster}`; wait for its result in the thread.",
        "zh": "`{cluster}` 上已有探针在运行，请在回复串里等待结果。",
    },
    "slack.pressed": {
        "en": "<@{user}> pressed *{action}* for `{cluster}`.",
        "zh": "<@{user}> 在 `{cluster}` 上点击了 *{action}*。",
    },
    "slack.muted": {
        "en": "<@{user}> muted unasked posts about `{cluster}` for {hours:g} h.",
        "zh": "<@{user}> 将 `{cluster}` 的主动推送静音 {hours:g} 小时。",
    },
    "slack.rerun": {"en": "Re-run", "zh": "重新诊断"},
    "slack.gpu_probe": {"en": "GPU probe", "zh": "GPU 探针"},
    "slack.head_check": {"en": "head endpoint check", "zh": "head 端点检查"},
    "slack.ray_status": {"en": "ray status", "zh": "ray status"},
    "note.no known output format recognised": {
        "en": "No known output format was recognised in the input.",
        "zh": "输入中没有识别出已知的输出格式。",
    },
}


def say(key: str, lang: Lang, **values: object) -> str:
    entry = _MESSAGES.get(key)
    if entry is None:
        return key
    return entry[lang].format(**values) if values else entry[lang]


def known(key: str) -> bool:
    return key in _MESSAGES
