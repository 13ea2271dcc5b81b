"""What a user typed after ``/raydiag``, checked before anything acts on it.

The cluster argument only ever selects an entry of the configuration: nothing a user types
reaches a shell, a URL path or a label selector. Anything else is answered with usage.

Grammar::

    /raydiag help
    /raydiag <cluster> [namespace]          diagnose
    /raydiag <cluster> capacity             capacity picture (GPUs layer by layer)
    /raydiag quiz | /raydiag quiz stats     onboarding quiz, team results
    /raydiag schedule list
    /raydiag schedule add <cluster> <m> <h> <dom> <mon> <dow> [time zone] [changes|digest]
    /raydiag schedule remove <id>
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from bot.config import NAME, ClusterConfig, Config
from bot.cron import cron_problem

MAX_TEXT = 200

Kind = Literal[
    "help",
    "diagnose",
    "capacity",
    "quiz",
    "quiz-stats",
    "schedule-add",
    "schedule-list",
    "schedule-remove",
    "unknown-cluster",
    "bad-namespace",
    "bad-schedule",
    "invalid",
]

# Kinds answered by a registered handler (see ``bot.slack.bot.Bot.handlers``), not by a diagnosis.
HANDLED_KINDS: tuple[Kind, ...] = (
    "capacity",
    "quiz",
    "quiz-stats",
    "schedule-add",
    "schedule-list",
    "schedule-remove",
)

ScheduleMode = Literal["changes", "digest"]
_CRON_FIELD = re.compile(r"^[0-9*/,\-a-zA-Z?]{1,40}$")
_SCHEDULE_ID = re.compile(r"^[a-z0-9]{1,32}$")


@dataclass(frozen=True)
class ScheduleSpec:
    """A schedule as typed: five cron fields, an IANA time zone, and whether to post changes or a digest."""

    cron: str
    timezone: str = "UTC"
    mode: ScheduleMode = "changes"


@dataclass(frozen=True)
class Command:
    kind: Kind
    cluster: ClusterConfig | None = None
    namespace: str | None = None
    word: str = ""
    schedule: ScheduleSpec | None = None
    schedule_id: str | None = None


def parse_command(text: str, config: Config) -> Command:
    words = (text or "")[:MAX_TEXT].replace('"', " ").replace("'", " ").split()
    if not words or words[0].lower() in ("help", "-h", "--help", "?"):
        return Command("help")
    first = words[0].lower()
    if first == "quiz" and config.cluster("quiz") is None:
        if len(words) == 1:
            return Command("quiz")
        if len(words) == 2 and words[1].lower() == "stats":
            return Command("quiz-stats")
        return Command("invalid", word=" ".join(words))
    if first == "schedule" and config.cluster("schedule") is None:
        return _parse_schedule(words[1:], config)
    if len(words) > 2:
        return Command("invalid", word=" ".join(words))
    cluster = config.cluster(first)
    if cluster is None:
        return Command("unknown-cluster", word=words[0][:60])
    if len(words) == 2 and words[1].lower() == "capacity":
        return Command("capacity", cluster=cluster, namespace=cluster.namespace)
    namespace = None
    if len(words) == 2:
        namespace = words[1].lower()
        if not NAME.match(namespace):
            return Command("bad-namespace", cluster=cluster, word=words[1][:60])
    return Command("diagnose", cluster=cluster, namespace=namespace or cluster.namespace)


def _parse_schedule(words: list[str], config: Config) -> Command:
    verb = words[0].lower() if words else ""
    if verb == "list" and len(words) == 1:
        return Command("schedule-list")
    if verb == "remove" and len(words) == 2:
        schedule_id = words[1].lower()
        if not _SCHEDULE_ID.match(schedule_id):
            return Command("bad-schedule", word=words[1][:60])
        return Command("schedule-remove", schedule_id=schedule_id)
    if verb != "add" or len(words) < 7 or len(words) > 9:
        return Command("invalid", word=" ".join(["schedule", *words]))
    cluster = config.cluster(words[1].lower())
    if cluster is None:
        return Command("unknown-cluster", word=words[1][:60])
    fields = words[2:7]
    if not all(_CRON_FIELD.match(f) for f in fields):
        return Command("bad-schedule", cluster=cluster, word=" ".join(fields)[:60])
    timezone, mode = "UTC", "changes"
    for extra in words[7:]:
        if extra.lower() in ("changes", "digest"):
            mode = extra.lower()
        else:
            timezone = extra
    spec = ScheduleSpec(cron=" ".join(fields), timezone=timezone, mode=mode)  # type: ignore[arg-type]
    problem = schedule_problem(spec)
    if problem is not None:
        return Command("bad-schedule", cluster=cluster, word=problem[:100])
    return Command("schedule-add", cluster=cluster, namespace=cluster.namespace, schedule=spec)


def schedule_problem(spec: ScheduleSpec) -> str | None:
    """Why a schedule cannot run (bad cron field or unknown time zone), or None when it can.

    Cron fields mean what they mean in crontab (weekday 0 and 7 are Sunday); the check is the
    scheduler's own conversion, so what is accepted here is what runs.
    """
    return cron_problem(spec.cron, spec.timezone)


def named_clusters(text: str, config: Config) -> list[ClusterConfig]:
    """Configured clusters named as whole words in a message (for incident channels and mentions)."""
    words = {w.strip(".,:;!?()[]{}<>`'\"*_").lower() for w in (text or "")[:20_000].split()}
    return [c for c in config.clusters if c.name in words]
