"""Safe probes behind the Slack buttons: small, bounded checks that return facts, not prose.

- ``bot.probes.gpu.run_gpu_probe`` submits a one-GPU task through the Ray Job Submission API and
  reports where it ran and what GPU it saw; the job always ends (it is stopped on timeout).
- ``bot.probes.head.check_head`` reads the head Service and its endpoints and TCP-connects to the
  GCS, dashboard and client ports.
- ``bot.probes.status.ray_status_text`` fetches the dashboard's ``ray status`` text.

Every result carries an ``outcome`` code; the sentences a person reads for each code are here, in
English and Chinese, so that the renderers (``bot.render``, ``bot.slack``) never invent them. The
submodules are imported on demand: importing this package loads neither Ray nor Kubernetes.
"""

from __future__ import annotations

from typing import Literal

Outcome = Literal["ran", "pending_timeout", "rejected", "unreachable", "failed"]
OUTCOMES: tuple[Outcome, ...] = ("ran", "pending_timeout", "rejected", "unreachable", "failed")

HeadVerdict = Literal["ok", "no_service", "no_endpoints", "pod_not_ready", "port_unreachable", "unknown"]

# What the outcome of the one-GPU probe means for the person who pressed the button.
PROBE_MESSAGES: dict[Outcome, dict[str, str]] = {
    "ran": {
        "en": (
            "The probe task asked for one GPU and got it: Ray can place GPU work on this cluster, and the "
            "node id, IP and CUDA_VISIBLE_DEVICES above show where it landed. If your own task or actor "
            "still waits, the cluster's declarations are not the problem; compare what your actor "
            "requests (GPU count, custom resources, placement-group bundles) with what is free now, and "
            "look for live actors or placement groups that hold the GPUs (cause 5)."
        ),
        "zh": (
            "探测任务申请了 1 块 GPU 并成功运行：这个集群能够调度 GPU 任务，"
            "上面的节点 ID、IP 和 CUDA_VISIBLE_DEVICES 说明了它落在哪里。"
            "如果你自己的任务或 actor 仍在等待，问题不在集群的资源声明；"
            "请把你的 actor 申请的资源（GPU 数量、自定义资源、placement group 的 bundle）"
            "与当前空闲的资源对比，并找出占着 GPU 的存活 actor 或 placement group（原因 5）。"
        ),
    },
    "pending_timeout": {
        "en": (
            "The probe task stayed pending until the time limit, so it was stopped and holds nothing now. "
            "No Ray node could take a plain one-GPU task (of the requested GPU type): the resources are "
            "most likely declared wrongly. Check that every GPU worker registered its GPUs with Ray "
            "(cause 4), that free GPUs are not all held by other actors or placement groups (cause 5), "
            "that no request is larger than any single node (cause 6), and that the GPU type the work asks "
            "for is one a Ray node actually registers (cause 7)."
        ),
        "zh": (
            "探测任务一直处于 Pending 直到超时，已被停止，现在不占用任何资源。"
            "没有任何 Ray 节点能接收一个普通的单 GPU 任务（或指定 GPU 型号的任务），"
            "最可能是资源声明有误。请检查：每个 GPU worker 是否向 Ray 登记了 GPU（原因 4）；"
            "空闲 GPU 是否都被其他 actor 或 placement group 占用（原因 5）；"
            "是否有请求超过任何单个节点的容量（原因 6）；"
            "任务要求的 GPU 型号是否真有 Ray 节点登记（原因 7）。"
        ),
    },
    "rejected": {
        "en": (
            "The Ray job server refused the probe before it started, so nothing ran and nothing is held. "
            "Read the error above: a Ray version without the Jobs API, an authentication proxy in front "
            "of the dashboard, or a submission id that already exists."
        ),
        "zh": (
            "Ray 的作业服务在探测开始前就拒绝了提交，因此没有任何东西运行，也没有占用资源。请查看上面的错误："
            "Ray 版本不支持 Jobs API、dashboard 前面有认证代理，或者提交 ID 已存在。"
        ),
    },
    "unreachable": {
        "en": (
            "The probe could not reach the Ray dashboard, so it could not submit anything. Check that the "
            "head Pod is Ready, that its Service has endpoints and that port 8265 is reachable from the bot "
            "(cause 8); the head check button tests exactly that."
        ),
        "zh": (
            "探测无法连接 Ray dashboard，因此什么也没有提交。请检查 head Pod 是否 Ready、它的 Service 是否有 "
            "endpoints，以及机器人能否访问 8265 端口（原因 8）；“检查 head” 按钮正是做这项检查。"
        ),
    },
    "failed": {
        "en": (
            "The probe job started but failed, so it holds nothing now. The last log lines above say why: "
            "often the worker image cannot import Ray or a CUDA library, or the driver could not connect "
            "to the cluster. That is a problem of the environment (cause 10 or 8), not of GPU scheduling."
        ),
        "zh": (
            "探测作业已启动但失败了，现在不占用任何资源。上面的最后几行日志说明了原因："
            "常见的是 worker 镜像无法导入 Ray 或 CUDA 库，或者 driver 连不上集群。"
            "这是运行环境的问题（原因 10 或 8），而不是 GPU 调度问题。"
        ),
    },
}

