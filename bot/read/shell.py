"""Shell command lines in a paste: context for what follows, and evidence in themselves.

People paste the command with its output (``$ kubectl get pods -n ray``). The command is not a
message, but it says which namespace the rows below belong to when the table has no NAMESPACE
column. ``ray start``/``ray up``/``serve`` commands are kept as text, because the arguments are
often the bug (``ray start --address=:6379`` with an empty host).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from bot.read.protocol import Block, Paste, Reader

# What may precede a command: nothing, ``$``, ``user@host:~/dir$``, ``(venv) [root@node ~]#``,
# ``PS C:\\> `` or a ``set -x`` trace ``+``. Character classes here never overlap, so matching stays
# linear however many spaces a line starts with.
_PROMPT = re.compile(
    r"^\s*(?:\([^()]{0,60}\)\s*)?(?:[^\s$#%>]{0,80}(?:\s[^\s$#%>]{1,40})?\s?[$#%>\u276f\u279c]\s*|\+\s+)?$"
)
_TOOL = re.compile(r"(?:sudo\s+)?(?P<tool>kubectl|oc|ray|serve|helm|python3?)(?:\s|$)")
_NAMESPACE = re.compile(r"(?:^|\s)(?:-n|--namespace)(?:\s+|=)([a-z0-9][-a-z0-9]*)")
_ALL_NAMESPACES = re.compile(r"(?:^|\s)(?:-A|--all-namespaces)\b")
_KEPT = re.compile(
    r"^(?:sudo\s+)?(?:ray\s+(?:start|up|submit|attach|exec|job\s+submit)|serve\s+(?:run|deploy))\b"
)


@dataclass(frozen=True)
class Command:
    text: str
    tool: str
    # The namespace the output below belongs to; None when the command does not say.
    namespace: str | None
    all_namespaces: bool
    keep_as_text: bool


# The subcommands of Ray's and Serve's command lines (``ray/scripts/scripts.py``, ``serve/scripts.py``):
# a bare line that starts with ``ray`` or ``serve`` and no prompt is a command only when one of these
# (or an option) follows; "ray server stuck when ..." is a sentence.
_SUBCOMMAND = re.compile(
    r"\s*(?:-|(?:start|stop|up|down|status|list|get|summary|job|submit|attach|exec|memory|timeline|logs|"
    r"health-check|dashboard|rsync[-_]up|rsync[-_]down|monitor|debug|kill-random-node|microbenchmark|stack|"
    r"disable-usage-stats|enable-usage-stats|drain-node|cluster-dump|local-dump|get[-_]head[-_]ip|"
    r"get[-_]worker[-_]ips|install-nightly|metrics|global-gc|check-open-ports|cpp|run|deploy|config|shutdown|build)"
    r"(?:\s|$))"
)


def parse(line: str) -> Command | None:
    match = _TOOL.search(line[:200])
    if match is None or not _PROMPT.match(line[: match.start()]):
        return None
    text = line[match.start() :].strip()
    tool = match.group("tool")
    bare = not line[: match.start()].strip()
    if bare and tool in {"ray", "serve"} and not _SUBCOMMAND.match(line, match.end("tool")):
        return None
    namespace = _NAMESPACE.search(text) if tool in {"kubectl", "oc", "helm"} else None
    return Command(
        text=text,
        tool=tool,
        namespace=namespace.group(1) if namespace else None,
        all_namespaces=bool(_ALL_NAMESPACES.search(text)),
        keep_as_text=bool(_KEPT.match(text)),
    )


def _starts(lines: Sequence[str], i: int) -> bool:
    return parse(lines[i]) is not None


def _read(lines: Sequence[str], i: int, paste: Paste) -> Block:
    command = parse(lines[i])
    assert command is not None  # _starts said so
    if command.tool in {"kubectl", "oc"}:
        paste.namespace = None if command.all_namespaces else command.namespace
    return Block(i + 1, leftover=[command.text] if command.keep_as_text else ())


READER = Reader("shell-command", starts=_starts, read=_read)
