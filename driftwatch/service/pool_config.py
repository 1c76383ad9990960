"""The ``pool`` section of ``driftwatch.yaml`` and its ``pool.ray`` part: where the Ray
cluster is and how jobs ask it for the reserved share (see :mod:`driftwatch.gpupool.ray`
for the topology). Kubernetes is not a backend: ``driftwatch pool render`` writes manifests.

>>> from pathlib import Path
>>> spec = RaySpec.model_validate({"address": "http://ray-head:8265", "namespace": "risk",
...                                "runtime_env": {"working_dir": "jobs", "pip": ["lightgbm"]}})
>>> cfg = ray_config(spec, base_dir=Path("/srv/dw"))
>>> cfg.resource, cfg.runtime_env["working_dir"], cfg.backend_options()["namespace"]
('driftwatch_reserved_gpu', '/srv/dw/jobs', 'risk')
>>> RaySpec.model_validate({"address": "ray-head:6379"})  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
pydantic_core._pydantic_core.ValidationError: 1 validation error for RaySpec
address
  Value error, expected the Ray dashboard's URL (the Job API), like http://ray-head:8265...
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator

from driftwatch.gpupool.base import RESERVED_ENV
from driftwatch.gpupool.capacity import reserved_gpu_count
from driftwatch.yamlio import LocatedDoc

__all__ = [
    "PoolConfig",
    "PoolSpec",
    "RayConfig",
    "RaySpec",
    "RuntimeEnvSpec",
    "pool_backend",
    "pool_config",
    "pool_ray_config",
    "ray_config",
]

DEFAULT_ADDRESS = "http://127.0.0.1:8265"  # the same as driftwatch.gpupool.ray's
DEFAULT_RESOURCE = "driftwatch_reserved_gpu"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,39}")
_RESOURCE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def pool_backend(v: Any) -> Any:
    """``pool.backend`` before its type check: Kubernetes gets a pointer to what exists."""
    if v in ("kubernetes", "k8s"):
        raise ValueError(
            "driftwatch does not submit jobs to Kubernetes: write the Job and Kueue "
            "manifests with `driftwatch pool render` and apply them yourself; "
            "the daemon's backend is 'local' or 'ray'"
        )
    return v


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RuntimeEnvSpec(_Spec):
    """The parts of a Ray runtime environment sent with every retraining job."""

    working_dir: str | None = None  # a local folder (uploaded by Ray) or a remote .zip URI
    pip: list[str] | None = None
    env_vars: dict[str, str] = {}

    @field_validator("env_vars")
    @classmethod
    def _names(cls, v: dict[str, str]) -> dict[str, str]:
        bad = [k for k in v if not _ENV_NAME.fullmatch(k)]
        if bad:
            raise ValueError(f"environment variable names must be NAME_LIKE_THIS, found {bad}")
        taken = sorted(set(v) & RESERVED_ENV)
        if taken:
            raise ValueError(f"the pool sets {', '.join(taken)} for every job")
        return v


class RaySpec(_Spec):
    address: str = DEFAULT_ADDRESS
    namespace: str | None = None
    resource: str | None = DEFAULT_RESOURCE
    devices: list[str | int] | None = Field(default=None, min_length=1)
    entrypoint_num_cpus: float | None = Field(default=None, ge=0)
    runtime_env: RuntimeEnvSpec = RuntimeEnvSpec()

    @field_validator("address")
    @classmethod
    def _address(cls, v: str) -> str:
        if not re.fullmatch(r"https?://[^\s/]+(/\S*)?", v):
            raise ValueError(
                "expected the Ray dashboard's URL (the Job API), like http://ray-head:8265, "
                "not the cluster's GCS address (host:6379) or a ray:// client address"
            )
        return v

    @field_validator("namespace")
    @classmethod
    def _namespace(cls, v: str | None) -> str | None:
        if v is not None and not _NAME.fullmatch(v):
            raise ValueError("namespace must be 1-40 letters, digits, '_' or '-'")
        return v

    @field_validator("resource")
    @classmethod
    def _resource(cls, v: str | None) -> str | None:
        if v is not None and (not _RESOURCE.fullmatch(v) or v in ("GPU", "CPU", "memory")):
            raise ValueError(
                "resource must be a custom Ray resource name like driftwatch_reserved_gpu "
                "(letters, digits, '_'; not GPU, CPU or memory)"
            )
        return v

    @field_validator("devices")
    @classmethod
    def _devices(cls, v: list[str | int] | None) -> list[str | int] | None:
        if v is not None:
            ids = [str(d).strip() for d in v]
            if any(not d or "," in d for d in ids) or len(set(ids)) != len(ids):
                raise ValueError("devices must be unique, non-empty device ids without commas")
        return v


@dataclass(frozen=True)
class RayConfig:
    """Validated ``pool.ray``; :meth:`backend_options` are the ``RayBackend`` arguments."""

    address: str = DEFAULT_ADDRESS
    namespace: str | None = None
    resource: str | None = DEFAULT_RESOURCE
    devices: tuple[str, ...] | None = None
    entrypoint_num_cpus: float | None = None
    runtime_env: Mapping[str, Any] = field(default_factory=dict)

    def backend_options(self) -> dict[str, Any]:
        return {
            "address": self.address,
            "namespace": self.namespace,
            "resource": self.resource,
            "devices": self.devices,
            "entrypoint_num_cpus": self.entrypoint_num_cpus,
            "runtime_env": dict(self.runtime_env),
        }


def ray_config(spec: RaySpec, *, base_dir: Path) -> RayConfig:
    """``spec`` with a local ``working_dir`` taken from ``base_dir`` (the config's folder)."""
    env: dict[str, Any] = {}
    rt = spec.runtime_env
    if rt.working_dir is not None:
        wd = rt.working_dir
        if "://" not in wd:
            p = Path(wd).expanduser()
            wd = str(p if p.is_absolute() else base_dir / p)
        env["working_dir"] = wd
    if rt.pip is not None:
        env["pip"] = list(rt.pip)
    if rt.env_vars:
        env["env_vars"] = dict(rt.env_vars)
    return RayConfig(
        address=spec.address,
        namespace=spec.namespace,
        resource=spec.resource,
        devices=tuple(str(d).strip() for d in spec.devices) if spec.devices else None,
        entrypoint_num_cpus=spec.entrypoint_num_cpus,
        runtime_env=env,
    )


class PoolSpec(_Spec):
    backend: Annotated[Literal["local", "ray"], BeforeValidator(pool_backend)] = "local"
    gpus: int | list[str] | Literal["auto"] = "auto"
    reserve_fraction: float = Field(default=0.2, ge=0, le=1)
    offpeak: list[str] = []
    offpeak_tz: str = "UTC"
    offpeak_weekends: bool = True
    ray: RaySpec = RaySpec()


@dataclass(frozen=True)
class PoolConfig:
    backend: str
    gpus: int | tuple[str, ...] | None  # None: detect
    reserve_fraction: float
    offpeak: tuple[str, ...]
    offpeak_tz: str = "UTC"
    offpeak_weekends: bool = True
    ray: RayConfig | None = None  # set when backend is ray

    def backend_options(self) -> dict[str, Any]:
        """Keyword arguments of ``create_backend(backend, ...)``."""
        return self.ray.backend_options() if self.ray is not None else {}


def pool_config(doc: LocatedDoc, spec: PoolSpec, *, base_dir: Path) -> PoolConfig:
    """The validated ``pool`` section (paths in ``pool.ray`` taken from ``base_dir``)."""
    gpus = spec.gpus
    ray = pool_ray_config(doc, spec.ray, backend=spec.backend, gpus=gpus,
                          reserve_fraction=spec.reserve_fraction,
                          given="ray" in spec.model_fields_set, base_dir=base_dir)
    return PoolConfig(
        backend=spec.backend,
        gpus=None if gpus == "auto" else (tuple(gpus) if isinstance(gpus, list) else gpus),
        reserve_fraction=spec.reserve_fraction,
        offpeak=tuple(spec.offpeak),
        offpeak_tz=spec.offpeak_tz,
        offpeak_weekends=spec.offpeak_weekends,
        ray=ray,
    )


def pool_ray_config(
    doc: LocatedDoc,
    spec: RaySpec,
    *,
    backend: str,
    gpus: int | list[str] | str,
    reserve_fraction: float,
    given: bool,
    base_dir: Path,
) -> RayConfig | None:
    """The checked Ray settings when ``backend`` is ray; errors point into ``doc``."""
    if backend != "ray":
        if given:
            raise doc.error(("pool", "ray"), "pool.ray is used only with backend: ray",
                            key=True, hint="set pool.backend: ray, or remove this section")
        return None
    ray = ray_config(spec, base_dir=base_dir)
    wd = ray.runtime_env.get("working_dir")
    if wd is not None and "://" not in wd and not Path(wd).is_dir():
        raise doc.error(("pool", "ray", "runtime_env", "working_dir"),
                        "working_dir is not a folder", found=wd)
    if ray.devices is not None and gpus != "auto":
        count = gpus if isinstance(gpus, int) else len(gpus)
        reserved = reserved_gpu_count(count, reserve_fraction)
        if len(ray.devices) != reserved:
            raise doc.error(("pool", "ray", "devices"),
                            f"expected one device id per reserved GPU ({reserved})",
                            found=f"[{', '.join(ray.devices)}]")
    return ray
