"""``ray start`` command lines, as people paste how they started their cluster.

The flags are read off ``ray/scripts/scripts.py`` (``ray start``): ``--head`` starts the head,
``--address`` (``--redis-address`` before 1.0) joins a worker to the head at that address,
``--num-gpus`` makes the raylet register that many GPUs instead of detecting them. A raylet that
is given ``--num-gpus`` and started without ``CUDA_VISIBLE_DEVICES`` numbers its GPUs from 0
(``ray.get_gpu_ids()`` falls in ``[0, num_gpus - 1]``), so it is the environment variable, set
before the command, that says which devices of the machine a raylet owns.

A command is read from its own line only (an ``export`` on a line above may or may not apply to
it), after an optional shell prompt and ``VAR=value`` assignments. Arguments are split the way the
shell would (``shlex``); a line the shell could not split is no command.
"""

from __future__ import annotations

import re
import shlex

from bot.read.formats import Format, Tag
from bot.read.found import Found
from bot.snapshot.ray import RayStartCommand

_COMMAND = re.compile(
    r"(?:^|[\s$#>])(?:sudo\s+)?(?P<env>(?:[A-Z_][A-Z0-9_]*=\S*\s+)*)ray\s+start(?=\s|$)(?P<args>.*)$"
)
_ENV = re.compile(r"(?P<name>[A-Z_][A-Z0-9_]*)=(?P<value>\S*)")
_MAX_LINE = 2000
MAX_COMMANDS = 50
# A start command is how the person ran Ray: the cluster's own configuration, as a launcher's YAML is.
RAY_START_FORMAT = Format("ray start commands", Tag.RAY_CLUSTER_CONFIG)


def _flag(args: list[str], *names: str) -> str | None:
    for index, arg in enumerate(args):
        for name in names:
            if arg == name and index + 1 < len(args):
                return args[index + 1]
            if arg.startswith(name + "="):
                return arg[len(name) + 1 :]
    return None


def parse(text: str) -> RayStartCommand | None:
    """The ``ray start`` command on this line, or None."""
    if len(text) > _MAX_LINE or "ray" not in text:
        return None
    match = _COMMAND.search(text)
    if match is None:
        return None
    try:
        args = shlex.split(match.group("args"), comments=True)
    except ValueError:
        return None
    env = {m.group("name"): m.group("value").strip("'\"") for m in _ENV.finditer(match.group("env"))}
    gpus = _flag(args, "--num-gpus")
    try:
        num_gpus = float(gpus) if gpus is not None else None
    except ValueError:
        num_gpus = None
    return RayStartCommand(
        text=text.strip(),
        head="--head" in args,
        address=_flag(args, "--address", "--redis-address"),
        num_gpus=num_gpus,
        visible_devices=env.get("CUDA_VISIBLE_DEVICES"),
    )


def read_line(text: str, found: Found) -> bool:
    """Keep a ``ray start`` command line as a fact; the line stays text for the rules that quote it.
    Whether the line was one (the paste's notes then say that start commands were read)."""
    command = parse(text)
    if command is None:
        return False
    found.recognise(RAY_START_FORMAT)
    if len(found.ray_starts) < MAX_COMMANDS and command not in found.ray_starts:
        found.ray_starts.append(command)
    return True
