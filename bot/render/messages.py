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
    # "Seen before": the closest resolved public reports (bot/similar), and the finding from them.
    "heading.similar": {"en": "Seen before", "zh": "以往相似案例"},
    "similar.intro": {
        "en": "the closest resolved public reports, by the words they share with this text; "
        "a lead, not evidence",
        "zh": "与本文本用词最接近的已解决公开报告；仅供参考，不是证据",
    },
    "similar.healthy": {"en": "healthy", "zh": "健康"},
    "similar.score": {"en": "similarity {score}", "zh": "相似度 {score}"},
    "similar.title": {
        "en": "Reads like {agreeing} of {shown} resolved reports of cause {cause}",
        "zh": "与 {shown} 个已解决报告中的 {agreeing} 个相似，它们的原因是 {cause}",
    },
    "similar.explanation": {
        "en": "No reader recognised anything in this text, so raydiag has no finding of its own. The "
        "closest resolved public reports it knows, compared by the words they share with this text, "
        "agree on cause {cause}. That comes from likeness to those reports, not from anything read in "
        "this text: treat it as a lead to check, never as a diagnosis.",
        "zh": "没有任何解析器识别出本文本中的内容，因此 raydiag 自身没有发现。按与本文本共有的词语比较，"
        "它所知的最接近的已解决公开报告一致指向原因 {cause}。这一结论来自与那些报告的相似性，"
        "而不是从本文本中读出的内容：请把它当作待核实的线索，而不是诊断。",
    },
    "similar.fix.1": {
        "en": "Read how the reports below were resolved and check whether the same holds for you.",
        "zh": "阅读下面这些报告是如何解决的，核实你的情况是否相同。",
    },
    "similar.fix.2": {
        "en": "Paste the output that shows each layer (`kubectl describe pod` of a Pending Pod, "
        "`kubectl get events`, `ray status -v`) so raydiag can judge from the text itself.",
        "zh": "粘贴能反映各层状态的输出（Pending Pod 的 `kubectl describe pod`、`kubectl get events`、"
        "`ray status -v`），让 raydiag 根据文本本身做出判断。",
    },
    "similar.verify.1": {
        "en": "A paste with that output gets a finding from a rule, its evidence quoted from your text.",
        "zh": "粘贴这些输出后，会得到由规则给出的发现，证据直接引用你的文本。",
    },
    "similar.evidence": {
        "en": "{address}: cause {cause}, similarity {score}",
        "zh": "{address}：原因 {cause}，相似度 {score}",
    },
    "similar.evidence_source": {"en": "resolved report {id}", "zh": "已解决报告 {id}"},
    "unknown": {"en": "(unknown)", "zh": "（未知）"},
    # Phrases composed from a finding's atoms (bot/render/localize.py), never written by a detector.
    "phrase.list": {"en": "; ", "zh": "；"},
    "phrase.details": {"en": ", ", "zh": "，"},
    "phrase.none": {"en": "none", "zh": "无"},
    "phrase.and": {"en": " and ", "zh": " 和 "},
    "phrase.ray_version": {"en": "Ray {version}", "zh": "Ray {version}"},
    "phrase.this_ray_release": {"en": "This Ray release", "zh": "这个 Ray 版本"},
    "phrase.init_unfinished": {"en": "init containers not finished", "zh": "init 容器尚未完成"},
    "phrase.side.cluster": {"en": "the cluster", "zh": "集群"},
    "phrase.side.head": {"en": "the head", "zh": "head"},
    "phrase.side.worker": {"en": "the workers", "zh": "worker"},
    "phrase.side.client": {"en": "the client", "zh": "客户端"},
    "phrase.none_given": {"en": "none given", "zh": "未给出"},
    "phrase.none_shown": {"en": "none shown", "zh": "未显示"},
    "phrase.not_collected": {"en": "not collected", "zh": "未采集"},
    "phrase.no_plugin_pod": {
        "en": "no device-plugin Pod on this node",
        "zh": "该节点上没有 device-plugin Pod",
    },
    "phrase.launch_failed": {"en": "launch failed", "zh": "节点启动失败"},
    "phrase.autoscaler_error": {"en": "autoscaler error", "zh": "autoscaler 报错"},
    "phrase.launch_timeout": {"en": "nodes did not come up in time", "zh": "节点没有按时就绪"},
    "phrase.placement_group": {"en": "placement group {bundles}", "zh": "放置组 {bundles}"},
    "phrase.placement_group_strategy": {
        "en": "placement group {bundles} ({strategy})",
        "zh": "放置组 {bundles}（{strategy}）",
    },
    "phrase.nodes": {"en": "{count} node(s)", "zh": "{count} 个节点"},
    "phrase.nodes_total": {
        "en": "{count} node(s), {total} {resource} in total",
        "zh": "{count} 个节点，合计 {total} 个 {resource}",
    },
    "phrase.actor": {"en": "actor", "zh": "Actor"},
    "phrase.actor.name": {"en": "name={name}", "zh": "name={name}"},
    "phrase.actor.job": {"en": "job {job}", "zh": "作业 {job}"},
    "phrase.actor.detached": {"en": "detached", "zh": "分离式"},
    "phrase.actor.node_ip": {"en": "on {node_ip}", "zh": "位于 {node_ip}"},
    "phrase.holder.actor": {
        "en": "{who} ({details}) holds {resources}",
        "zh": "{who}（{details}）占着 {resources}",
    },
    # An actor known only by its class (one the pasted code creates).
    "phrase.holder.actor_plain": {"en": "{who} holds {resources}", "zh": "{who} 占着 {resources}"},
    "phrase.holder.reserved": {
        "en": "placement groups reserve {reserved} {resource} ({used} used of {reserved})",
        "zh": "放置组预留了 {reserved} 个 {resource}（其中 {used} 个在用）",
    },
    "phrase.holder.placement_group": {
        "en": "placement group {name} {bundles} ({strategy})",
        "zh": "放置组 {name} {bundles}（{strategy}）",
    },
    "phrase.holders.unlisted": {"en": "not listed", "zh": "未列出"},
    "phrase.holders.not-in-snapshot": {"en": "not listed in the snapshot", "zh": "快照中没有列出"},
    "phrase.not_applicable": {"en": "n/a", "zh": "不适用"},
    "phrase.admitted": {"en": "admitted", "zh": "已准入"},
    "phrase.shortfall": {
        "en": "{resource}: needs {needed}, {free} free of {allocatable} allocatable",
        "zh": "{resource}：需要 {needed}，allocatable {allocatable} 中空闲 {free}",
    },
    "phrase.reason_on_nodes": {"en": "{reason} on {count} node(s)", "zh": "{count} 个节点上 {reason}"},
    "phrase.closest_node": {"en": "{node} ({lacking})", "zh": "{node}（{lacking}）"},
    "phrase.largest_node.allocatable": {
        "en": "{node} ({amount} {resource} allocatable)",
        "zh": "{node}（allocatable {amount} {resource}）",
    },
    "phrase.largest_node.free": {
        "en": "{node} ({amount} {resource} free)",
        "zh": "{node}（空闲 {amount} {resource}）",
    },
    "phrase.free_across": {
        "en": "{amount} {resource} free across {count} node(s)",
        "zh": "{count} 个节点上共 {amount} {resource}",
    },
    "phrase.scale_up": {"en": "{group} {current}→{new}", "zh": "{group} {current}→{new}"},
    "phrase.scale_up_max": {
        "en": "{group} {current}→{new} (max {max})",
        "zh": "{group} {current}→{new}（上限 {max}）",
    },
    "phrase.plugin_pod": {"en": "{name}: {phase}", "zh": "{name}：{phase}"},
    "phrase.plugin_pod_unready": {"en": "{name}: {phase}, not Ready", "zh": "{name}：{phase}，未 Ready"},
    "phrase.kueue_queue": {"en": "Kueue LocalQueue {queue}", "zh": "Kueue LocalQueue {queue}"},
    "phrase.with_restarts": {"en": "{reason}, {count} restart(s)", "zh": "{reason}，重启 {count} 次"},
    # Evidence lines raydiag writes itself (Evidence.phrase / source_phrase, bot/diagnosis.py);
    # quotes of a tool's output are never worded here.
    "evidence.demand_pending": {"en": "{demand}: {count} pending", "zh": "{demand}：{count} 个在等待"},
    "evidence.ray_node": {
        "en": "total {total}; available {available}",
        "zh": "总量 {total}；可用 {available}",
    },
    "evidence.ray_node_unknown": {"en": "total {total}; available unknown", "zh": "总量 {total}；可用量未知"},
    "evidence.used_of_total": {
        "en": "{resource} {used}/{total} used",
        "zh": "{resource} 已用 {used}/{total}",
    },
    "evidence.no_accelerator_totals": {
        "en": "no accelerator_type: totals listed",
        "zh": "没有列出 accelerator_type: 总量",
    },
    "evidence.reserved_in_groups": {
        "en": "{used} used of {reserved} reserved in placement groups",
        "zh": "放置组预留了 {reserved}，其中 {used} 在用",
    },
    "evidence.actor_job_finished": {
        "en": "ALIVE; job {job} has finished; holds {resources}",
        "zh": "ALIVE；作业 {job} 已结束；仍占着 {resources}",
    },
    "evidence.actor_detached": {
        "en": "ALIVE; detached, while other work waits; holds {resources}",
        "zh": "ALIVE；分离式 Actor，其他任务在等待时仍占着 {resources}",
    },
    "evidence.fit_replay": {"en": "raydiag fit replay", "zh": "raydiag 调度重放"},
    "evidence.stated": {"en": "user's words", "zh": "用户的描述"},
    "evidence.largest_node_gpus": {"en": "largest node: {count} GPU", "zh": "最大的节点：{count} 个 GPU"},
    "evidence.cluster_gpus": {"en": "{count} GPU in the whole cluster", "zh": "整个集群共 {count} 个 GPU"},
    "evidence.ray_gpus_registered": {"en": "Ray registers {count} GPU", "zh": "Ray 登记了 {count} 个 GPU"},
    "evidence.ray_node_count": {"en": "{count} Ray node(s)", "zh": "{count} 个 Ray 节点"},
    "evidence.fit_replay_agrees": {
        "en": "raydiag fit replay (agrees with the scheduler)",
        "zh": "raydiag 调度重放（与调度器一致）",
    },
    "evidence.fit_replay_differs": {
        "en": "raydiag fit replay (differs from the last scheduler message: the cluster has changed)",
        "zh": "raydiag 调度重放（与调度器最近一条消息不同：集群已经变化）",
    },
    "evidence.nodes_alive": {
        "en": "{count} node(s) alive, the head included",
        "zh": "{count} 个节点存活（含 head）",
    },
    "evidence.head_restarting": {
        "en": "{status}, Ready False ({reason}, {count} restart(s))",
        "zh": "{status}，Ready False（{reason}，重启 {count} 次）",
    },
    "evidence.pod_running_ready": {
        "en": "phase Running, Ready {ready}, IP {ip}",
        "zh": "phase Running，Ready {ready}，IP {ip}",
    },
    "evidence.ray_nodes_ips": {"en": "{count} alive; IPs: {ips}", "zh": "{count} 个存活；IP：{ips}"},
    "evidence.ray_nodes_no_ips": {"en": "{count} alive; IPs: none", "zh": "{count} 个存活；没有 IP"},
    "evidence.pod_line": {"en": "{status}, {ready}", "zh": "{status}，{ready}"},
    "evidence.pod_line_ip": {"en": "{status}, {ready}, IP {ip}", "zh": "{status}，{ready}，IP {ip}"},
    "evidence.pod_line_restarts": {
        "en": "{status}, {ready}, {count} restart(s)",
        "zh": "{status}，{ready}，重启 {count} 次",
    },
    "evidence.pod_line_restarts_ip": {
        "en": "{status}, {ready}, {count} restart(s), IP {ip}",
        "zh": "{status}，{ready}，重启 {count} 次，IP {ip}",
    },
    "evidence.pod_not_ready": {"en": "{status}, Ready False", "zh": "{status}，Ready False"},
    "evidence.pod_phase_ready": {"en": "phase {phase}, ready {ready}", "zh": "phase {phase}，ready {ready}"},
    "evidence.selector_matches_nothing": {
        "en": "selector {selector} matches no Pod",
        "zh": "selector {selector} 没有选中任何 Pod",
    },
    "evidence.no_ready_addresses": {"en": "no ready addresses", "zh": "没有 ready 的地址"},
    "evidence.no_ready_addresses_some_not": {
        "en": "no ready addresses; not ready: {addresses}",
        "zh": "没有 ready 的地址；未 ready：{addresses}",
    },
    "evidence.http_404": {"en": "HTTP 404 on `{path}`", "zh": "`{path}` 返回 HTTP 404"},
    "evidence.init_unfinished": {
        "en": "{pod} init containers not finished",
        "zh": "{pod} 的 init 容器尚未完成",
    },
    "evidence.group_at_max": {
        "en": "declares {shape}; {current} of max {max}",
        "zh": "声明了 {shape}；当前 {current} 个，上限 {max}",
    },
    "evidence.group_vendor_gpu": {
        "en": "limits {resource}; no nvidia.com/gpu and no num-gpus",
        "zh": "limits 里是 {resource}；没有 nvidia.com/gpu，也没有 num-gpus",
    },
    "evidence.node_type_resources": {"en": "resources {shape}", "zh": "资源 {shape}"},
    "evidence.ray_node_gpus": {
        "en": "GPU total {gpus}; resources {shape}",
        "zh": "GPU 总量 {gpus}；资源 {shape}",
    },
    "evidence.kueue_not_admitted": {"en": "not admitted", "zh": "未准入"},
    "evidence.kueue_admitted": {"en": "admitted", "zh": "已准入"},
    "pasted_input": {"en": "pasted input", "zh": "粘贴的输出"},
    "truncated": {"en": "… (truncated, {count} more characters)", "zh": "…（已截断，还有 {count} 个字符）"},
    "figure.kubernetes_nodes": {"en": "Kubernetes nodes", "zh": "Kubernetes 节点"},
    "figure.gpu_nodes": {"en": "GPU nodes", "zh": "GPU 节点"},
    "figure.pods_pending": {"en": "Pods pending", "zh": "Pending 的 Pod"},
    "figure.ray_pods_running": {"en": "Ray Pods running", "zh": "运行中的 Ray Pod"},
    "figure.gpus_given_to_ray_pods": {"en": "GPUs given to Ray Pods", "zh": "分配给 Ray Pod 的 GPU"},
    "figure.ray_nodes_alive": {"en": "Ray nodes alive", "zh": "存活的 Ray 节点"},
    "figure.gpus_registered_in_ray": {"en": "GPUs registered in Ray", "zh": "Ray 登记的 GPU"},
    "figure.gpus_in_nvidia_smi": {"en": "GPUs nvidia-smi shows", "zh": "nvidia-smi 显示的 GPU"},
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
    "slack.queued": {
        "en": "Every diagnosis worker is busy; yours is queued behind {ahead} other(s) and will follow here.",
        "zh": "诊断任务都在忙；你的请求排在另外 {ahead} 个之后，完成后会发在这里。",
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
    "slack.alert_intro": {
        "en": "raydiag on this alert: cluster `{cluster}`, {because}.",
        "zh": "raydiag 对这条告警的诊断：集群 `{cluster}`，{because}。",
    },
    "slack.alert_via_label": {
        "en": "named by the alert's `{detail}` label",
        "zh": "由告警的 `{detail}` 标签指出",
    },
    "slack.alert_via_pod": {
        "en": "the alert's Pod `{detail}` belongs to it",
        "zh": "告警所指的 Pod `{detail}` 属于它",
    },
    "slack.alert_via_text": {"en": "named in the alert's text", "zh": "告警文字里提到了它"},
    "slack.alert_resolved": {
        "en": "The alert is resolved. The diagnosis above is from while it was firing.",
        "zh": "告警已恢复。上面的诊断来自告警触发期间。",
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
    "slack.refused_message": {
        "en": "raydiag's buttons only work on messages raydiag posted; nothing was started.",
        "zh": "raydiag 的按钮只对 raydiag 自己发出的消息有效；本次未启动任何操作。",
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
    # --- "Right cause?" buttons (bot/deliver/blocks/verdicts.py, bot/slack/verdict_actions.py) ---
    "verdict.question": {
        "en": "*Right cause?* raydiag said: {said}",
        "zh": "*原因对吗？* raydiag 的判断：{said}",
    },
    "verdict.said_cause": {"en": "cause {cause}, {name}", "zh": "原因 {cause}，{name}"},
    "verdict.said_nothing": {"en": "no scheduling problem", "zh": "没有调度问题"},
    "verdict.yes": {"en": "Yes, right cause", "zh": "对，原因正确"},
    "verdict.no": {"en": "No, it was something else", "zh": "不对，是别的原因"},
    "verdict.title": {"en": "Right cause?", "zh": "原因对吗？"},
    "verdict.submit": {"en": "Save", "zh": "保存"},
    "verdict.close": {"en": "Cancel", "zh": "取消"},
    "verdict.pick_label": {"en": "What was the cause?", "zh": "真正的原因是什么？"},
    "verdict.pick_placeholder": {"en": "Pick a cause", "zh": "选择一个原因"},
    "verdict.option": {"en": "{cause}. {name}", "zh": "{cause}. {name}"},
    "verdict.something_else": {"en": "Something else", "zh": "其他原因"},
    "verdict.other_label": {"en": "In a few words: what was it?", "zh": "简单说说是什么原因？"},
    "verdict.other_hint": {
        "en": 'Needed for "Something else"; kept with the diagnosis for the team\'s test corpus.',
        "zh": "选择“其他原因”时必填；会与诊断一起保存，用于团队的测试语料。",
    },
    "verdict.other_needed": {
        "en": "Say in a few words what the cause was.",
        "zh": "请简单写下真正的原因。",
    },
    "verdict.audit_right": {
        "en": "<@{user}> says raydiag named the right cause ({said}).",
        "zh": "<@{user}> 认为 raydiag 判断的原因正确（{said}）。",
    },
    "verdict.audit_cause": {
        "en": "<@{user}> says the cause was {said}, not what raydiag named.",
        "zh": "<@{user}> 认为真正的原因是{said}，而不是 raydiag 给出的判断。",
    },
    "verdict.audit_other": {
        "en": "<@{user}> says the cause was something else: “{text}”",
        "zh": "<@{user}> 认为是其他原因：“{text}”",
    },
    "verdict.unavailable": {
        "en": "Verdicts are kept in the bot's state database, and this bot has none; nothing was recorded.",
        "zh": "判断结果保存在机器人的状态数据库中，而本机器人没有配置数据库；没有记录任何内容。",
    },
    "verdict.refused": {
        "en": "Only people on the probe allow-list may give verdicts; nothing was recorded.",
        "zh": "只有探针白名单中的成员可以提交判断；没有记录任何内容。",
    },
    "verdict.gone": {
        "en": "I no longer keep that diagnosis (its message, or the message it answered, was deleted); "
        "nothing was recorded.",
        "zh": "这条诊断已不再保存（诊断消息或它所回答的消息已被删除）；没有记录任何内容。",
    },
    "verdict.foreign": {
        "en": "That button does not belong to the diagnosis of this message; nothing was recorded.",
        "zh": "这个按钮不属于本条消息的诊断；没有记录任何内容。",
    },
    "verdict.already": {
        "en": "You already gave your verdict on this diagnosis; your first one is kept.",
        "zh": "你已经对这条诊断提交过判断；以第一次为准。",
    },
    "verdict.bad_choice": {
        "en": "That answer is not one of the causes I know; nothing was recorded.",
        "zh": "这个答案不是已知的原因之一；没有记录任何内容。",
    },
    "verdict.failed": {
        "en": "Your verdict could not be saved (the state database failed); try again later.",
        "zh": "你的判断没有保存成功（状态数据库出错）；请稍后再试。",
    },
    "note.no known output format recognised": {
        "en": "No known output format was recognised in the input.",
        "zh": "输入中没有识别出已知的输出格式。",
    },
    # --- capacity picture and health posts (bot/render/capacity*.py, bot/render/health.py) ---
    "capacity.title": {"en": "GPUs of {cluster}, layer by layer", "zh": "{cluster} 的 GPU，逐层看"},
    "capacity.stage.allocatable": {"en": "Allocatable on Kubernetes nodes", "zh": "Kubernetes 节点可分配"},
    "capacity.stage.given_to_ray_pods": {"en": "Given to Ray Pods", "zh": "已分配给 Ray Pod"},
    "capacity.stage.registered_in_ray": {"en": "Registered in Ray", "zh": "已在 Ray 中登记"},
    "capacity.stage.in_use": {"en": "In use by actors/tasks", "zh": "被 actor/任务占用"},
    "capacity.stage.pending_demand": {"en": "Waiting to be placed", "zh": "等待分配的需求"},
    "capacity.column.model": {"en": "model", "zh": "型号"},
    "capacity.column.allocatable": {"en": "allocatable", "zh": "可分配"},
    "capacity.column.given_to_ray_pods": {"en": "given to Ray Pods", "zh": "给 Ray Pod"},
    "capacity.column.registered_in_ray": {"en": "registered in Ray", "zh": "Ray 登记"},
    "capacity.column.in_use": {"en": "in use", "zh": "占用"},
    "capacity.column.pending_demand": {"en": "waiting", "zh": "等待"},
    "capacity.axis": {"en": "GPUs", "zh": "GPU 数量"},
    "capacity.model.unknown": {"en": "unknown model", "zh": "型号未知"},
    "capacity.model.any": {"en": "any model", "zh": "任意型号"},
    "capacity.none": {
        "en": "Neither layer shows a GPU: no GPU node, no GPU Pod, no GPU in Ray.",
        "zh": "两层都看不到 GPU：没有 GPU 节点、没有申请 GPU 的 Pod，Ray 中也没有 GPU。",
    },
    "capacity.gap.ray": {
        "en": "{model}: {missing:g} of the {given:g} GPUs given to Ray Pods are not registered in Ray "
        "(causes 4 and 8)",
        "zh": "{model}：分配给 Ray Pod 的 {given:g} 张 GPU 中有 {missing:g} 张没有在 Ray 中登记（原因 4、8）",
    },
    "capacity.gap.kubernetes": {
        "en": "{model}: {wanted:g} GPU(s) wanted but no Ready node offers this model (causes 1, 3 and 7)",
        "zh": "{model}：需要 {wanted:g} 张 GPU，但没有就绪节点提供这种型号（原因 1、3、7）",
    },
    "capacity.gap.none": {
        "en": "Every GPU given to a Ray Pod is registered in Ray.",
        "zh": "分配给 Ray Pod 的 GPU 都已在 Ray 中登记。",
    },
    "capacity.line": {
        "en": "*{model}*: {allocatable:g} allocatable → {given:g} given to Ray Pods → {registered:g} "
        "registered in Ray → {in_use:g} in use · {waiting:g} waiting",
        "zh": "*{model}*：可分配 {allocatable:g} → 分配给 Ray Pod {given:g} → Ray 登记 {registered:g} "
        "→ 占用 {in_use:g} · 等待 {waiting:g}",
    },
    # A layer the snapshot does not hold: its figures are unknown, not zero, and no cause is drawn.
    "capacity.not_read": {"en": "not read", "zh": "未读取"},
    "capacity.stage_not_read": {"en": "{stage} (not read)", "zh": "{stage}（未读取）"},
    "capacity.gap.ray_unread": {
        "en": "Ray was not read, so whether it registered the GPUs given to Ray Pods is not known.",
        "zh": "未读取 Ray 层，无法判断分配给 Ray Pod 的 GPU 是否已在 Ray 中登记。",
    },
    "capacity.gap.kubernetes_unread": {
        "en": "Kubernetes was not read, so which GPUs its nodes offer and its Ray Pods were given "
        "is not known.",
        "zh": "未读取 Kubernetes 层，无法得知节点提供了哪些 GPU、Ray Pod 分到了哪些 GPU。",
    },
    "capacity.gap.unread": {
        "en": "Neither layer was read, so no GPU figure is known.",
        "zh": "两层都未读取，GPU 数量无从得知。",
    },
    "capacity.line.ray_unread": {
        "en": "*{model}*: {allocatable:g} allocatable → {given:g} given to Ray Pods → registered in Ray "
        "and in use: not read · {waiting:g} waiting",
        "zh": "*{model}*：可分配 {allocatable:g} → 分配给 Ray Pod {given:g} → Ray 登记、占用：未读取 "
        "· 等待 {waiting:g}",
    },
    "capacity.line.kubernetes_unread": {
        "en": "*{model}*: allocatable and given to Ray Pods: not read → {registered:g} registered in Ray "
        "→ {in_use:g} in use · {waiting:g} waiting",
        "zh": "*{model}*：可分配、分配给 Ray Pod：未读取 → Ray 登记 {registered:g} → 占用 {in_use:g} "
        "· 等待 {waiting:g}",
    },
    "capacity.line.unread": {
        "en": "*{model}*: neither layer read · {waiting:g} waiting",
        "zh": "*{model}*：两层都未读取 · 等待 {waiting:g}",
    },
    "capacity.chart": {"en": "Chart: {path}", "zh": "图表：{path}"},
    "slack.capacity_failed": {
        "en": "The GPU picture of `{cluster}` could not be drawn: {error}",
        "zh": "无法画出 `{cluster}` 的 GPU 图：{error}",
    },
    "health.title": {"en": "health", "zh": "健康状况"},
    "health.pending_none": {"en": "no Pod is Pending", "zh": "没有 Pending 的 Pod"},
    "health.pending": {
        "en": "{count} Pod(s) Pending, the oldest `{name}` for {age}",
        "zh": "{count} 个 Pod 处于 Pending，最久的 `{name}` 已等待 {age}",
    },
    "health.pending_no_age": {
        "en": "{count} Pod(s) Pending, among them `{name}`",
        "zh": "{count} 个 Pod 处于 Pending，其中有 `{name}`",
    },
    "health.gpu_nodes": {"en": "{count} GPU node(s)", "zh": "{count} 个 GPU 节点"},
    "health.model": {
        "en": "{model}: {allocatable:g} allocatable, {given:g} given to Ray Pods, {waiting:g} waiting",
        "zh": "{model}：可分配 {allocatable:g}，已分配给 Ray Pod {given:g}，等待 {waiting:g}",
    },
    "health.ray_nodes": {
        "en": "{alive} Ray node(s) alive (head included) for {ready} ready worker Pod(s)",
        "zh": "存活的 Ray 节点 {alive} 个（含 head），就绪的 worker Pod {ready} 个",
    },
    "health.gpus": {
        "en": "{registered:g} GPU(s) registered in Ray of {given:g} given to Ray Pods",
        "zh": "Ray Pod 获得 {given:g} 张 GPU，其中 {registered:g} 张已在 Ray 中登记",
    },
    "health.demands": {"en": "{count} demand(s) waiting", "zh": "{count} 项资源需求在等待"},
    "health.actors": {"en": "GPUs held by {actors}", "zh": "占用 GPU 的 actor：{actors}"},
    "health.actor": {"en": "`{name}` ({gpus:g} for {age})", "zh": "`{name}`（{gpus:g} 张，已 {age}）"},
    "health.actor_no_age": {"en": "`{name}` ({gpus:g})", "zh": "`{name}`（{gpus:g} 张）"},
    "health.more_actors": {"en": "{count} more", "zh": "另有 {count} 个"},
    "health.no_actors": {"en": "no actor holds a GPU", "zh": "没有 actor 占用 GPU"},
    "health.kubernetes_unread": {
        "en": "Pending Pods, GPU nodes and GPUs per model: not read",
        "zh": "Pending 的 Pod、GPU 节点和各型号的 GPU：未读取",
    },
    "health.ray_nodes.ray_unread": {
        "en": "Ray nodes alive: not read ({ready} ready worker Pod(s))",
        "zh": "存活的 Ray 节点：未读取（就绪的 worker Pod {ready} 个）",
    },
    "health.ray_nodes.kubernetes_unread": {
        "en": "{alive} Ray node(s) alive (head included); worker Pods: not read",
        "zh": "存活的 Ray 节点 {alive} 个（含 head），worker Pod：未读取",
    },
    "health.ray_nodes.unread": {"en": "Ray nodes alive: not read", "zh": "存活的 Ray 节点：未读取"},
    "health.gpus.ray_unread": {
        "en": "GPUs registered in Ray: not read ({given:g} given to Ray Pods)",
        "zh": "Ray 中登记的 GPU：未读取（Ray Pod 获得 {given:g} 张）",
    },
    "health.gpus.kubernetes_unread": {
        "en": "{registered:g} GPU(s) registered in Ray; GPUs given to Ray Pods: not read",
        "zh": "Ray 中登记了 {registered:g} 张 GPU，分配给 Ray Pod 的 GPU：未读取",
    },
    "health.gpus.unread": {"en": "GPUs registered in Ray: not read", "zh": "Ray 中登记的 GPU：未读取"},
    "health.demands.unread": {"en": "demands waiting: not read", "zh": "等待中的资源需求：未读取"},
    "health.actors.unread": {"en": "GPUs held by actors: not read", "zh": "占用 GPU 的 actor：未读取"},
    "health.top": {
        "en": "*Top finding:* {title} (`{code}`, {cause})",
        "zh": "*首要发现：*{title}（`{code}`，{cause}）",
    },
    "health.no_finding": {
        "en": "No warning or critical finding in the layers that were read.",
        "zh": "已读取的各层中没有警告或严重级别的发现。",
    },
    "health.scaling_up": {
        "en": "Capacity is being added right now: Pods that only just went Pending are expected to wait.",
        "zh": "集群正在扩容：刚进入 Pending 的 Pod 需要等一会儿，属于正常现象。",
    },
    "duration.days": {"en": "{days} d {hours} h", "zh": "{days} 天 {hours} 小时"},
    "duration.hours": {"en": "{hours} h {minutes} min", "zh": "{hours} 小时 {minutes} 分钟"},
    "duration.minutes": {"en": "{minutes} min", "zh": "{minutes} 分钟"},
    "duration.seconds": {"en": "{seconds} s", "zh": "{seconds} 秒"},
    # --- onboarding quiz (bot/quiz/) ---
    "quiz.title": {"en": "Onboarding quiz", "zh": "入门测验"},
    "quiz.position": {"en": "Question {number} of {total}", "zh": "第 {number} 题，共 {total} 题"},
    "quiz.from_guide": {"en": "from the guide's self-test", "zh": "出自指南的读后自测"},
    "quiz.score": {
        "en": "Score: {correct} correct of {answered} answered, {remaining} to go",
        "zh": "得分：已答 {answered} 题，答对 {correct} 题，还剩 {remaining} 题",
    },
    "quiz.correct": {"en": "Correct.", "zh": "回答正确。"},
    "quiz.incorrect": {"en": "Not quite: the answer is {letter}.", "zh": "不对，正确答案是 {letter}。"},
    "quiz.again_right": {
        "en": "You had answered this one before, and that first answer (right) is the one that counts.",
        "zh": "这道题你之前答过，计分以第一次的答案为准（答对）。",
    },
    "quiz.again_wrong": {
        "en": "You had answered this one before, and that first answer (wrong) is the one that counts.",
        "zh": "这道题你之前答过，计分以第一次的答案为准（答错）。",
    },
    "quiz.your_answer": {"en": "your answer", "zh": "你的答案"},
    "quiz.about_cause": {"en": "Cause {cause}: {name}", "zh": "原因 {cause}：{name}"},
    "quiz.about_triage": {"en": "Triage order", "zh": "排查顺序"},
    "quiz.about_verification": {"en": "Verification order after a fix", "zh": "修复后的验证顺序"},
    "quiz.cause.1": {
        "en": "Kubernetes resources insufficient or fragmented",
        "zh": "Kubernetes 资源不足或碎片化",
    },
    "quiz.cause.2": {"en": "Node constraints do not match", "zh": "节点约束不匹配"},
    "quiz.cause.3": {"en": "GPU not exposed by Kubernetes", "zh": "Kubernetes 没有暴露 GPU"},
    "quiz.cause.4": {"en": "Ray node did not register its GPUs", "zh": "Ray 节点没有登记 GPU"},
    "quiz.cause.5": {"en": "Ray logical resources held by others", "zh": "Ray 逻辑资源被其他任务占用"},
    "quiz.cause.6": {"en": "Request can never be satisfied", "zh": "请求本身永远无法满足"},
    "quiz.cause.7": {"en": "GPU type chain broken between the layers", "zh": "两层之间的 GPU 卡型链路断裂"},
    "quiz.cause.8": {"en": "Head and workers are not connected", "zh": "head 与 worker 没有连通"},
    "quiz.cause.9": {"en": "Autoscaling did not deliver", "zh": "自动伸缩没有兑现资源"},
    "quiz.cause.10": {
        "en": "Application error mistaken for scheduling",
        "zh": "把应用错误当成了调度问题",
    },
    "quiz.next": {"en": "Next question", "zh": "下一题"},
    "quiz.finished": {
        "en": "You have answered all {total} questions: {correct} correct.",
        "zh": "{total} 道题已全部答完：答对 {correct} 题。",
    },
    "quiz.restart": {"en": "Start over", "zh": "重新开始"},
    "quiz.restart_title": {"en": "Start the quiz over?", "zh": "重新开始测验？"},
    "quiz.restart_warning": {
        "en": "This clears your answers and your score on the team's list.",
        "zh": "这会清除你的答题记录，以及你在团队成绩中的得分。",
    },
    "quiz.cancel": {"en": "Cancel", "zh": "取消"},
    "quiz.refused": {
        "en": "That button does not belong to a quiz question I know; nothing was recorded.",
        "zh": "这个按钮不对应任何已知的测验题目；没有记录任何内容。",
    },
    "quiz.stats_title": {"en": "Onboarding quiz: team results", "zh": "入门测验：团队成绩"},
    "quiz.stats_line": {
        "en": "{rank}. {user}: {correct} correct of {answered} answered",
        "zh": "{rank}. {user}：已答 {answered} 题，答对 {correct} 题",
    },
    "quiz.stats_summary": {
        "en": "{people} people have taken the quiz; it has {total} questions.",
        "zh": "已有 {people} 人参加测验；题库共 {total} 题。",
    },
    "quiz.stats_more": {"en": "… and {count} more", "zh": "……另有 {count} 人"},
    "quiz.stats_empty": {"en": "Nobody has taken the quiz yet.", "zh": "还没有人做过测验。"},
    "quiz.ask": {"en": "Your answer (1-{count}, q to quit): ", "zh": "你的答案（1-{count}，q 退出）："},
    "quiz.bad_input": {
        "en": "Type a number from 1 to {count}, or q to quit.",
        "zh": "请输入 1 到 {count} 之间的数字，或输入 q 退出。",
    },
    "quiz.saved": {
        "en": "Your progress is saved; run `raydiag quiz` again to go on.",
        "zh": "进度已保存；再次运行 `raydiag quiz` 即可继续。",
    },
    "quiz.start_over_hint": {
        "en": "Run `raydiag quiz --reset` to start over.",
        "zh": "运行 `raydiag quiz --reset` 可以重新开始。",
    },
    "quiz.reset_done": {"en": "Your answers were cleared.", "zh": "你的答题记录已清除。"},
    "quiz.failed": {
        "en": "The quiz cannot reach its state database just now; please try again in a while.",
        "zh": "测验暂时无法访问状态数据库，请稍后再试。",
    },
    # --- scheduled health posts and durable state (bot/schedule/, bot/store/) ---
    "state.mute_failed": {
        "en": "The mute could not be saved (the state database did not answer); nothing was muted.",
        "zh": "静音未能保存（状态数据库没有响应），本次没有静音。",
    },
    "schedule.headline.first": {
        "en": "scheduled post `{cron}` ({timezone}); from now on it speaks only when something changes",
        "zh": "定时播报 `{cron}`（{timezone}）；此后只在情况变化时发言",
    },
    "schedule.headline.first_digest": {
        "en": "scheduled digest `{cron}` ({timezone}), posted every run",
        "zh": "定时汇总 `{cron}`（{timezone}），每次都会发送",
    },
    "schedule.headline.digest": {"en": "digest", "zh": "汇总"},
    "schedule.headline.new": {"en": "new: {title}", "zh": "新情况：{title}"},
    "schedule.headline.new_more": {
        "en": "new: {title} (and {more} more)",
        "zh": "新情况：{title}（另有 {more} 项）",
    },
    "schedule.headline.cleared": {
        "en": "{count} finding(s) of the last post cleared",
        "zh": "上次播报中的 {count} 项问题已消失",
    },
    "schedule.headline.resolved": {
        "en": "all clear: every finding of the last post is gone",
        "zh": "已恢复：上次播报中的问题都已消失",
    },
    "schedule.headline.still_pending": {
        "en": "`{name}` still pending after {minutes} min",
        "zh": "`{name}` 已 Pending 超过 {minutes} 分钟",
    },
    "schedule.headline.unresolved": {
        "en": "{title} — unresolved after {minutes} min",
        "zh": "{title}——超过 {minutes} 分钟仍未解决",
    },
    "schedule.headline.unchanged": {
        "en": "no change since {since}; figures as of {now}",
        "zh": "自 {since} 以来没有变化；数字更新于 {now}",
    },
    "schedule.mode.changes": {"en": "posts when something changes", "zh": "有变化时播报"},
    "schedule.mode.digest": {"en": "a digest every run", "zh": "每次发送汇总"},
    "schedule.added": {
        "en": "Health posts for `{cluster}` in <#{channel}>: `{cron}` ({timezone}), {mode}. "
        "Id `{id}`; next run {next}.",
        "zh": "已为 `{cluster}` 在 <#{channel}> 设置健康播报：`{cron}`（{timezone}），{mode}。"
        "编号 `{id}`；下次运行 {next}。",
    },
    "schedule.removed": {
        "en": "Schedule `{id}` removed; it posts no more.",
        "zh": "定时播报 `{id}` 已删除，不会再发送。",
    },
    "schedule.no_such": {
        "en": "There is no schedule `{id}`; `/raydiag schedule list` shows them.",
        "zh": "没有编号为 `{id}` 的定时播报；用 `/raydiag schedule list` 查看全部。",
    },
    "schedule.from_config": {
        "en": "Schedule `{id}` comes from the configuration file; remove it there and restart raydiag.",
        "zh": "定时播报 `{id}` 来自配置文件，请在配置文件中删除并重启 raydiag。",
    },
    "schedule.refused": {
        "en": "Only people on the probe allow-list may change schedules; nothing was changed.",
        "zh": "只有探针白名单中的成员可以修改定时播报；本次没有任何改动。",
    },
    "schedule.list_heading": {"en": "*Health-post schedules*", "zh": "*定时健康播报*"},
    "schedule.list_empty": {
        "en": "No health posts are scheduled. Add one with "
        "`/raydiag schedule add <cluster> <cron> [time zone] [changes|digest]`.",
        "zh": "目前没有定时健康播报。可用 "
        "`/raydiag schedule add <集群> <cron> [时区] [changes|digest]` 添加。",
    },
    "schedule.list_line": {
        "en": "`{id}` · `{cluster}` → <#{channel}> · `{cron}` {timezone} · {mode} · next {next}",
        "zh": "`{id}` · `{cluster}` → <#{channel}> · `{cron}` {timezone} · {mode} · 下次 {next}",
    },
    "schedule.list_from_config": {"en": " · from the configuration", "zh": " · 来自配置文件"},
    "schedule.never": {"en": "never", "zh": "不会再运行"},
    "schedule.store_failed": {
        "en": "Schedules cannot be read or changed right now (the state database did not answer); "
        "diagnoses still work.",
        "zh": "暂时无法读取或修改定时播报（状态数据库没有响应）；诊断功能不受影响。",
    },
    # --- re-verification on a schedule and after upgrades (bot/schedule/verify.py) ---------------
    "verify.pool.any": {"en": "any GPU", "zh": "任意 GPU"},
    "verify.pool.typed": {"en": "`accelerator_type:{pool}`", "zh": "`accelerator_type:{pool}`"},
    "verify.probe.changed": {
        "en": "*Scheduled GPU probe on `{cluster}`, {pool}:* {before} → *{after}*",
        "zh": "*`{cluster}` 的定时 GPU 探测，{pool}：* {before} → *{after}*",
    },
    "verify.probe.first": {
        "en": "*Scheduled GPU probe on `{cluster}`, {pool}:* *{after}* on its first run",
        "zh": "*`{cluster}` 的定时 GPU 探测，{pool}：* 首次运行结果为 *{after}*",
    },
    "verify.probe.again": {
        "en": "Run it again from any diagnosis thread with the GPU probe button, or read the "
        "cluster with `/raydiag {cluster}`.",
        "zh": "可以在任意诊断线程里点 GPU 探测按钮再跑一次，或用 `/raydiag {cluster}` 读取集群现状。",
    },
    "verify.verdict.ran": {
        "en": "The probe asked for one GPU and ran where Ray put it; the node under it agrees.",
        "zh": "探测任务申请 1 块 GPU 并在 Ray 分配的节点上运行，底层节点的信息也一致。",
    },
    "verify.verdict.pending": {
        "en": "No Ray node took a one-GPU task within {timeout}s; the probe was stopped and holds "
        "nothing. GPUs that Ray no longer registers (cause 4), GPUs held by other work (cause 5) or a "
        "GPU type no node registers any more (cause 7) are the usual reasons.",
        "zh": "{timeout} 秒内没有任何 Ray 节点接收这个单 GPU 任务；探测已停止，不占用资源。"
        "常见原因：Ray 不再登记这些 GPU（原因 4）、GPU 被其他任务占用（原因 5），"
        "或已没有节点登记这种 GPU 型号（原因 7）。",
    },
    "verify.verdict.wrong_node": {
        "en": "The probe ran, but on a node whose Kubernetes side disagrees with the pool: its Pod "
        "`{pod}` sits on a `{kubernetes_model}` node, or was given no GPU at all. Ray's resource "
        "declarations and the node labels no longer describe the same hardware (cause 7, or 4 for a "
        "Pod without a GPU).",
        "zh": "探测运行了，但所在节点的 Kubernetes 信息与该资源池不符：它的 Pod `{pod}` 位于 "
        "`{kubernetes_model}` 节点上，或者根本没有分到 GPU。Ray 的资源声明与节点标签描述的已不是同一种硬件"
        "（原因 7；Pod 没有 GPU 时为原因 4）。",
    },
    "verify.verdict.no_devices": {
        "en": "The probe ran but saw no GPU device (CUDA_VISIBLE_DEVICES `{devices}`): Ray hands out a "
        "GPU the container cannot use. After a driver or device-plugin change this points at the "
        "GPU stack on the node (cause 3) or at GPUs declared to Ray by hand (cause 4).",
        "zh": "探测运行了，但没有看到任何 GPU 设备（CUDA_VISIBLE_DEVICES 为 `{devices}`）："
        "Ray 分出去的 GPU 容器用不了。驱动或 device plugin 变更之后，"
        "这通常指向节点上的 GPU 软件栈（原因 3），或手工向 Ray 声明的 GPU（原因 4）。",
    },
    "verify.verdict.failed": {
        "en": "The probe job failed before it could report ({error}); it holds nothing. The worker "
        "environment is the suspect (cause 10 or 8), not GPU scheduling.",
        "zh": "探测作业在汇报结果前失败（{error}），不占用资源。可疑的是 worker 的运行环境（原因 10 或 8），"
        "而不是 GPU 调度。",
    },
    "verify.verdict.unreachable": {
        "en": "The probe could not reach the Ray dashboard ({error}); check the head Pod and its "
        "Service (cause 8).",
        "zh": "探测连不上 Ray dashboard（{error}）；请检查 head Pod 及其 Service（原因 8）。",
    },
    "verify.verdict.rejected": {
        "en": "Ray's job server refused the probe ({error}); nothing ran.",
        "zh": "Ray 的作业服务拒绝了探测（{error}），没有任何东西运行。",
    },
    "verify.upgrade.title": {
        "en": "*`{cluster}` changed:* {changes}. Verification order: *{result}*",
        "zh": "*`{cluster}` 有版本变化：* {changes}。验证顺序结果：*{result}*",
    },
    "verify.upgrade.passed": {"en": "passed", "zh": "通过"},
    "verify.upgrade.failed": {"en": "failed", "zh": "未通过"},
    "verify.upgrade.first_failed": {
        "en": "The first step that failed is where to look: {step} (causes {causes}).",
        "zh": "从第一个未通过的步骤查起：{step}（原因 {causes}）。",
    },
    "verify.upgrade.all_passed": {
        "en": "Every step the snapshot could check held after the change.",
        "zh": "版本变化之后，所有能检查的步骤都通过了。",
    },
    "verify.part.ray": {"en": "Ray", "zh": "Ray"},
    "verify.part.kuberay_operator": {"en": "KubeRay operator", "zh": "KubeRay operator"},
    "verify.part.nvidia_driver": {"en": "NVIDIA driver", "zh": "NVIDIA 驱动"},
    "verify.part.device_plugin": {"en": "device plugin", "zh": "device plugin"},
    "verify.step.pods_ready": {"en": "Pods scheduled and Ready", "zh": "Pod 已调度且 Ready"},
    "verify.step.ray_nodes": {
        "en": "`ray status` shows the nodes and GPUs",
        "zh": "`ray status` 显示应有的节点和 GPU",
    },
    "verify.step.gpu_probe": {"en": "one-GPU probe runs", "zh": "单 GPU 探测能运行"},
    "verify.step.gpu_type_probe": {
        "en": "GPU-type probes land on their nodes",
        "zh": "指定 GPU 型号的探测落到对应节点",
    },
    "verify.step.serve": {"en": "Serve applications healthy", "zh": "Serve 应用健康"},
    "verify.step.holders": {
        "en": "no leftover actor or placement group holds GPUs",
        "zh": "没有残留的 actor 或 placement group 占着 GPU",
    },
    "verify.status.ok": {"en": "ok", "zh": "通过"},
    "verify.status.failed": {"en": "failed", "zh": "未通过"},
    "verify.status.unknown": {"en": "not read", "zh": "未读取"},
    "verify.status.skipped": {"en": "nothing to check", "zh": "无需检查"},
    # `raydiag rules --format markdown` (bot/render/rules_doc.py, docs/rules.md).
    "rules_doc.title": {"en": "The rule catalogue", "zh": "规则目录"},
    "rules_doc.generated": {
        "en": "{count} rules. This page is generated from `rules/*.yaml` and `tests/cases/` by {command} "
        "({make}); change a rule or a case and run it again instead of editing the page.",
        "zh": "共 {count} 条规则。本页由 {command}（{make}）根据 `rules/*.yaml` 和 `tests/cases/` 生成；"
        "要改动请修改规则或用例后重新生成，不要直接编辑本页。",
    },
    "rules_doc.no_cases": {
        "en": "The rule cases (`tests/cases/`) are not part of this installation, so none are listed.",
        "zh": "本次安装不含规则用例（`tests/cases/`），因此没有列出用例。",
    },
    "rules_doc.no_cause": {"en": "No numbered cause", "zh": "不属于编号原因"},
    "rules_doc.col.code": {"en": "code", "zh": "编号"},
    "rules_doc.col.rule": {"en": "rule", "zh": "规则"},
    "rules_doc.col.cause": {"en": "cause", "zh": "原因"},
    "rules_doc.col.layer": {"en": "layer", "zh": "层"},
    "rules_doc.col.severity": {"en": "severity", "zh": "严重程度"},
    "rules_doc.col.reads": {"en": "reads", "zh": "读取对象"},
    "rules_doc.col.fires": {"en": "fires cases", "zh": "应触发的用例"},
    "rules_doc.col.quiet": {"en": "quiet cases", "zh": "应保持安静的用例"},
    "rules_doc.stage": {"en": "stage", "zh": "阶段"},
    "rules_doc.priority": {"en": "priority", "zh": "优先级"},
    "rules_doc.detector": {"en": "detector", "zh": "检测器"},
    "rules_doc.params": {"en": "parameters", "zh": "参数"},
    "rules_doc.patterns": {"en": "patterns over a tool's output", "zh": "匹配工具输出的模式"},
    "rules_doc.retold": {"en": "patterns over a person's retelling", "zh": "匹配用户转述的模式"},
    "rules_doc.exclude": {"en": "lines left to other rules", "zh": "留给其他规则的行"},
    "rules_doc.supersedes": {"en": "supersedes", "zh": "取代"},
    "rules_doc.formats": {"en": "formats its firing cases are read as", "zh": "应触发用例被识别出的格式"},
    "rules_doc.kind.scenario": {"en": "collected snapshot (scenario)", "zh": "采集的快照（场景）"},
    "rules_doc.kind.manifest": {"en": "manifest (raydiag lint)", "zh": "清单（raydiag lint）"},
}


def say(key: str, lang: Lang, **values: object) -> str:
    entry = _MESSAGES.get(key)
    if entry is None:
        return key
    return entry[lang].format(**values) if values else entry[lang]


def known(key: str) -> bool:
    return key in _MESSAGES
