"""raydiag's configuration file (YAML), validated with pydantic.

A bad file stops start-up with the key path and the problem ("clusters.1.namespace: Input should
be a valid string"), never a half-configured bot. The Slack bot and the CLI read the same file.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

# What a cluster name may look like wherever a user types one: a DNS-1123 label.
NAME = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")


class ConfigError(ValueError):
    """The configuration file is unusable; the message names the key path."""


class ClusterConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

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


class CollectionConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    deadline_s: float = Field(default=25.0, gt=0, le=600)
    call_timeout_s: float = Field(default=8.0, gt=0, le=120)


SLACK_ID = re.compile(r"^[A-Z0-9]{2,20}$")


def _slack_ids(values: list[str], what: str) -> list[str]:
    bad = [v for v in values if not SLACK_ID.match(v)]
    if bad:
        raise ValueError(f"not a Slack {what} ID: {', '.join(bad)} (IDs look like U012ABCDEF)")
    return values


class ProbeConfig(BaseModel):
    """Who may start work on a cluster (the GPU probe), and how long a probe may take."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    allowed_users: list[str] = Field(default_factory=list)
    allowed_groups: list[str] = Field(default_factory=list)
    gpu_timeout_s: float = Field(default=60.0, gt=0, le=900)

    @field_validator("allowed_users")
    @classmethod
    def _users(cls, values: list[str]) -> list[str]:
        return _slack_ids(values, "user")

    @field_validator("allowed_groups")
    @classmethod
    def _groups(cls, values: list[str]) -> list[str]:
        return _slack_ids(values, "user group")


class LanguageConfig(BaseModel):
    """Language per channel or per user; the user's choice wins over the channel's."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    channels: dict[str, Literal["en", "zh"]] = Field(default_factory=dict)
    users: dict[str, Literal["en", "zh"]] = Field(default_factory=dict)


class SlackConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    incident_channels: list[str] = Field(default_factory=list)
    languages: LanguageConfig = Field(default_factory=LanguageConfig)
    # Diagnoses that may run at once; the rest wait in a queue of this many, then "busy".
    workers: int = Field(default=4, ge=1, le=64)
    queue: int = Field(default=32, ge=0, le=1000)
    mute_hours: float = Field(default=24.0, gt=0, le=24 * 30)

    @field_validator("incident_channels")
    @classmethod
    def _channels(cls, values: list[str]) -> list[str]:
        return _slack_ids(values, "channel")


class Config(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    clusters: list[ClusterConfig] = Field(default_factory=list)
    language: Literal["en", "zh"] = "en"
    collection: CollectionConfig = Field(default_factory=CollectionConfig)
    probes: ProbeConfig = Field(default_factory=ProbeConfig)
    slack: SlackConfig = Field(default_factory=SlackConfig)

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

    def cluster(self, name: str) -> ClusterConfig | None:
        return next((c for c in self.clusters if c.name == name), None)


def load_config(path: Path) -> Config:
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ConfigError(f"cannot read config {path}: {error.strerror or error}") from error
    except yaml.YAMLError as error:
        raise ConfigError(f"config {path} is not valid YAML: {str(error).splitlines()[0]}") from error
    try:
        return Config.model_validate(raw or {})
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        more = f" (and {error.error_count() - 1} more problem(s))" if error.error_count() > 1 else ""
        raise ConfigError(f"config {path}: {where}: {first['msg']}{more}") from error
