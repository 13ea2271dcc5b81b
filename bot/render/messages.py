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
