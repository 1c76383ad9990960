"""The scale a champion writes its output in, as it declares it (``score_scale``).

A bank's own model does not always answer a probability: a scorecard's pyfunc returns
points (higher = safer), another model the log-odds or a percentage. The champion says so
with ``score_scale`` (``--champion-score-scale`` for a replay), in the words a connector
uses for the stream's score (:class:`~driftwatch.scorescale.ScoreScale`):

- ``probability`` (the default), ``log_odds``, ``percent``;
- ``{points: {base: 600, odds: 50, pdo: 20}}`` (``points:base=600,odds=50,pdo=20`` on the
  command line), checked as a connector's ``points:`` is (the same
  :class:`~driftwatch.connectors.spec.PointsSpec`);
- ``stream``: the scale the connector declares for the stream's score (the same model
  usually wrote it), resolved once the connector is read (:func:`resolve_scale`).

It applies to a custom pyfunc's ``predict``, on the user's own versions only (see
:mod:`driftwatch.registry.scorers`). Points are read as P(bad) (higher = safer), so points
with ``score_is: p_good`` contradict each other, as they do in a connector whose policy
says its score is P(good); log-odds and percentages of P(good) are read as such.

>>> champion_scale("log_odds").describe()
'log-odds, read as 1 / (1 + exp(-x))'
>>> champion_scale("points:base=600,odds=50,pdo=20") == ScoreScale.points(
...     base=600, odds=50, pdo=20) == champion_scale({"points": {"base": 600, "odds": 50,
...                                                              "pdo": 20}})
True
>>> champion_scale("stream")
'stream'
>>> champion_scale("logodds")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
driftwatch.errors.ConfigError: score_scale must be probability, stream, log_odds, percent or \
points with its base, odds and pdo, found 'logodds'...
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from driftwatch.errors import ConfigError
from driftwatch.scorescale import LOG_ODDS, PERCENT, PROBABILITY, ScoreScale, plain_number
from driftwatch.yamlio import nearest

__all__ = ["SCALE_WORDS", "STREAM", "champion_scale", "resolve_scale", "scale_name"]

#: What the champion's output may be read as, in the connector's words.
STREAM = "stream"
SCALE_WORDS = ("probability", STREAM, "log_odds", "percent", "points")
_NAMED = {"probability": PROBABILITY, "log_odds": LOG_ODDS, "percent": PERCENT}
_EXPECTED = ("score_scale must be probability, stream, log_odds, percent or points with its "
             "base, odds and pdo")
_POINTS_HINT = ("score_scale: {points: {base: 600, odds: 50, pdo: 20}} in the service "
                "configuration, --champion-score-scale points:base=600,odds=50,pdo=20 for a "
                "replay: good:bad odds of 50:1 at 600 points, doubling every 20 points")


def champion_scale(value: Any) -> ScoreScale | str:
    """The declared ``score_scale``: a :class:`ScoreScale`, or :data:`STREAM`. ``value`` is
    a word, a ``points:base=B,odds=O,pdo=P`` text, ``{points: {...}}`` or a ScoreScale.
    A bad one is a :class:`ConfigError` whose ``path`` is where under ``score_scale`` it
    is (``points.pdo``), for the service configuration to locate."""
    if isinstance(value, ScoreScale):
        return value
    if isinstance(value, Mapping):
        return _points_mapping(value)
    if not isinstance(value, str):
        raise ConfigError(_EXPECTED, found=repr(value))
    text = value.strip()
    if text == STREAM:
        return STREAM
    if text in _NAMED:
        return _NAMED[text]
    if text == "points" or text.startswith("points:"):
        return _points(_points_text(text), "")
    near = nearest(text, SCALE_WORDS)
    raise ConfigError(_EXPECTED, found=repr(value),
                      hint=f"did you mean {near!r}?" if near else None)


def _points_mapping(value: Mapping[Any, Any]) -> ScoreScale:
    keys = [str(k) for k in value]
    if keys != ["points"]:
        other = next((k for k in keys if k != "points"), keys[0] if keys else "")
        raise ConfigError(f"{_EXPECTED}: a mapping names points only",
                          found=f"key {other!r}" if other else "an empty mapping",
                          path=other or None, hint=_POINTS_HINT)
    numbers = value["points"]
    if not isinstance(numbers, Mapping):
        raise ConfigError("points need their base, odds and pdo", found=repr(numbers),
                          path="points", hint=_POINTS_HINT)
    return _points(dict(numbers), "points")


def _points_text(text: str) -> dict[str, Any]:
    """``points:base=600,odds=50,pdo=20`` as a mapping of numbers (text left as it is
    where it is no number, for the checks to name it)."""
    _, _, rest = text.partition(":")
    out: dict[str, Any] = {}
    for item in filter(None, (p.strip() for p in rest.split(","))):
        key, sep, number = item.partition("=")
        if not sep:
            raise ConfigError("points need base=, odds= and pdo=", found=repr(text),
                              hint=_POINTS_HINT)
        try:
            n = float(number)
            out[key.strip()] = int(n) if n.is_integer() else n
        except ValueError:
            out[key.strip()] = number.strip()
    return out


def _points(numbers: dict[str, Any], at: str) -> ScoreScale:
    """A scorecard's scaling, checked as a connector's ``points:`` is."""
    from pydantic import ValidationError

    from driftwatch.connectors.spec import PointsSpec

    try:
        spec = PointsSpec.model_validate(numbers)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in (at, *err["loc"]) if p != "")
        field = str(err["loc"][-1]) if err["loc"] else "points"
        if err["type"] == "missing":
            raise ConfigError(f"points need their base, odds and pdo: {field} is missing",
                              path=where.rpartition(".")[0] or None,
                              hint=_POINTS_HINT) from None
        if err["type"] == "extra_forbidden":
            raise ConfigError(f"points take base, odds and pdo, not {field!r}",
                              path=where or None, hint=_POINTS_HINT) from None
        raise ConfigError(f"points {field}: {err['msg'][0].lower()}{err['msg'][1:]}",
                          found=repr(err.get("input")), path=where or None) from None
    return ScoreScale.points(base=spec.base, odds=spec.odds, pdo=spec.pdo)


def resolve_scale(declared: ScoreScale | str, stream: ScoreScale | None, *,
                  score_is: str = "p_bad", connector: str = "the connector") -> ScoreScale:
    """The scale the champion's output is read in: ``declared``, where it is
    :data:`STREAM` the connector's ``stream`` scale (None: the connector maps no score,
    an error); points with ``score_is: p_good`` are an error (points are P(bad)).

    >>> resolve_scale(STREAM, LOG_ODDS).describe()
    'log-odds, read as 1 / (1 + exp(-x))'
    >>> resolve_scale(STREAM, None)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    driftwatch.errors.ConfigError: the champion's score_scale: stream reads its output in ...
    """
    if declared == STREAM:
        if stream is None:
            raise ConfigError(
                f"the champion's score_scale: stream reads its output in the scale "
                f"{connector} declares for the stream's score, but it maps no score",
                hint="declare the scale itself: probability, log_odds, percent or points")
        scale = stream
    else:
        assert isinstance(declared, ScoreScale)
        scale = declared
    if scale.kind == "points" and score_is == "p_good":
        said = " (the stream's, score_scale: stream)" if declared == STREAM else ""
        raise ConfigError(
            f"the champion's output is read as scorecard points{said}, which are P(bad) "
            "(higher points = safer), but its score_is says P(good)",
            hint="remove score_is: p_good (--champion-score-is p_good) from the champion")
    return scale


def scale_name(scale: ScoreScale | str) -> str:
    """How a declared scale is written back (messages, ``replay.json``).

    >>> scale_name(LOG_ODDS), scale_name(ScoreScale.points(base=600, odds=50, pdo=20))
    ('log_odds', 'points:base=600,odds=50,pdo=20')
    """
    if isinstance(scale, str):
        return scale
    if scale.kind != "points":
        return scale.kind
    assert scale.base is not None and scale.odds is not None and scale.pdo is not None
    return (f"points:base={plain_number(scale.base)},odds={plain_number(scale.odds)},"
            f"pdo={plain_number(scale.pdo)}")
