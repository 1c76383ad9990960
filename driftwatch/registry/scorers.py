"""Registered versions as scorers, downloaded once and cached by version (versions never change).

``models:/<name>@<alias>`` and ``models:/<name>/<version>`` name a version; the champion of a
monitored model is named that way in the service configuration and on the replay command
line. :class:`ChampionRef` is that name plus the mapping from model input columns to the
connector's features, and what its output is the probability of (``score_is``: ``p_bad``,
or ``p_good`` for a custom pyfunc that returns P(good)).

>>> ref = ChampionRef.parse("models:/credit-pd@champion", {"annual_income": "income"})
>>> ref.name, ref.alias, dict(ref.columns)
('credit-pd', 'champion', {'annual_income': 'income'})
>>> ChampionRef.parse("runs:/0a1b/model")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
driftwatch.errors.ConfigError: expected models:/<name>@champion: ...register this one \
(mlflow.register_model(uri, name)) and point its 'champion' alias at the version, found \
'runs:/0a1b/model'
>>> ChampionRef.parse("models:/credit-pd/3")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
driftwatch.errors.ConfigError: name the champion by its alias, ...set_registered_model_alias(\
'credit-pd', 'champion', 3), found 'models:/credit-pd/3'
>>> ChampionRef.parse("models:/credit-pd@champion", score_is="good")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
driftwatch.errors.ConfigError: ...score_is must be p_bad or p_good, found 'good'
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from driftwatch.connectors.mapping import DEFAULT_BAD
from driftwatch.errors import ActionError, ConfigError
from driftwatch.registry.scorer import SCORE_IS, Scorer, load_scorer
from driftwatch.registry.versions import CHAMPION

__all__ = ["ChampionRef", "ScorerCache", "parse_models_uri"]

_URI = re.compile(r"models:/(?P<name>[^/@]+)(?:@(?P<alias>[\w.-]+)|/(?P<version>\d+))")


def parse_models_uri(uri: str) -> tuple[str, str | None, str | None]:
    """``(name, alias, version)`` of a ``models:/`` URI (one of alias, version is None).

    >>> parse_models_uri("models:/pd/4"), parse_models_uri("models:/pd@champion")
    (('pd', None, '4'), ('pd', 'champion', None))
    """
    m = _URI.fullmatch(str(uri).strip())
    if m is None:
        raise ConfigError("expected models:/<name>@champion", found=repr(uri))
    return m["name"], m["alias"], m["version"]


@dataclass(frozen=True)
class ChampionRef:
    """The user's production model: a registered model's ``champion`` alias."""

    name: str
    alias: str = CHAMPION
    columns: Mapping[str, str] = field(default_factory=dict)
    #: what the model's output is the probability of (see the module doc)
    score_is: str = "p_bad"

    @property
    def uri(self) -> str:
        return f"models:/{self.name}@{self.alias}"

    @classmethod
    def parse(cls, uri: str, columns: Mapping[str, str] | None = None,
              score_is: str = "p_bad") -> ChampionRef:
        if score_is not in SCORE_IS:
            raise ConfigError(f"score_is must be {' or '.join(SCORE_IS)}", found=repr(score_is))
        text = str(uri).strip()
        if text.startswith(("runs:/", "file:", "/", ".", "s3:", "gs:")) or "\\" in text:
            raise ConfigError(  # a run's artifact or a folder: no version, no aliases
                "expected models:/<name>@champion: driftwatch acts on a registered model's "
                "versions; register this one (mlflow.register_model(uri, name)) and point its "
                f"{CHAMPION!r} alias at the version", found=repr(uri)
            )
        if not text.startswith("models:/") and re.fullmatch(r"[\w.-]+", text):
            raise ConfigError("expected models:/<name>@champion", found=repr(uri),
                              hint=f"models:/{text}@{CHAMPION}")
        name, alias, version = parse_models_uri(uri)
        if alias != CHAMPION:
            which = version if version is not None else f"<the version {alias!r} names>"
            raise ConfigError(
                f"name the champion by its alias, models:/{name}@{CHAMPION} (driftwatch moves "
                f"the aliases {CHAMPION!r} and 'challenger'); to start: MlflowClient()."
                f"set_registered_model_alias({name!r}, {CHAMPION!r}, {which})", found=repr(uri)
            )
        return cls(name, alias, dict(columns or {}), score_is)


class ScorerCache:
    """Scorers of one registry's versions, downloaded under ``cache_dir``."""

    def __init__(
        self, registry: Any, cache_dir: str | Path, columns: Mapping[str, str] | None = None,
        bad: Sequence[Any] = DEFAULT_BAD, score_is: str = "p_bad",
    ) -> None:
        self.registry = registry
        self.score_is = score_is
        self.cache_dir = Path(cache_dir)
        self.columns = dict(columns or {})
        self.bad = tuple(bad)
        self._loaded: dict[tuple[str, str], Scorer] = {}

    def get(self, model: str, version: str | int) -> Scorer:
        """The scorer of ``model`` version ``version``."""
        key = (model, str(version))
        if key not in self._loaded:
            local = self._download(model, str(version))
            self._loaded[key] = load_scorer(
                local, name=model, version=str(version), columns=self.columns,
                resolve=self.by_uri, bad=self.bad, score_is=self.score_is,
            )
        return self._loaded[key]

    def by_uri(self, uri: str) -> Scorer:
        name, alias, version = parse_models_uri(uri)
        if version is None:
            info = self.registry.by_alias(name, alias)
            if info is None:
                raise ActionError(f"{uri}: no version has alias {alias!r}")
            version = info.version
        return self.get(name, version)

    def _fetch(self, model: str, version: str, where: str, tmp: Path) -> str:
        """Download ``where`` into ``tmp``. MLflow reports an artifact store it cannot
        reach as a path that does not exist: the server is asked for the version, so an
        outage backs off (the check raises RegistryUnavailableError), and the download is
        tried once more before the path counts as missing (a server shutting down may
        answer the check after its artifacts stopped being served)."""
        from mlflow.artifacts import download_artifacts

        reg = self.registry
        what = f"download {model} v{version}"
        for last in (False, True):
            try:
                return str(reg.retry.call(
                    lambda: download_artifacts(
                        artifact_uri=where, dst_path=str(tmp), tracking_uri=reg.tracking_uri
                    ),
                    what=what,
                ))
            except Exception as exc:
                if type(exc).__name__ != "MlflowException":
                    raise
                reg.retry.call(lambda: reg.client.get_model_version(model, version), what=what)
                if last:
                    raise
                reg.retry.sleep(reg.retry.base_delay)
        raise AssertionError("unreachable")  # pragma: no cover

    def _download(self, model: str, version: str) -> Path:
        safe = re.sub(r"[^A-Za-z0-9._-]+", "_", model)
        dst = self.cache_dir / safe / version
        if (dst / "MLmodel").exists():
            return dst
        tmp = dst.with_name(dst.name + ".partial")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        reg = self.registry
        where = reg.retry.call(
            lambda: reg.client.get_model_version_download_uri(model, version),
            what=f"locate {model} v{version}",
        )
        path = self._fetch(model, version, where, tmp)
        found = Path(path)
        root = found if (found / "MLmodel").exists() else next(
            (p.parent for p in tmp.rglob("MLmodel")), None)
        if root is None:
            raise ActionError(f"{model} v{version}: no MLmodel in what the registry holds")
        shutil.rmtree(dst, ignore_errors=True)
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(root), str(dst))
        shutil.rmtree(tmp, ignore_errors=True)
        return dst
