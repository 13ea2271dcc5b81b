"""What a user typed after ``/raydiag``, checked before anything acts on it.

The cluster argument only ever selects an entry of the configuration: nothing a user types
reaches a shell, a URL path or a label selector. Anything else is answered with usage.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from bot.config import NAME, ClusterConfig, Config

MAX_TEXT = 200

Kind = Literal["help", "diagnose", "unknown-cluster", "bad-namespace", "invalid"]


@dataclass(frozen=True)
class Command:
    kind: Kind
    cluster: ClusterConfig | None = None
    namespace: str | None = None
    word: str = ""


def parse_command(text: str, config: Config) -> Command:
    words = (text or "")[:MAX_TEXT].split()
    if not words or words[0].lower() in ("help", "-h", "--help", "?"):
        return Command("help")
    if len(words) > 2:
        return Command("invalid", word=" ".join(words))
    name = words[0].lower()
    cluster = config.cluster(name)
    if cluster is None:
        return Command("unknown-cluster", word=words[0][:60])
    namespace = None
    if len(words) == 2:
        namespace = words[1].lower()
        if not NAME.match(namespace):
            return Command("bad-namespace", cluster=cluster, word=words[1][:60])
    return Command("diagnose", cluster=cluster, namespace=namespace or cluster.namespace)


def named_clusters(text: str, config: Config) -> list[ClusterConfig]:
    """Configured clusters named as whole words in a message (for incident channels and mentions)."""
    words = {w.strip(".,:;!?()[]{}<>`'\"*_").lower() for w in (text or "")[:20_000].split()}
    return [c for c in config.clusters if c.name in words]
