"""The MLflow model registry as driftwatch uses it: versions, aliases, lineage tags, profiles.

One registered model per monitored model. Aliases say what runs where: ``champion`` serves
production, ``challenger`` is in shadow (no deprecated stages). Every version driftwatch
creates carries lineage tags (parent version, data window, action key, reference profile
fingerprint) and its run holds the pyfunc model (``model/``) and the reference profile it
was trained on (``reference_profile.json``), which the monitor adopts on promotion.

Idempotency: a version is found again by its ``driftwatch.action_key`` tag, a finished run
by the same tag, so an action resumed after a crash never registers twice. Every call goes
through a bounded :class:`~driftwatch.registry.retry.Retry`; an outage surfaces as
:class:`~driftwatch.registry.retry.RegistryUnavailableError` and the action waits. By
default (a replay, the one-shot commands) the retry has a
:class:`~driftwatch.registry.breaker.CircuitBreaker`: while MLflow is known unreachable,
calls fail at once and one probes it every few seconds. The daemon passes its own retry,
without one: its actions back off on wall-clock time each, and a promotion's profile load
or the champion check must not be refused for an outage of another call.

The embedded default keeps everything in the state directory: ``sqlite:///<state>/mlflow.db``
for runs and the registry, artifacts under ``<state>/mlruns``; it is created whole or not at
all (:mod:`~driftwatch.registry.embedded_store`) before the first call. A tracking server
works by URI (``http://127.0.0.1:5000``); the daemon bounds the HTTP client's own timeout and
retries (``MLFLOW_HTTP_REQUEST_TIMEOUT``, ``MLFLOW_HTTP_REQUEST_MAX_RETRIES``, set from
``actions.mlflow_timeout`` and ``actions.mlflow_http_retries``) so that the retry here, not
the HTTP client's, paces a retry.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

try:
    from mlflow import MlflowClient
    from mlflow.artifacts import download_artifacts
    from mlflow.entities import RunStatus
except ModuleNotFoundError as exc:  # an optional integration: say how to get it
    raise ModuleNotFoundError(
        "driftwatch's actions need MLflow: pip install 'driftwatch[mlflow]'", name=exc.name
    ) from exc

from driftwatch.errors import ActionError
from driftwatch.registry.embedded_store import ensure_store
from driftwatch.registry.pyfunc import load_river_model, save_model
from driftwatch.registry.retry import (
    CircuitBreaker,
    RegistryUnavailableError,
    Retry,
    bound_http_client,
)
from driftwatch.registry.river_model import RiverModel
from driftwatch.registry.versions import (
    MODEL_ARTIFACT,
    PROFILE_ARTIFACT,
    TAG_ACTION_KEY,
    TAG_ALIAS_HISTORY,
    TAG_DATA_WINDOW,
    TAG_MODEL_LOGGED,
    TAG_PARENT,
    TAG_PROFILE,
    ModelVersionInfo,
    embedded_tracking_uri,
)
from driftwatch.windows.profile import ReferenceProfile

_HISTORY_KEEP = 25

__all__ = ["MlflowRegistry", "quoted"]


def quoted(value: str) -> str:
    """``value`` as a string in an MLflow search filter: in single quotes, or in double
    quotes where it holds a single quote (a registered model named ``Bob's PD``, which
    MLflow accepts); one holding both cannot be written in a filter.

    >>> print(quoted("credit-pd"), quoted("Bob's PD"))
    'credit-pd' "Bob's PD"
    """
    if "'" not in value:
        return f"'{value}'"
    if '"' not in value:
        return f'"{value}"'
    raise ActionError(f"cannot search MLflow for a value with both kinds of quote: {value!r}")


class MlflowRegistry:
    """Runs, versions and aliases of driftwatch's models in one MLflow store."""

    def __init__(
        self,
        tracking_uri: str,
        *,
        registry_uri: str | None = None,
        artifact_root: str | Path | None = None,
        retry: Retry | None = None,
    ) -> None:
        self.tracking_uri = tracking_uri
        self.registry_uri = registry_uri or tracking_uri
        #: a SQLite store's file was missing when this registry was made (MLflow then
        #: creates an empty store there, so a mistyped path reads "no registered model")
        self.created_store = False
        if tracking_uri.startswith("sqlite:///"):
            db = Path(tracking_uri.removeprefix("sqlite:///"))
            self.created_store = not db.exists()
            if artifact_root is None:
                # beside the database, not in whatever directory the process runs in
                artifact_root = db.parent / "mlruns"
        self.artifact_root = Path(artifact_root).absolute() if artifact_root else None
        # once MLflow is known down, calls fail at once between probes (not one connection
        # wait per call and per action, at every window of a replay)
        self.retry = retry or Retry(breaker=CircuitBreaker())
        # a daemon has no terminal: no progress bars in its log (unless asked for)
        os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")
        self._client: MlflowClient | None = None
        self._models: dict[tuple[str, str], RiverModel] = {}
        #: the embedded store's file, created whole before the first call (None: a server)
        self.embedded_db: Path | None = None

    @property
    def client(self) -> MlflowClient:
        """The MLflow client, made on first use (opening a SQLite store takes seconds)."""
        if self._client is None:
            self.ensure_store()
            self._client = MlflowClient(
                tracking_uri=self.tracking_uri, registry_uri=self.registry_uri
            )
        return self._client

    @classmethod
    def embedded(cls, state_dir: str | Path, **kwargs: Any) -> MlflowRegistry:
        """The embedded default: SQLite store and artifacts in ``state_dir``."""
        state = Path(state_dir).absolute()
        state.mkdir(parents=True, exist_ok=True)
        reg = cls(embedded_tracking_uri(state), artifact_root=state / "mlruns", **kwargs)
        reg.embedded_db = state / "mlflow.db"
        return reg

    def ensure_store(self) -> None:
        """Create the embedded store whole, or repair one a killed creation left (once);
        a no-op for a tracking server. Raises StateError for a broken store with data."""
        if self.embedded_db is not None and self._client is None:
            ensure_store(self.embedded_db, artifact_root=self.artifact_root)

    @classmethod
    def from_uri(cls, uri: str | None, state_dir: str | Path, **kwargs: Any) -> MlflowRegistry:
        """A tracking server or store by URI, or the embedded default when ``uri`` is None."""
        return cls(uri, **kwargs) if uri else cls.embedded(state_dir, **kwargs)

    def check_answers(self, timeout_s: float) -> None:
        """Ask a tracking server one cheap question, once, giving it ``timeout_s`` to answer:
        one that accepts connections but does not answer (a proxy or a hung server) raises
        :class:`RegistryUnavailableError` naming the URI within seconds, not after every
        attempt of every call at the full request timeout. A refused connection is left to
        the first real call, which says so at once; a local store is not asked."""
        if not self.tracking_uri.startswith(("http://", "https://")):
            return
        restore = bound_http_client(timeout_s, 0)
        try:  # a retry of its own: no breaker opened by a question the start asked
            Retry(attempts=1).call(
                lambda: self.client.search_registered_models(max_results=1),
                what="search registered models")
        except RegistryUnavailableError as exc:
            if "timed out" not in str(exc.__cause__ or exc).lower():
                return
            raise RegistryUnavailableError(
                f"tracking URI {self.tracking_uri}: no answer within {timeout_s:.0f} s: "
                "something accepts connections there but does not answer (is it an MLflow "
                "tracking server, and is it up?)") from None
        finally:
            restore()

    def probe_next(self) -> None:
        """Let the next call reach MLflow even while it is known unreachable (one more
        real try, as at a replay's end), not fail at once on the breaker."""
        if self.retry.breaker is not None:
            self.retry.breaker.probe_now()

    def _call(self, what: str, fn: Any) -> Any:
        return self.retry.call(fn, what=what)

    # -- experiments and runs ----------------------------------------------------------
    def experiment_id(self, model: str) -> str:
        """The experiment ``driftwatch/<model>``, created on first use."""
        name = f"driftwatch/{model}"

        def get_or_create() -> str:
            exp = self.client.get_experiment_by_name(name)
            if exp is not None:
                return str(exp.experiment_id)
            location = self.artifact_root.as_uri() if self.artifact_root else None
            return str(self.client.create_experiment(name, artifact_location=location))

        return str(self._call(f"experiment {name}", get_or_create))

    def find_run(self, model: str, action_key: str) -> str | None:
        """A finished run of ``action_key`` whose model was logged completely."""
        exp = self.experiment_id(model)
        query = (
            f"tags.`{TAG_ACTION_KEY}` = {quoted(action_key)} "
            f"and tags.`{TAG_MODEL_LOGGED}` = 'true' and attributes.status = 'FINISHED'"
        )
        runs = self._call(
            "search runs",
            lambda: self.client.search_runs([exp], filter_string=query, max_results=1),
        )
        return runs[0].info.run_id if runs else None

    def log_model(
        self,
        model_name: str,
        model: Any,
        *,
        action_key: str,
        profile: ReferenceProfile | None = None,
        metrics: Mapping[str, float] | None = None,
        params: Mapping[str, Any] | None = None,
        tags: Mapping[str, str] | None = None,
        run_name: str | None = None,
    ) -> str:
        """One run holding the pyfunc model (a :class:`RiverModel` or any pyfunc
        ``PythonModel``) and the reference profile; returns its id.

        Runs of the same action left unfinished by a crash are marked ``KILLED`` first.
        """
        exp = self.experiment_id(model_name)
        stale = self._call(
            "search runs",
            lambda: self.client.search_runs(
                [exp],
                filter_string=f"tags.`{TAG_ACTION_KEY}` = {quoted(action_key)} "
                "and attributes.status = 'RUNNING'",
            ),
        )
        for run in stale:
            self._call(
                "end run",
                lambda r=run: self.client.set_terminated(
                    r.info.run_id, RunStatus.to_string(RunStatus.KILLED)
                ),
            )
        run_tags = {TAG_ACTION_KEY: action_key, **(tags or {})}
        run = self._call(
            "create run",
            lambda: self.client.create_run(
                exp, tags=run_tags, run_name=run_name or action_key.replace(":", "-")
            ),
        )
        run_id = run.info.run_id
        with tempfile.TemporaryDirectory(prefix="driftwatch-model-") as tmp:
            local = save_model(model, Path(tmp) / MODEL_ARTIFACT)
            self._call(
                "log model", lambda: self.client.log_artifacts(run_id, str(local), MODEL_ARTIFACT)
            )
            if profile is not None:
                prof = Path(tmp) / PROFILE_ARTIFACT
                prof.write_bytes(profile.to_json())
                self._call("log profile", lambda: self.client.log_artifact(run_id, str(prof)))
        for key, value in (params or {}).items():
            self._call("log param", lambda k=key, v=value: self.client.log_param(run_id, k, v))
        for key, value in (metrics or {}).items():
            if value == value:  # NaN metrics are left out, not logged as NaN
                self._call(
                    "log metric", lambda k=key, v=value: self.client.log_metric(run_id, k, float(v))
                )
        if profile is not None:
            self._call(
                "tag run", lambda: self.client.set_tag(run_id, TAG_PROFILE, profile.fingerprint)
            )
        self._call("tag run", lambda: self.client.set_tag(run_id, TAG_MODEL_LOGGED, "true"))
        self._call("end run", lambda: self.client.set_terminated(run_id))
        return str(run_id)

    # -- versions ----------------------------------------------------------------------
    def find_version(self, model: str, action_key: str) -> ModelVersionInfo | None:
        """The version registered for ``action_key``, if any."""
        return self.find_tagged(model, TAG_ACTION_KEY, action_key)

    def tagged_elsewhere(self, model: str, action_key: str) -> list[ModelVersionInfo]:
        """Versions of registered models other than ``model`` tagged with ``action_key``:
        what a job that was to register ``model`` registered under another name."""
        query = f"tags.`{TAG_ACTION_KEY}` = {quoted(action_key)}"
        found = self._call("search versions", lambda: self.client.search_model_versions(query))
        return [ModelVersionInfo.of(mv) for mv in found if mv.name != model]

    def find_tagged(self, model: str, key: str, value: str) -> ModelVersionInfo | None:
        """The oldest version of ``model`` whose tag ``key`` is ``value``, if any."""
        query = f"name = {quoted(model)} and tags.`{key}` = {quoted(value)}"
        found = self._call("search versions", lambda: self.client.search_model_versions(query))
        found = sorted(found, key=lambda mv: int(mv.version))
        return ModelVersionInfo.of(found[0]) if found else None

    def register(
        self,
        model: str,
        run_id: str,
        *,
        action_key: str,
        parent_version: str | None = None,
        data_window: str | None = None,
        tags: Mapping[str, str] | None = None,
        description: str | None = None,
        source: str | None = None,
        model_id: str | None = None,
    ) -> ModelVersionInfo:
        """Register the run's model (``source``, default ``runs:/<run>/model``) as a new
        version of ``model``; a second call with the same ``action_key`` returns the
        version the first one made."""
        existing = self.find_version(model, action_key)
        if existing is not None:
            return existing
        self._ensure_registered_model(model)
        run = self._call("get run", lambda: self.client.get_run(run_id))
        version_tags = {TAG_ACTION_KEY: action_key, **(tags or {})}
        if parent_version is not None:
            version_tags[TAG_PARENT] = str(parent_version)
        if data_window is not None:
            version_tags[TAG_DATA_WINDOW] = data_window
        fingerprint = run.data.tags.get(TAG_PROFILE)
        if fingerprint:
            version_tags[TAG_PROFILE] = fingerprint
        mv = self._call(
            "create version",
            lambda: self.client.create_model_version(
                model,
                source or f"runs:/{run_id}/{MODEL_ARTIFACT}",
                run_id=run_id,
                tags=version_tags,
                description=description,
                **({"model_id": model_id} if model_id else {}),
            ),
        )
        return ModelVersionInfo.of(mv)

    def publish(
        self,
        model: str,
        river_model: Any,
        *,
        action_key: str,
        profile: ReferenceProfile | None = None,
        metrics: Mapping[str, float] | None = None,
        params: Mapping[str, Any] | None = None,
        parent_version: str | None = None,
        data_window: str | None = None,
        tags: Mapping[str, str] | None = None,
    ) -> ModelVersionInfo:
        """Log and register in one idempotent call (reuses a version or run of the key)."""
        existing = self.find_version(model, action_key)
        if existing is not None:
            return existing
        run_id = self.find_run(model, action_key) or self.log_model(
            model,
            river_model,
            action_key=action_key,
            profile=profile,
            metrics=metrics,
            params=params,
        )
        return self.register(
            model,
            run_id,
            action_key=action_key,
            parent_version=parent_version,
            data_window=data_window,
            tags=tags,
        )

    def _ensure_registered_model(self, model: str) -> None:
        def ensure() -> None:
            if not self.client.search_registered_models(f"name = {quoted(model)}"):
                self.client.create_registered_model(model)

        self._call("create registered model", ensure)

    def versions(self, model: str) -> list[ModelVersionInfo]:
        """All versions of ``model``, oldest first."""
        found = self._call(
            "search versions", lambda: self.client.search_model_versions(f"name = {quoted(model)}")
        )
        return sorted((ModelVersionInfo.of(mv) for mv in found), key=lambda v: int(v.version))

    def get_version(self, model: str, version: str | int) -> ModelVersionInfo:
        return ModelVersionInfo.of(
            self._call("get version", lambda: self.client.get_model_version(model, str(version)))
        )

    def by_alias(self, model: str, alias: str) -> ModelVersionInfo | None:
        """The version ``alias`` points to, or None (no such alias or no such model)."""

        def get() -> Any:
            if not self.client.search_registered_models(f"name = {quoted(model)}"):
                return None
            aliases = self.client.get_registered_model(model).aliases or {}
            if alias not in aliases:
                return None
            return self.client.get_model_version(model, str(aliases[alias]))

        mv = self._call(f"alias {alias}", get)
        return ModelVersionInfo.of(mv) if mv is not None else None

    def set_version_tag(self, model: str, version: str, key: str, value: str) -> None:
        self._call(
            "tag version",
            lambda: self.client.set_model_version_tag(model, str(version), key, value),
        )

    # -- aliases -------------------------------------------------------------------------
    def set_alias(self, model: str, alias: str, version: str, *, at: float, by: str = "") -> None:
        """Point ``alias`` at ``version`` and append the move to the model's alias history."""
        current = self.by_alias(model, alias)
        if current is not None and current.version == str(version):
            return
        self._call(
            "set alias", lambda: self.client.set_registered_model_alias(model, alias, str(version))
        )
        self._record(
            model,
            {
                "alias": alias,
                "version": str(version),
                "at": at,
                "by": by,
                "previous": current.version if current else None,
            },
        )

    def delete_alias(self, model: str, alias: str, *, at: float, by: str = "") -> None:
        current = self.by_alias(model, alias)
        if current is None:
            return
        self._call("delete alias", lambda: self.client.delete_registered_model_alias(model, alias))
        self._record(
            model,
            {"alias": alias, "version": None, "at": at, "by": by, "previous": current.version},
        )

    def alias_history(self, model: str) -> list[dict[str, Any]]:
        """The last alias moves, oldest first (kept in a registered-model tag)."""
        rm = self._call("get model", lambda: self.client.get_registered_model(model))
        raw = (rm.tags or {}).get(TAG_ALIAS_HISTORY)
        return list(json.loads(raw)) if raw else []

    def _record(self, model: str, entry: dict[str, Any]) -> None:
        history = [*self.alias_history(model), entry][-_HISTORY_KEEP:]
        self._call(
            "tag model",
            lambda: self.client.set_registered_model_tag(
                model, TAG_ALIAS_HISTORY, json.dumps(history, separators=(",", ":"))
            ),
        )

    # -- loading -----------------------------------------------------------------------
    def load_model(self, model: str, version: str) -> RiverModel:
        """The version's river model (cached: versions never change)."""
        key = (model, str(version))
        if key not in self._models:
            info = self.get_version(model, version)
            with tempfile.TemporaryDirectory(prefix="driftwatch-load-") as tmp:
                local = self._download(info, MODEL_ARTIFACT, tmp)
                self._models[key] = load_river_model(local)
        return self._models[key].copy()

    def load_profile(self, model: str, version: str) -> ReferenceProfile:
        """The reference profile the version was trained on (its ``reference_profile.json``)."""
        info = self.get_version(model, version)
        with tempfile.TemporaryDirectory(prefix="driftwatch-profile-") as tmp:
            try:
                local = self._download(info, PROFILE_ARTIFACT, tmp)
            except ActionError:
                raise
            except Exception as exc:
                raise ActionError(
                    f"{model} v{version} has no {PROFILE_ARTIFACT} in run {info.run_id}: {exc}"
                ) from exc
            return ReferenceProfile.load(local)

    def _download(self, info: ModelVersionInfo, path: str, dst: str) -> str:
        if info.run_id is None:
            raise ActionError(f"{info.name} v{info.version} has no run to load {path} from")
        return str(
            self._call(
                f"download {path}",
                lambda: download_artifacts(
                    run_id=info.run_id,
                    artifact_path=path,
                    dst_path=dst,
                    tracking_uri=self.tracking_uri,
                ),
            )
        )
