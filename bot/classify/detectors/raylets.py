"""Several raylets started on one machine, each told it has GPUs, none told which.

``ray start --num-gpus=N`` makes a raylet register N GPUs and hand out GPU ids ``0 .. N-1``; which
devices of the machine those ids are is only said by ``CUDA_VISIBLE_DEVICES`` set before the
command. Start two or more raylets on one machine that way and each registers its GPUs, the cluster
total looks right, and every one of them gives its tasks device 0: the work shares the first GPU
while the others idle. Ray's advice is one raylet per machine with all its GPUs; raylets that must
share a machine each need their own ``CUDA_VISIBLE_DEVICES``.

What the text settles is which commands ran on one machine: the head, and every worker whose
``--address`` (``--redis-address``) is the loopback address, since only a process on the head's
machine reaches the head there. Workers pointed at another address may be anywhere, so they are
not counted.
"""

from __future__ import annotations

from collections.abc import Iterable

from bot.catalogue import Rule
from bot.classify.context import Context
from bot.classify.registry import Hit, detector
from bot.diagnosis import Evidence, Subject
from bot.snapshot.ray import RayStartCommand

_LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")


def _on_head_machine(command: RayStartCommand) -> bool:
    if command.head:
        return True
    host = (command.address or "").rsplit(":", 1)[0] if ":" in (command.address or "") else command.address
    return host in _LOOPBACK


@detector("raylets_share_machine_gpus", ("count", "gpus", "commands"))
def raylets_share_machine_gpus(ctx: Context, rule: Rule) -> Iterable[Hit]:
    ray = ctx.ray
    if ray is None or not ray.start_commands:
        return
    # Raylets that number the same devices: on the head's machine, with GPUs, and the same (or no)
    # CUDA_VISIBLE_DEVICES.
    groups: dict[str | None, list[RayStartCommand]] = {}
    for command in ray.start_commands:
        if _on_head_machine(command) and (command.num_gpus or 0) > 0:
            groups.setdefault(command.visible_devices, []).append(command)
    for commands in groups.values():
        if len(commands) < 2:
            continue
        yield Hit(
            Subject(kind="RayNode", name=None),
            tuple(Evidence(source="ray start", text=c.text) for c in commands[:5]),
            {
                "count": str(len(commands)),
                "gpus": f"{sum(c.num_gpus or 0 for c in commands):g}",
                "commands": commands[0].text,
            },
        )
        return
