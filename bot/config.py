"""raydiag's configuration file (YAML): frozen dataclasses, validated by pydantic through ``load``.

A bad file stops start-up with the key path and the problem ("clusters.1.namespace: Input should
be a valid string"), never a half-configured bot. The Slack bot and the CLI read the same file.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import field
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from bot.cron import cron_problem
from bot.snapshot.base import StrictRecord, new_dict, new_list
from bot.snapshot.data import load

# What a cluster name may look like wherever a user types one: a DNS-1123 label.
NAME = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")


class ConfigError(ValueError):
    """The configuration file is unusable; the message names the key path."""


class ClusterConfig(StrictRecord):
    name: str
    namespace: str = "default"
    raycluster: str | None = None
    kubeconfig: str | None = None
    context: str | None = None
    dashboard_url: str | None = None

    @field_validator("name", "namespace", "raycluster")
    @classmethod
    def _dns_label(cls, value: str | None) -> str | None:
        if value is not None and not NAME.match(value):
            raise ValueError("must be a DNS-1123 label (lower-case letters, digits and '-')")
        return value

    @field_validator("dashboard_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is not None and not re.match(r"^https?://[^\s/]+(/\S*)?$", value):
            raise ValueError("must be an http:// or https:// URL")
        return value

    @property
    def raycluster_name(self) -> str:
        return self.raycluster or self.name


class CollectionConfig(StrictRecord):
    deadline_s: Annotated[float, Field(gt=0, le=600)] = 25.0
    call_timeout_s: Annotated[float, Field(gt=0, le=120)] = 8.0


SLACK_ID = re.compile(r"^[A-Z0-9]{2,20}$")


def _slack_ids(values: list[str], what: str) -> list[str]:
    bad = [v for v in values if not SLACK_ID.match(v)]
    if bad:
        raise ValueError(f"not a Slack {what} ID: {', '.join(bad)} (IDs look like U012ABCDEF)")
    return values


class ProbeConfig(StrictRecord):
    """Who may start work on a cluster (the GPU probe), and how long a probe may take."""

    allowed_users: list[str] = field(default_factory=new_list)
    allowed_groups: list[str] = field(default_factory=new_list)
    gpu_timeout_s: Annotated[float, Field(gt=0, le=900)] = 60.0

    @field_validator("allowed_users")
    @classmethod
    def _users(cls, values: list[str]) -> list[str]:
        return _slack_ids(values, "user")

    @field_validator("allowed_groups")
    @classmethod
    def _groups(cls, values: list[str]) -> list[str]:
        return _slack_ids(values, "user group")


class LanguageConfig(StrictRecord):
    """Language per channel or per user; the user's choice wins over the channel's."""

    channels: dict[str, Literal["en", "zh"]] = field(default_factory=new_dict)
    users: dict[str, Literal["en", "zh"]] = field(default_factory=new_dict)


class SlackConfig(StrictRecord):
    incident_channels: list[str] = field(default_factory=new_list)
    languages: LanguageConfig = field(default_factory=LanguageConfig)
    # Diagnoses that may run at once; the rest wait in a queue of this many, then "busy".
    workers: Annotated[int, Field(ge=1, le=64)] = 4
    queue: Annotated[int, Field(ge=0, le=1000)] = 32
    mute_hours: Annotated[float, Field(gt=0, le=24 * 30)] = 24.0

    @field_validator("incident_channels")
    @classmethod
    def _channels(cls, values: list[str]) -> list[str]:
        return _slack_ids(values, "channel")


class MetricsConfig(StrictRecord):
    """The leader's refresh of every configured cluster's series on ``/metrics`` (raydiag_gpus ...)."""

    # Every diagnosis refreshes its cluster's series too; 0 turns the interval off.
    refresh_minutes: Annotated[float, Field(ge=0, le=24 * 60)] = 5.0


class VerifyConfig(StrictRecord):
    """Re-verifying the GPU chain on its own: a GPU probe per pool on an interval, and the guide's
    verification order when a part of the chain changes version (run by the leader)."""

    # How often each configured cluster is read to compare versions with the last run; 0 is off.
    check_minutes: Annotated[float, Field(ge=0, le=7 * 24 * 60)] = 0.0
    # How often the one-GPU probe runs per GPU pool (each accelerator type Ray registers); 0 is off.
    probe_minutes: Annotated[float, Field(ge=0, le=7 * 24 * 60)] = 0.0
    # A probe whose task waits longer for its GPU is stopped and counts as pending.
    probe_timeout_s: Annotated[float, Field(gt=0, le=900)] = 120.0
    # How long the probe job's driver may take to start and connect, before that wait begins.
    probe_start_timeout_s: Annotated[float, Field(gt=0, le=900)] = 120.0
    # Where results go; default: the channel of the cluster's first health-post schedule.
    channel: str | None = None

    @field_validator("channel")
    @classmethod
    def _channel(cls, value: str | None) -> str | None:
        return None if value is None else _slack_ids([value], "channel")[0]

    @property
    def enabled(self) -> bool:
        return self.check_minutes > 0 or self.probe_minutes > 0


class AlertsConfig(StrictRecord):
    """Alerts other apps post in the incident channels (and Alertmanager's webhook)."""

    # An alert label that names the RayCluster, besides ``raycluster`` and ``ray_io_cluster``.
    cluster_label: Annotated[str | None, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")] = None


class AlertmanagerConfig(StrictRecord):
    """Where diagnoses of alerts pushed to ``POST /alertmanager`` are posted."""

    channel: str | None = None

    @field_validator("channel")
    @classmethod
    def _channel(cls, value: str | None) -> str | None:
        return None if value is None else _slack_ids([value], "channel")[0]


# A node label's key (an optional DNS-subdomain prefix, then a name) and value, as Kubernetes
# validates them.
LABEL_KEY = r"^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$"
LABEL_VALUE = r"^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$"


class GpuModelConvention(StrictRecord):
    """One GPU model as the team names it in both layers: the node label and value Kubernetes
    selects its nodes by, and the Ray resource every group sent there declares."""

    label: Annotated[str, Field(pattern=LABEL_KEY)]
    value: Annotated[str, Field(pattern=LABEL_VALUE)]
    # As Ray registers it: ``accelerator_type:A100``, or a custom resource such as ``A100``.
    ray_resource: Annotated[str, Field(pattern=r"^[^\s'\"{},]+$")]


class ConventionsConfig(StrictRecord):
    """The team's written mapping between the layers, which ``raydiag lint --config`` checks
    manifests against (cause 7 of CAUSES.md: the GPU type chain)."""

    gpu_models: list[GpuModelConvention] = field(default_factory=new_list)

    @field_validator("gpu_models", mode="before")
    @classmethod
    def _no_models(cls, value: object) -> object:
        return [] if value is None else value

    @model_validator(mode="after")
    def _one_resource_per_value(self) -> ConventionsConfig:
        seen: dict[tuple[str, str], str] = {}
        for entry in self.gpu_models:
            key = (entry.label, entry.value)
            if key in seen and seen[key] != entry.ray_resource:
                raise ValueError(
                    f"{entry.label}={entry.value} is mapped to both {seen[key]} and {entry.ray_resource}"
                )
            seen[key] = entry.ray_resource
        return self


STATE_FILE = "raydiag-state.db"


def data_dir(env: Mapping[str, str] | None = None) -> Path:
    """Where raydiag keeps files: $RAYDIAG_DATA_DIR, else $XDG_DATA_HOME/raydiag, else ~/.local/share/raydiag.

    In a container, mount a volume there (or set ``state.url``) so the state outlives the Pod.
    """
    env = os.environ if env is None else env
    if env.get("RAYDIAG_DATA_DIR"):
        return Path(env["RAYDIAG_DATA_DIR"]).expanduser()
    base = Path(env["XDG_DATA_HOME"]) if env.get("XDG_DATA_HOME") else Path.home() / ".local" / "share"
    return base / "raydiag"


class StateConfig(StrictRecord):
    """The state database: schedules, mutes, answered events, last posts, quiz scores."""

    # sqlite:///path/to/file.db or postgresql+psycopg://user@host:5432/db; default: a SQLite file
    # raydiag-state.db in the data folder (see ``data_dir``).
    url: str | None = None

    def database_url(self, env: Mapping[str, str] | None = None) -> str:
        return self.url or f"sqlite:///{data_dir(env) / STATE_FILE}"


class ScheduleConfig(StrictRecord):
    """A health post from the configuration: a cluster, a channel, a cron in a time zone."""

    channel: str
    cluster: str
    namespace: str | None = None  # default: the cluster's namespace
    cron: str
    timezone: str = "UTC"
    mode: Literal["changes", "digest"] = "changes"

    @field_validator("channel")
    @classmethod
    def _channel(cls, value: str) -> str:
        return _slack_ids([value], "channel")[0]

    @field_validator("namespace")
    @classmethod
    def _namespace(cls, value: str | None) -> str | None:
        if value is not None and not NAME.match(value):
            raise ValueError("must be a DNS-1123 label (lower-case letters, digits and '-')")
        return value

    @model_validator(mode="after")
    def _runnable(self) -> ScheduleConfig:
        problem = cron_problem(self.cron, self.timezone)
        if problem is not None:
            raise ValueError(problem)
        return self


class HealthPostConfig(StrictRecord):
    """How talkative scheduled health posts are."""

    # Pending Pods younger than this are not alarms while the autoscaler is adding capacity.
    grace_minutes: Annotated[float, Field(ge=0, le=24 * 60)] = 10.0
    # An alarm lasting this long is announced once per threshold ("still pending after 40 min").
    thresholds_minutes: list[int] = field(default_factory=lambda: [40, 120])
    # A run with nothing new: refresh the last post's figures in place ("edit") or stay silent ("quiet").
    unchanged: Literal["edit", "quiet"] = "edit"
    chart: bool = True  # upload the capacity chart into the post's thread

    @field_validator("thresholds_minutes")
    @classmethod
    def _thresholds(cls, values: list[int]) -> list[int]:
        if any(v <= 0 or v > 7 * 24 * 60 for v in values):
            raise ValueError("each threshold is a number of minutes between 1 and 10080 (a week)")
        return sorted(set(values))


class LeaderElectionConfig(StrictRecord):
    """Several replicas: only the holder of a Lease runs scheduled posts (see ``bot.leadership``)."""

    enabled: bool = False
    # Namespace of the Lease; default: the Pod's own (POD_NAMESPACE, or the service account's).
    namespace: str | None = None
    lease_name: str = "raydiag-leader"
    lease_duration_s: Annotated[int, Field(ge=2, le=300)] = 15
    renew_deadline_s: Annotated[int, Field(ge=2, le=300)] = 10
    retry_period_s: Annotated[int, Field(ge=1, le=60)] = 2
    # Where the Lease lives; default: in-cluster credentials (kubeconfig only for running outside).
    kubeconfig: str | None = None
    context: str | None = None

    @field_validator("namespace", "lease_name")
    @classmethod
    def _dns_name(cls, value: str | None) -> str | None:
        if value is not None and not NAME.match(value):
            raise ValueError("must be a DNS-1123 label (lower-case letters, digits and '-')")
        return value

    @model_validator(mode="after")
    def _timings(self) -> LeaderElectionConfig:
        if self.renew_deadline_s <= 1.2 * self.retry_period_s:
            raise ValueError("renew_deadline_s must be more than 1.2 × retry_period_s")
        if self.lease_duration_s <= self.renew_deadline_s:
            raise ValueError("lease_duration_s must be more than renew_deadline_s")
        return self


class Config(StrictRecord):
    clusters: list[ClusterConfig] = field(default_factory=new_list)
    language: Literal["en", "zh"] = "en"
    collection: CollectionConfig = field(default_factory=CollectionConfig)
    probes: ProbeConfig = field(default_factory=ProbeConfig)
    slack: SlackConfig = field(default_factory=SlackConfig)
    state: StateConfig = field(default_factory=StateConfig)
    schedules: list[ScheduleConfig] = field(default_factory=new_list)
    health_posts: HealthPostConfig = field(default_factory=HealthPostConfig)
    leader_election: LeaderElectionConfig = field(default_factory=LeaderElectionConfig)
    metrics: MetricsConfig = field(default_factory=MetricsConfig)
    verify: VerifyConfig = field(default_factory=VerifyConfig)
    alerts: AlertsConfig = field(default_factory=AlertsConfig)
    alertmanager: AlertmanagerConfig = field(default_factory=AlertmanagerConfig)
    conventions: ConventionsConfig = field(default_factory=ConventionsConfig)
    # "json": one JSON object per log line (RAYDIAG_LOG_FORMAT overrides).
    log_format: Literal["text", "json"] = "text"

    def language_for(self, channel: str | None, user: str | None) -> Literal["en", "zh"]:
        languages = self.slack.languages
        if user and user in languages.users:
            return languages.users[user]
        if channel and channel in languages.channels:
            return languages.channels[channel]
        return self.language

    @model_validator(mode="after")
    def _unique_names(self) -> Config:
        names = [c.name for c in self.clusters]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"cluster names must be unique; repeated: {', '.join(duplicates)}")
        return self

    @field_validator("state", "health_posts", "leader_election", "conventions", mode="before")
    @classmethod
    def _section_of_comments(cls, value: object) -> object:
        # A section whose keys are all commented out reads as null in YAML: it means "defaults".
        return {} if value is None else value

    @field_validator("schedules", mode="before")
    @classmethod
    def _no_schedules(cls, value: object) -> object:
        return [] if value is None else value

    @model_validator(mode="after")
    def _scheduled_clusters_exist(self) -> Config:
        names = {c.name for c in self.clusters}
        unknown = sorted({s.cluster for s in self.schedules} - names)
        if unknown:
            raise ValueError(f"schedules name clusters that are not configured: {', '.join(unknown)}")
        return self

    def cluster(self, name: str) -> ClusterConfig | None:
        return next((c for c in self.clusters if c.name == name), None)

    def verify_channel(self, cluster: str) -> str | None:
        """Where re-verification results about ``cluster`` go: ``verify.channel``, else the channel of
        the cluster's first configured health-post schedule; None: metrics and the log only."""
        if self.verify.channel:
            return self.verify.channel
        return next((s.channel for s in self.schedules if s.cluster == cluster), None)


def load_config(path: Path) -> Config:
    import yaml  # noqa: PLC0415 - lazy: a default configuration (pastes, snapshots) reads no YAML

    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ConfigError(f"cannot read config {path}: {error.strerror or error}") from error
    except yaml.YAMLError as error:
        raise ConfigError(f"config {path} is not valid YAML: {str(error).splitlines()[0]}") from error
    try:
        return load(Config, raw or {})
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        more = f" (and {error.error_count() - 1} more problem(s))" if error.error_count() > 1 else ""
        # A dataclass says "Unexpected keyword argument" for an unknown key; the file's readers
        # know pydantic's model wording.
        message = (
            "Extra inputs are not permitted"
            if first["type"] == "unexpected_keyword_argument"
            else first["msg"]
        )
        raise ConfigError(f"config {path}: {where}: {message}{more}") from error
