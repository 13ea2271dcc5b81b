"""``raydiag verify`` for a terminal: the verification order of one cluster, step by step, with each
pool's probe, in English or Chinese. The words are the Slack message's (``bot.render.messages``),
without Slack's markup; the facts are ``bot.probes.verification``'s results.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence

from bot.probes.verification import ANY_POOL, STEP_CAUSES, PoolResult, StepResult, passed
from bot.render.messages import Lang, say

_MARK = {"ok": "ok  ", "failed": "FAIL", "unknown": " ?  ", "skipped": " -  "}


def _plain(text: str) -> str:
    return text.replace("*", "")


def pool_name(pool: str, lang: Lang) -> str:
    """``any GPU`` or ``accelerator_type:A100``, in backticks (mrkdwn, and readable as text)."""
    return say("verify.pool.any", lang) if pool == ANY_POOL else say("verify.pool.typed", lang, pool=pool)


def verdict_sentence(
    result: PoolResult, lang: Lang, timeout_s: float, quote: Callable[[str], str] = str
) -> str:
    """What a pool's verdict means, with its facts filled in (each passed through ``quote``: Slack
    escapes them; a terminal takes them as they are)."""
    detail = result.detail
    return say(
        f"verify.verdict.{result.verdict}",
        lang,
        timeout=f"{timeout_s:g}",
        pod=quote(detail.get("pod", "?")),
        kubernetes_model=quote(detail.get("kubernetes_model", "?")),
        devices=quote(detail.get("cuda_visible_devices", "") or "∅"),
        error=quote(detail.get("error", "?")[:300]),
    )


def render_verify_text(
    cluster: str,
    versions: Mapping[str, str],
    steps: Sequence[StepResult],
    probes: Sequence[PoolResult],
    lang: Lang,
    timeout_s: float,
) -> str:
    result = say("verify.upgrade.passed" if passed(steps) else "verify.upgrade.failed", lang)
    lines = [f"raydiag verify {cluster}: {result}", ""]
    if versions:
        lines.append(
            " · ".join(f"{say(f'verify.part.{part}', lang)} {value}" for part, value in versions.items())
        )
        lines.append("")
    for number, step in enumerate(steps, 1):
        detail = ", ".join(f"{key} {value}" for key, value in step.detail.items())
        lines.append(
            f"{number}. [{_MARK.get(step.status, '    ')}] {_plain(say(f'verify.step.{step.step}', lang))}: "
            f"{say(f'verify.status.{step.status}', lang)}" + (f" ({detail})" if detail else "")
        )
    if probes:
        lines.append("")
        for probe in probes:
            where = f" @ {probe.node}" if probe.node else ""
            lines.append(
                f"  {_plain(pool_name(probe.pool, lang))}: {probe.verdict}{where}, {probe.elapsed_s:.1f}s"
            )
            if probe.verdict != "ran":
                lines.append(f"    {verdict_sentence(probe, lang, timeout_s)}")
    failed = [step for step in steps if step.status == "failed"]
    lines.append("")
    if failed:
        causes = ", ".join(str(c) for c in STEP_CAUSES.get(failed[0].step, ()))
        step_name = _plain(say(f"verify.step.{failed[0].step}", lang))
        lines.append(say("verify.upgrade.first_failed", lang, step=step_name, causes=causes))
    else:
        lines.append(say("verify.upgrade.all_passed", lang))
    return "\n".join(lines).replace("`", "") + "\n"


def render_verify_json(
    cluster: str, versions: Mapping[str, str], steps: Sequence[StepResult], probes: Sequence[PoolResult]
) -> str:
    """The same result for scripts: ``passed``, versions, each step and each pool's verdict."""
    return json.dumps(
        {
            "cluster": cluster,
            "passed": passed(steps),
            "versions": dict(versions),
            "steps": [{"step": s.step, "status": s.status, "detail": dict(s.detail)} for s in steps],
            "probes": [
                {
                    "pool": p.pool,
                    "verdict": p.verdict,
                    "node": p.node,
                    "elapsed_s": p.elapsed_s,
                    "detail": dict(p.detail),
                }
                for p in probes
            ],
        },
        indent=2,
        ensure_ascii=False,
    )


__all__ = ["pool_name", "render_verify_json", "render_verify_text", "verdict_sentence"]
