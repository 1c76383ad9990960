"""The daemon's validated configuration, as
:func:`~driftwatch.service.config.parse_service_config` builds it.

Frozen dataclasses, one per section of ``driftwatch.yaml``, with durations in seconds and
paths resolved; the layers the daemon wires read these, never the YAML.

>>> GroupConfig().topic, MlflowLimits().attempts
('driftwatch.panes', 2)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from driftwatch.service.pool_config import PoolConfig

__all__ = [
    "CheckpointConfig",
    "GroupConfig",
    "HttpConfig",
    "MlflowLimits",
    "ModelConfig",
    "ReportsConfig",
    "SchedulerConfig",
    "ServiceConfig",
    "TimelineConfig",
]


# -- the validated configuration -------------------------------------------------------------
@dataclass(frozen=True)
class ModelConfig:
    name: str | None  # None: the policy's model name
    connector: Path
    policy: Path
    reference: Path | None
    live_speed: float  # event seconds per wall second; 0 = as fast as the source goes
    batch_size: int | None  # None: 500 for a paced recording, else 10 000
    #: the user's registered model (a ``ChampionRef``); None: the demo's river stand-in
    champion: Any = None
    #: where the file wrote a pacing ``live.speed`` above 0, as (file, line, col, path): a
    #: Kafka connector cannot be paced, so such a model is refused there (None: not
    #: written, or set by ``run --speed``, which paces the file models only)
    live_speed_at: tuple[str, int, int, str] | None = None
    #: where the file wrote the champion's ``score_scale`` (file, line, col, path): one
    #: that reads the connector's (``stream``) is checked once the connector is read
    champion_scale_at: tuple[str, int, int, str] | None = None


@dataclass(frozen=True)
class HttpConfig:
    enabled: bool
    host: str
    port: int
    admin_token_env: str | None


@dataclass(frozen=True)
class CheckpointConfig:
    interval_s: float
    max_age_s: float
    keep: int
    disk_retry_max_s: float = 60.0  # longest wait between retries on a full/read-only disk


@dataclass(frozen=True)
class SchedulerConfig:
    misfire_grace_time_s: float
    coalesce: bool
    actions_s: float
    policy_reload_s: float
    reference_refresh_s: float
    offpeak_dispatch_s: float
    staleness_check_s: float


@dataclass(frozen=True)
class ReportsConfig:
    """Reports of a live daemon (``report:``): per decision, rolling, retention."""

    on_decision: bool = True
    rolling_s: float | None = 900.0  # None: no rolling report
    windows: int = 200
    keep: int = 100


@dataclass(frozen=True)
class TimelineConfig:
    """Rotation of each model's ``timeline.jsonl`` (``timeline:``): the active file is
    rotated into a numbered segment at the first checkpoint after it reaches
    ``max_bytes``; the newest ``segments`` segments are kept."""

    max_bytes: int = 256 << 20
    segments: int = 8


@dataclass(frozen=True)
class GroupConfig:
    """Instances in one consumer group (README, "Scaling out")."""

    enabled: bool = False
    topic: str = "driftwatch.panes"  # the pane log: sketches and states, compacted
    #: seconds without records after which a partition holds no pane back (None: never)
    idle_timeout_s: float | None = 30.0


@dataclass(frozen=True)
class MlflowLimits:
    """How long the daemon lets MLflow hold an action (``actions:`` keys, in seconds)."""

    timeout_s: float = 10.0  # one HTTP request
    http_retries: int = 0  # the HTTP client's own retries of one request
    attempts: int = 2  # driftwatch's tries of one call before the action backs off
    backoff_s: float = 30.0  # first wait of an action after an outage; doubles
    backoff_max_s: float = 600.0
    shutdown_grace_s: float = 5.0  # how long shutdown waits for a call in flight


@dataclass(frozen=True)
class ServiceConfig:
    file: str
    base_dir: Path
    state_dir: Path
    models: tuple[ModelConfig, ...]
    http: HttpConfig
    checkpoint: CheckpointConfig
    stale_after_s: float
    scheduler: SchedulerConfig
    execute_actions: bool
    tracking_uri: str | None
    pool: PoolConfig
    feature_cap: int
    report_on_done: bool
    reports: ReportsConfig = field(default_factory=ReportsConfig)
    mlflow: MlflowLimits = MlflowLimits()
    group: GroupConfig = field(default_factory=GroupConfig)
    timeline: TimelineConfig = field(default_factory=TimelineConfig)
