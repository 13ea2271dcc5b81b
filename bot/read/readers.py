"""Every format a paste is read in, in the order the scan asks: a new format is one line here.

The order is most specific first. A shell prompt names the namespace of the rows below it; Python
code starts only at a line no other format begins with (``import ray``, ``@ray.remote``, ``def``),
and goes first so that its dict literals and keyword lines are not taken for JSON or YAML; ``nvidia-smi``
starts only at its own header, ``-L`` rows, a CSV query header or its failure lines; a JSON
or YAML document is tried before the line-based formats its lines could pass for; ``ray status`` and
the Ray printouts before ``kubectl describe``, whose ``Key: value`` lines they share; the
``kubectl get`` tables last, each told apart by its header row. Lines no reader claims are read by
:mod:`bot.read.loose_lines`, the fallback for log lines, messages and prose.
"""

from __future__ import annotations

from bot.read import (
    cluster_summary,
    documents,
    kubectl_describe,
    kubectl_events,
    kubectl_tables,
    kueue_tables,
    legacy_autoscaler,
    nvidia_smi,
    python_code,
    ray_state_tables,
    ray_status_block,
    shell,
)
from bot.read.protocol import Reader

READERS: tuple[Reader, ...] = (
    shell.READER,
    python_code.READER,
    nvidia_smi.READER,
    documents.JSON_READER,
    cluster_summary.READER,
    legacy_autoscaler.READER,
    ray_status_block.READER,
    ray_state_tables.READER,
    documents.YAML_READER,
    kubectl_describe.READER,
    kubectl_tables.PODS_READER,
    kubectl_events.TABLE_READER,
    kueue_tables.READER,
    kubectl_tables.RAY_RESOURCES_READER,
)
