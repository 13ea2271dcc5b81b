"""One GPU probe per pool, side by side: what the scheduled re-verification and
``raydiag verify`` run (``bot.probes.verification`` judges the results).

Each pool's probe is the one-GPU probe job of ``bot.probes.gpu`` (its task holds a GPU for
milliseconds; the job is stopped and waited for at the time limit), so a cluster with four GPU
types is probed in about one probe's time. Never raises for anything a cluster does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from bot.diagnosis import RayGpuNode
from bot.probes.gpu import GpuProbeResult, run_gpu_probe
from bot.probes.verification import PoolResult, gpu_type, verdict_of

MAX_PARALLEL = 4
ProbeRun = Callable[..., GpuProbeResult]


def probe_pools(
    dashboard_url: str,
    pools: Sequence[str],
    nodes: Sequence[RayGpuNode],
    *,
    timeout_s: float,
    start_timeout_s: float | None = None,
    poll_s: float = 1.0,
    probe: ProbeRun = run_gpu_probe,
    each: Callable[[PoolResult], object] | None = None,
) -> list[PoolResult]:
    """Probe every pool (``any`` and accelerator types) of one cluster; results in ``pools`` order.
    ``nodes`` are the Ray GPU nodes of the same diagnosis; ``each`` sees every result as it ends."""
    if not pools:
        return []

    def run(pool: str) -> PoolResult:
        found = probe(
            dashboard_url,
            gpu_type=gpu_type(pool),
            timeout_s=timeout_s,
            start_timeout_s=start_timeout_s,
            poll_s=poll_s,
        )
        result = verdict_of(found, pool, nodes)
        if each is not None:
            each(result)
        return result

    with ThreadPoolExecutor(min(MAX_PARALLEL, len(pools)), thread_name_prefix="raydiag-probe") as runs:
        return list(runs.map(run, pools))


__all__ = ["MAX_PARALLEL", "ProbeRun", "probe_pools"]
