"""The daemon's configuration (``driftwatch.yaml``): which models, where state lives, HTTP.

A file names one or more models, each with its connector, policy and (optionally) reference;
everything else has a default. Relative paths are taken from the config file's folder (the
working directory for the embedded default); the file globs inside a connector start at the
working directory, as in ``replay``. Durations are strings (``30s``, ``5m``, ``1h``).

>>> cfg = parse_service_config(DEFAULT_CONFIG)
>>> cfg.http.host, cfg.http.port, cfg.models[0].connector.name
('127.0.0.1', 9108, 'demo-file.yaml')
>>> cfg.checkpoint.interval_s, cfg.models[0].live_speed
(10.0, 86400.0)
>>> parse_service_config("models:\\n  - conector: c.yaml\\n", file="d.yaml")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
driftwatch.errors.ConfigError: d.yaml:2:5: unknown key 'conector'
  at models[0].conector
  hint: did you mean 'connector'?
...
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from driftwatch.errors import ConfigError
from driftwatch.policy.durations import parse_duration
from driftwatch.service.config_default import DEFAULT_CONFIG
from driftwatch.service.config_types import (
    CheckpointConfig,
    GroupConfig,
    HttpConfig,
    MlflowLimits,
    ModelConfig,
    ReportsConfig,
    SchedulerConfig,
    ServiceConfig,
    TimelineConfig,
)
from driftwatch.service.pool_config import PoolConfig, PoolSpec, pool_config
from driftwatch.yamlio import LocatedDoc, format_path, load_yaml, nearest

__all__ = [
    "DEFAULT_CONFIG",
    "CheckpointConfig",
    "GroupConfig",
    "HttpConfig",
    "MlflowLimits",
    "ModelConfig",
    "PoolConfig",
    "ReportsConfig",
    "SchedulerConfig",
    "ServiceConfig",
    "TimelineConfig",
    "load_service_config",
    "parse_service_config",
]


# -- structure (pydantic) ---------------------------------------------------------------------
class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _duration(v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, str):
        raise ValueError("expected a duration like 30s, 5m or 1h")
    return parse_duration(v)


def _valid_duration(v: str) -> str:
    _duration(v)
    return v


_Dur = Annotated[str, BeforeValidator(_valid_duration)]


class _LiveSpec(_Spec):
    speed: float = Field(default=0.0, ge=0)


class _ChampionSpec(_Spec):
    uri: str
    columns: dict[str, str] = {}
    score_is: str = "p_bad"  # checked in _champion: a Literal here gets lost in the union
    #: a word or {points: {...}}, checked in _champion (driftwatch.registry.reading)
    score_scale: Any = "probability"


class _ModelSpec(_Spec):
    name: str | None = None
    connector: str
    policy: str
    reference: str | None = None
    champion: str | _ChampionSpec | None = None
    live: _LiveSpec = _LiveSpec()
    batch_size: int | None = Field(default=None, ge=1, le=1_000_000)


class _HttpSpec(_Spec):
    enabled: bool = True
    host: str = "127.0.0.1"
    port: int = Field(default=9108, ge=0, le=65535)
    admin_token_env: str | None = "DRIFTWATCH_ADMIN_TOKEN"


class _CheckpointSpec(_Spec):
    interval: _Dur = "10s"
    max_age: _Dur = "2m"
    keep: int = Field(default=2, ge=1, le=100)
    disk_retry_max: _Dur = "1m"

class _StalenessSpec(_Spec):
    after: _Dur = "5m"

class _SchedulerSpec(_Spec):
    misfire_grace_time: _Dur = "30s"
    coalesce: bool = True
    actions: _Dur = "5s"
    policy_reload: _Dur = "5s"
    reference_refresh: _Dur = "1h"
    offpeak_dispatch: _Dur = "1m"
    staleness_check: _Dur = "15s"


class _ActionsSpec(_Spec):
    execute: bool = True
    tracking_uri: str | None = None
    mlflow_timeout: _Dur = "10s"
    mlflow_http_retries: int = Field(default=0, ge=0, le=10)
    mlflow_attempts: int = Field(default=2, ge=1, le=10)
    retry_backoff: _Dur = "30s"
    retry_backoff_max: _Dur = "10m"
    shutdown_grace: _Dur = "5s"


class _MetricsSpec(_Spec):
    feature_cap: int = Field(default=50, ge=1, le=1000)


class _ReportSpec(_Spec):
    on_done: bool = True
    on_decision: bool = True
    rolling: _Dur | None = "15m"
    windows: int = Field(default=200, ge=1, le=10_000)
    keep: int = Field(default=100, ge=1, le=100_000)


class _TimelineSpec(_Spec):
    max_mib: int = Field(default=256, ge=1, le=1 << 20)
    segments: int = Field(default=8, ge=1, le=10_000)


class _GroupSpec(_Spec):
    enabled: bool = False
    topic: str = Field("driftwatch.panes", min_length=1)
    idle_timeout: _Dur | None = "30s"


class _ServiceSpec(_Spec):
    apiVersion: Literal["driftwatch/v1"] = "driftwatch/v1"
    kind: Literal["Service"] = "Service"
    state_dir: str = "state"
    models: list[_ModelSpec] = Field(min_length=1)
    http: _HttpSpec = _HttpSpec()
    checkpoint: _CheckpointSpec = _CheckpointSpec()
    staleness: _StalenessSpec = _StalenessSpec()
    scheduler: _SchedulerSpec = _SchedulerSpec()
    actions: _ActionsSpec = _ActionsSpec()
    pool: PoolSpec = PoolSpec()
    metrics: _MetricsSpec = _MetricsSpec()
    report: _ReportSpec = _ReportSpec()
    timeline: _TimelineSpec = _TimelineSpec()
    group: _GroupSpec = _GroupSpec()


def _located(doc: LocatedDoc, exc: ValidationError) -> ConfigError:
    from driftwatch.connectors.spec import show

    errors = exc.errors()
    # a missing key is reported at its parent: report more precise problems first
    err = next((e for e in errors if e["type"] != "missing"), errors[0])
    loc = tuple(err["loc"])
    kind = err["type"]
    if kind == "extra_forbidden":
        spec = _spec_at(loc[:-1])
        choices = list(spec.model_fields) if spec is not None else []
        near = nearest(str(loc[-1]), choices)
        hint = f"did you mean {near!r}?" if near else "valid keys: " + ", ".join(choices)
        return doc.error(loc, f"unknown key {loc[-1]!r}", key=True, hint=hint)
    if kind == "missing":
        return doc.error(loc[:-1], f"missing required key {loc[-1]!r}")
    if kind == "too_short" and loc == ("models",):
        return doc.error(loc, "expected at least one model", found="an empty list")
    msg = str(err["msg"])
    if msg.startswith("Value error, "):
        msg = msg.removeprefix("Value error, ")
    msg = msg[0].lower() + msg[1:]
    return doc.error(loc, msg, found=show(err.get("input")))


def _spec_at(loc: tuple[Any, ...]) -> type[BaseModel] | None:
    tp: Any = _ServiceSpec
    for part in loc:
        if isinstance(part, int):
            continue
        f = tp.model_fields.get(str(part)) if isinstance(tp, type) else None
        if f is None:
            return None
        tp = f.annotation
        args = getattr(tp, "__args__", ())
        if args and isinstance(args[0], type) and issubclass(args[0], BaseModel):
            tp = args[0]
    return tp if isinstance(tp, type) and issubclass(tp, BaseModel) else None


def parse_service_config(
    text: str, *, file: str = "<default>", base_dir: Path | None = None
) -> ServiceConfig:
    """Validate a service configuration; errors name ``file:line:col``."""
    doc = load_yaml(text, file=file)
    if not isinstance(doc.data, dict):
        raise ConfigError("expected a mapping with a 'models' list", file=file, line=1, col=1)
    try:
        spec = _ServiceSpec.model_validate(doc.data)
    except ValidationError as exc:
        raise _located(doc, exc) from None
    base = (base_dir or Path.cwd()).resolve()

    def path(p: str) -> Path:
        q = Path(p).expanduser()
        return q if q.is_absolute() else base / q

    seen: set[str] = set()
    champions: list[Any] = []
    for i, m in enumerate(spec.models):
        champion = _champion(doc, i, m)
        if champion is not None and not spec.actions.execute:
            # record-only: nothing would load, check or score the champion
            raise doc.error(("models", i, "champion"),
                            "a champion is only loaded when actions run: with actions.execute: "
                            "false driftwatch decides and records only; remove champion: "
                            "(name: sets the model's name) or set actions.execute: true")
        champions.append(champion)
        name = m.name or (champion.name if champion is not None else None)
        if name and name in seen:
            raise doc.error(("models", i, "name"), f"model name {name!r} given twice")
        seen.add(name or "")
    s = spec.scheduler
    a = spec.actions
    limits = MlflowLimits(
        timeout_s=_duration(a.mlflow_timeout), http_retries=a.mlflow_http_retries,
        attempts=a.mlflow_attempts, backoff_s=_duration(a.retry_backoff),
        backoff_max_s=_duration(a.retry_backoff_max),
        shutdown_grace_s=_duration(a.shutdown_grace))
    _positive_durations(doc, spec)
    if limits.backoff_max_s < limits.backoff_s:
        raise doc.error(("actions", "retry_backoff_max"),
                        f"must not be shorter than retry_backoff ({a.retry_backoff})",
                        found=a.retry_backoff_max)
    return ServiceConfig(
        file=file,
        base_dir=base,
        state_dir=path(spec.state_dir),
        models=tuple(
            ModelConfig(
                name=m.name or (c.name if c is not None else None),
                connector=path(m.connector),
                policy=path(m.policy),
                reference=path(m.reference) if m.reference else None,
                live_speed=float(m.live.speed),
                batch_size=m.batch_size,
                champion=c,
                live_speed_at=_written_at(doc, ("models", i, "live", "speed"))
                if m.live.speed > 0 else None,
                champion_scale_at=_written_at(doc, ("models", i, "champion", "score_scale"))
                if isinstance(m.champion, _ChampionSpec)
                and "score_scale" in m.champion.model_fields_set else None,
            )
            for i, (m, c) in enumerate(zip(spec.models, champions, strict=True))
        ),
        http=HttpConfig(spec.http.enabled, spec.http.host, spec.http.port,
                        spec.http.admin_token_env or None),
        checkpoint=CheckpointConfig(_duration(spec.checkpoint.interval),
                                    _duration(spec.checkpoint.max_age), spec.checkpoint.keep,
                                    _duration(spec.checkpoint.disk_retry_max)),
        stale_after_s=_duration(spec.staleness.after),
        scheduler=SchedulerConfig(
            misfire_grace_time_s=_duration(s.misfire_grace_time),
            coalesce=s.coalesce,
            actions_s=_duration(s.actions),
            policy_reload_s=_duration(s.policy_reload),
            reference_refresh_s=_duration(s.reference_refresh),
            offpeak_dispatch_s=_duration(s.offpeak_dispatch),
            staleness_check_s=_duration(s.staleness_check),
        ),
        execute_actions=spec.actions.execute,
        tracking_uri=spec.actions.tracking_uri,
        pool=pool_config(doc, spec.pool, base_dir=base),
        feature_cap=spec.metrics.feature_cap,
        report_on_done=spec.report.on_done,
        reports=ReportsConfig(
            on_decision=spec.report.on_decision,
            rolling_s=_duration(spec.report.rolling) if spec.report.rolling else None,
            windows=spec.report.windows,
            keep=spec.report.keep,
        ),
        mlflow=limits,
        group=GroupConfig(spec.group.enabled, spec.group.topic,
                          None if spec.group.idle_timeout is None
                          else _duration(spec.group.idle_timeout)),
        timeline=TimelineConfig(spec.timeline.max_mib << 20, spec.timeline.segments),
    )


def _written_at(doc: LocatedDoc, path: tuple[str | int, ...]) -> tuple[str, int, int, str]:
    """``(file, line, col, path)`` of a value, for an error raised once other files are read."""
    return (doc.file, *doc.locate(path), format_path(path))


#: Durations that must be above 0s: an interval, a wait or a limit that 0s would turn into a
#: busy loop, a job the scheduler refuses at start, or a check that always fails
_POSITIVE = (("checkpoint", "interval"), ("checkpoint", "max_age"), ("staleness", "after"),
             ("scheduler", "misfire_grace_time"), ("scheduler", "actions"),
             ("scheduler", "policy_reload"), ("scheduler", "reference_refresh"),
             ("scheduler", "offpeak_dispatch"), ("scheduler", "staleness_check"),
             ("actions", "mlflow_timeout"), ("actions", "retry_backoff"),
             ("report", "rolling"))


def _positive_durations(doc: LocatedDoc, spec: _ServiceSpec) -> None:
    """Refuse a 0s among :data:`_POSITIVE` at its ``file:line:col``."""
    for section, key in _POSITIVE:
        text = getattr(getattr(spec, section), key)
        if text is not None and _duration(text) <= 0:
            raise doc.error((section, key), "expected a positive duration (above 0s)",
                            found=text,
                            hint="null turns rolling reports off" if key == "rolling"
                            else None)


def _champion(doc: LocatedDoc, i: int, m: _ModelSpec) -> Any:
    """The model's ``champion`` as a ``ChampionRef`` (None: not given)."""
    if m.champion is None:
        return None
    from driftwatch.registry.reading import STREAM, champion_scale, resolve_scale
    from driftwatch.registry.scorer import SCORE_IS
    from driftwatch.registry.scorers import ChampionRef

    spec = m.champion if isinstance(m.champion, _ChampionSpec) else _ChampionSpec(uri=m.champion)
    where: tuple[Any, ...] = ("models", i, "champion")
    if spec.score_is not in SCORE_IS:
        raise doc.error((*where, "score_is"),
                        f"score_is must be {' or '.join(SCORE_IS)} (what the champion's output "
                        "is the probability of)", found=repr(spec.score_is))
    try:
        scale = champion_scale(spec.score_scale)
    except ConfigError as exc:
        inside = tuple(exc.path.split(".")) if exc.path else ()
        raise doc.error((*where, "score_scale", *inside), exc.message, found=exc.found,
                        key=bool(inside) and exc.found is None, hint=exc.hint) from None
    if scale != STREAM:  # points with score_is: p_good contradict; stream's once resolved
        try:
            resolve_scale(scale, None, score_is=spec.score_is)
        except ConfigError as exc:
            raise doc.error((*where, "score_scale"), exc.message, hint=exc.hint) from None
    try:
        ref = ChampionRef.parse(spec.uri, spec.columns, spec.score_is, scale)
    except ConfigError as exc:
        loc = (*where, "uri") if isinstance(m.champion, _ChampionSpec) else where
        raise doc.error(loc, exc.message, found=exc.found) from None
    if m.name and m.name != ref.name:
        raise doc.error(("models", i, "name"),
                        f"model name {m.name!r} differs from the champion's registered name "
                        f"{ref.name!r}: driftwatch acts on the registered model by its name",
                        found=repr(m.name))
    return ref


def load_service_config(path: str | Path | None = None) -> ServiceConfig:
    """Load ``path``; without one, the embedded default (relative to the working dir,
    which must hold the demo's connector and policy, as a checkout does)."""
    if path is None:
        cfg = parse_service_config(DEFAULT_CONFIG)
        absent = [p for m in cfg.models for p in (m.connector, m.policy) if not p.is_file()]
        if absent:
            rel = absent[0].relative_to(cfg.base_dir)
            raise ConfigError(
                f"the built-in configuration runs the demo from the working directory, "
                f"which has no {rel}",
                file="<default>",
                hint="write the demo there first (driftwatch examples . --with-data), or "
                "give --config; driftwatch demo replays the demo from anywhere",
            )
        return cfg
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read service config: {exc.strerror}", file=str(p)) from None
    return parse_service_config(text, file=str(p), base_dir=p.resolve().parent)