# What the head check found.
HEAD_VERDICT_MESSAGES: dict[HeadVerdict, dict[str, str]] = {
    "ok": {
        "en": "The head Service has a ready endpoint and its GCS, dashboard and client ports answer.",
        "zh": "head Service 有就绪的 endpoint，GCS、dashboard 和 client 端口都能连通。",
    },
    "no_service": {
        "en": (
            "The head Service does not exist, so workers and the bot have no address for the head "
            "(cause 8). KubeRay creates it as <raycluster>-head-svc; check the operator's logs."
        ),
        "zh": (
            "head Service 不存在，worker 和机器人都找不到 head 的地址（原因 8）。KubeRay 会创建名为 "
            "<raycluster>-head-svc 的 Service；请查看 operator 的日志。"
        ),
    },
    "no_endpoints": {
        "en": (
            "The head Service has no endpoints: its selector matches no running head Pod, so nothing "
            "behind the Service answers and workers cannot join (cause 8). Compare the Service selector "
            "with the head Pod's labels."
        ),
        "zh": (
            "head Service 没有 endpoints：它的 selector 没有匹配到运行中的 head Pod，Service 后面没有任何进程"
            "应答，worker 也无法加入（原因 8）。请对比 Service 的 selector 和 head Pod 的标签。"
        ),
    },
    "pod_not_ready": {
        "en": (
            "The head Service points at a head Pod that is not Ready; Ray on the head may still be "
            "starting or failing (cause 8). Read the head Pod's events and logs."
        ),
        "zh": (
            "head Service 指向的 head Pod 没有 Ready；head 上的 Ray 可能仍在启动或启动失败（原因 8）。"
            "请查看 head Pod 的事件和日志。"
        ),
    },
    "port_unreachable": {
        "en": (
            "At least one head port did not answer from the bot (see the table): the process is not "
            "listening, or a NetworkPolicy or firewall blocks the path (cause 8)."
        ),
        "zh": (
            "至少有一个 head 端口从机器人这里连不通（见表格）：进程没有监听，或者 NetworkPolicy、防火墙挡住了"
            "访问路径（原因 8）。"
        ),
    },
    "unknown": {
        "en": "The head could not be checked: Kubernetes could not be read and no dashboard URL was given.",
        "zh": "无法检查 head：读取 Kubernetes 失败，且没有提供 dashboard 地址。",
    },
}

__all__ = ["HEAD_VERDICT_MESSAGES", "OUTCOMES", "PROBE_MESSAGES", "HeadVerdict", "Outcome"]
