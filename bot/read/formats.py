"""The vocabulary of formats: what a reader recognises and what a corpus case is tagged with.

A :class:`Format` is one kind of output a reader recognises, with the label a paste's notes print
(``ray status``, ``kubectl get pods``). Each belongs to one :class:`Tag`, the coarser name the
corpus (``tests/corpus/*/expected.json``) and the accuracy eval use, so the eval can say per tag
how often raydiag names the right cause and whether it read the text in that format at all.
A reader declares its formats beside its code; the tags are declared only here.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Tag(StrEnum):
    """What kind of text a case is, as people paste it."""

    RAY_STATUS = "ray-status"
    RAY_STATUS_VERBOSE = "ray-status-verbose"
    RAY_DRIVER_WARNING = "ray-driver-warning"
    RAY_LOG = "ray-log"
    RAY_EXCEPTION = "ray-exception"
    RAY_SERVE = "ray-serve"
    RAY_TUNE_STATUS = "ray-tune-status"
    # ``ray list``, the state API and dashboard answers, and Python printouts of them.
    RAY_API_OUTPUT = "ray-api-output"
    # A ``ray up`` cluster config or KubeRay's node types as the autoscaler sees them.
    RAY_CLUSTER_CONFIG = "ray-cluster-config"
    KUBECTL_DESCRIBE_POD = "kubectl-describe-pod"
    KUBECTL_DESCRIBE_NODE = "kubectl-describe-node"
    KUBECTL_GET = "kubectl-get"
    KUBECTL_EVENTS = "kubectl-events"
    SCHEDULER_MESSAGE = "scheduler-message"
    # A Kubernetes or KubeRay object, as YAML or JSON, whole or a fragment of it.
    K8S_OBJECT_YAML = "k8s-object-yaml"
    CLUSTER_AUTOSCALER_EVENT = "cluster-autoscaler-event"
    CLUSTER_AUTOSCALER_LOG = "cluster-autoscaler-log"
    KARPENTER = "karpenter"
    GKE_AUTOSCALER = "gke-autoscaler"
    GPU_STACK_LOG = "gpu-stack-log"
    NVIDIA_SMI = "nvidia-smi"
    KUBERAY_OPERATOR_LOG = "kuberay-operator-log"
    KUEUE = "kueue"
    PYTHON_CODE = "python-code"
    PROSE = "prose"
    TRACEBACK = "traceback"


@dataclass(frozen=True)
class Format:
    """One output format a reader recognises; ``label`` is what the paste's notes say."""

    label: str
    tag: Tag
