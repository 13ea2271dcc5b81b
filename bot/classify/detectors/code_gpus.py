"""CUDA finds no GPU inside work that never asked Ray for one.

Ray gives a task or actor the GPUs it requested and hides the rest: in a worker whose task or actor
requests none it sets ``CUDA_VISIBLE_DEVICES`` to an empty string (unless
``RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES`` is set), so PyTorch there says ``No CUDA GPUs are
available`` or ``torch.cuda.is_available()`` is False, while the same code on the driver, or the
node's ``ray status``, shows the GPUs. That is the application's declaration, not the node's
registration: the fix is ``num_gpus`` on the remote function or actor.

So the reading is a join of two things in one paste: CUDA's own "no device" error (the rule's
``patterns``), and code whose remote functions and actors declare no GPU while nothing in it asks
for one (:func:`bot.read.python_code.work_without_gpus`). Code that does ask for GPUs and still
gets the error is a different question (a driver or runtime fault, causes 3 and 4), never claimed
here; so is the error with no code beside it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import field

from bot.catalogue import Rule
from bot.classify.context import Context
from bot.classify.detectors.text import alternation, check_patterns
from bot.classify.registry import Hit, detector
from bot.diagnosis import Evidence, Subject
from bot.snapshot.base import StrictRecord

_MAX_LINE = 400


class CodeGpusParams(StrictRecord):
    # CUDA's words for "this process sees no device", as PyTorch and the CUDA runtime print them.
    patterns: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.patterns:
            raise ValueError("patterns: should have at least 1 item")
        check_patterns("patterns", self.patterns)


@detector("code_hides_gpus", ("message", "work"), CodeGpusParams)
def code_hides_gpus(ctx: Context, rule: Rule) -> Iterable[Hit]:
    ray = ctx.ray
    if ray is None or not ray.work_without_gpus:
        return
    patterns = tuple(CodeGpusParams(**rule.params).patterns)
    pattern = alternation(patterns)
    # The words CUDA printed, each with the first line that shows them.
    errors: dict[str, str] = {}
    for text in ctx.texts_that_may_match(*patterns):
        match = pattern.search(text.searched)
        if match is not None and match.group(0) not in errors:
            errors[match.group(0)] = text.text
    if not errors:
        return
    evidence = [Evidence(source="error", text=line[:_MAX_LINE]) for line in list(errors.values())[:3]]
    evidence += [Evidence(source="python code", text=work) for work in ray.work_without_gpus[:3]]
    yield Hit(
        Subject(kind="RayTask", name=None),
        tuple(evidence),
        {"message": next(iter(errors)), "work": ", ".join(ray.work_without_gpus[:3])},
    )
