"""Registered versions as scorers, downloaded once and cached by version (versions never change).

``models:/<name>@<alias>`` and ``models:/<name>/<version>`` name a version; the champion of a
monitored model is named that way in the service configuration and on the replay command
line. :class:`ChampionRef` is that name plus the mapping from model input columns to the
connector's features, what its output is the probability of (``score_is``: ``p_bad``, or
``p_good`` for a model that returns P(good) or a classifier trained with its class 1 the
good outcome), and the scale its output is written in (``score_scale``, see
:mod:`driftwatch.registry.reading`: ``stream`` is resolved by :meth:`ChampionRef.resolved`
once the connector is read).

What the champion declares of its output is the user's model's: :class:`ScorerCache`
applies it to the versions the user registered, never to a version one of driftwatch's
actions made (tag ``driftwatch.made_by``: a retraining's, an online update's, a shadow's
recalibration, the stand-in), which was trained on driftwatch's coding and answers P(bad).

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
>>> from driftwatch.scorescale import LOG_ODDS
>>> ref = ChampionRef.parse("models:/credit-pd@champion", score_scale="stream")
>>> ref.resolved(LOG_ODDS).scale.describe()
'log-odds, read as 1 / (1 + exp(-x))'
>>> ChampionRef.parse("models:/pd@champion", score_is="p_good",
...                   score_scale="points:base=600,odds=50,pdo=20")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
driftwatch.errors.ConfigError: the champion's output is read as scorecard points, which are \
P(bad) (higher points = safer), but its score_is says P(good)...
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from driftwatch.connectors.mapping import DEFAULT_BAD
from driftwatch.errors import ActionError, ConfigError
from driftwatch.registry.reading import STREAM, champion_scale, resolve_scale, scale_name
from driftwatch.registry.scorer import SCORE_IS, Scorer, load_scorer
from driftwatch.registry.versions import CHAMPION, made_by_driftwatch
from driftwatch.scorescale import PROBABILITY, ScoreScale

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
    #: the scale its output is written in: a ScoreScale, or ``"stream"`` until
    #: :meth:`resolved` reads the connector's
    score_scale: ScoreScale | str = PROBABILITY

    @property
    def uri(self) -> str:
        return f"models:/{self.name}@{self.alias}"

    @property
    def scale(self) -> ScoreScale:
        """The scale its output is read in (``score_scale`` once :meth:`resolved`)."""
        if not isinstance(self.score_scale, ScoreScale):
            raise ConfigError(f"{self.uri}: score_scale: {STREAM} is read from the connector, "
                              "which was not read yet")
        return self.score_scale

    def declared(self) -> str:
        """What it declares of its output, for the start's log line ('' for the defaults).

        >>> from driftwatch.scorescale import LOG_ODDS
        >>> ChampionRef("pd", score_is="p_good", score_scale=LOG_ODDS).declared()
        'score_is: p_good, score_scale: log_odds'
        >>> ChampionRef("pd").declared()
        ''
        """
        said = [f"score_is: {self.score_is}"] if self.score_is != "p_bad" else []
        if self.score_scale != PROBABILITY:
            said.append(f"score_scale: {scale_name(self.score_scale)}")
        return ", ".join(said)

    def resolved(self, stream: ScoreScale | None, connector: str = "the connector"
                 ) -> ChampionRef:
        """This champion with ``score_scale: stream`` read as the connector's ``stream``
        scale (None: it maps no score), checked against ``score_is`` (see
        :func:`~driftwatch.registry.reading.resolve_scale`)."""
        scale = resolve_scale(self.score_scale, stream, score_is=self.score_is,
                              connector=connector)
        return replace(self, score_scale=scale)

    @classmethod
    def parse(cls, uri: str, columns: Mapping[str, str] | None = None,
              score_is: str = "p_bad", score_scale: Any = PROBABILITY) -> ChampionRef:
        if score_is not in SCORE_IS:
            raise ConfigError(f"score_is must be {' or '.join(SCORE_IS)}", found=repr(score_is))
        scale = champion_scale(score_scale)
        if scale != STREAM:  # points of P(good) contradict at once; stream's once resolved
            resolve_scale(scale, None, score_is=score_is)
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
        return cls(name, alias, dict(columns or {}), score_is, scale)


class ScorerCache:
    """Scorers of one registry's versions, downloaded under ``cache_dir``. ``score_is``
    and ``score_scale`` are the champion's declarations, applied to the user's own
    versions only (see the module doc)."""

    def __init__(
        self, registry: Any, cache_dir: str | Path, columns: Mapping[str, str] | None = None,
        bad: Sequence[Any] = DEFAULT_BAD, score_is: str = "p_bad",
        score_scale: ScoreScale = PROBABILITY,
    ) -> None:
        self.registry = registry
        self.score_is = score_is
        self.score_scale = score_scale
        self.cache_dir = Path(cache_dir)
        self.columns = dict(columns or {})
        self.bad = tuple(bad)
        self._loaded: dict[tuple[str, str], Scorer] = {}

    def get(self, model: str, version: str | int) -> Scorer:
        """The scorer of ``model`` version ``version``."""
        key = (model, str(version))
        if key not in self._loaded:
            local = self._download(model, str(version))
            declared = self._declared(model, str(version))
            self._loaded[key] = load_scorer(
                local, name=model, version=str(version), columns=self.columns,
                resolve=self.by_uri, bad=self.bad,
                score_is=self.score_is if declared else "p_bad",
                score_scale=self.score_scale if declared else PROBABILITY,
            )
        return self._loaded[key]

    def _declared(self, model: str, version: str) -> bool:
        """Whether the champion's declarations apply to this version: it is the user's
        own, not one driftwatch made (the registry is asked only when there is one)."""
        if self.score_is == "p_bad" and self.score_scale.is_probability:
            return False
        info = self.registry.get_version(model, version)
        return not made_by_driftwatch(info.tags)

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
