"""Optional dependencies: which extra brings each one, and the error that says so.

A core install (``pip install driftwatch``) replays, reports and checks policies; Kafka,
Avro, MLflow and Ray come with extras. A command that needs one that is missing ends with a
one-line error naming the extra, never an import traceback.

>>> EXTRAS["kafka"], EXTRAS["mlflow"]
('kafka', 'mlflow')
>>> str(missing_extra(ModuleNotFoundError("No module named 'ray'", name="ray")))
"ray is not installed: pip install 'driftwatch[ray]'"
>>> missing_extra(ModuleNotFoundError("No module named 'foo'", name="foo")) is None
True
"""

from __future__ import annotations

from driftwatch.errors import MissingExtraError

__all__ = ["EXTRAS", "missing_extra"]

#: Top-level module -> the extra of ``pyproject.toml`` that installs it.
EXTRAS = {
    "kafka": "kafka",
    "crc32c": "kafka",
    "mlflow": "mlflow",
    "ray": "ray",
    "psutil": "bench",
    "fastavro": "avro",
}

_HINT = "pip install 'driftwatch["


def missing_extra(exc: ImportError) -> MissingExtraError | None:
    """The error to show for ``exc`` when it is an optional dependency that is missing
    (None when it is something else, a bug to let through)."""
    if isinstance(exc, MissingExtraError):
        return exc
    name = (exc.name or "").split(".")[0]
    extra = EXTRAS.get(name)
    if extra is None:
        return None
    text = str(exc)
    if _HINT in text:  # the raising module already said what needs it and how to get it
        return MissingExtraError(text, name=name)
    return MissingExtraError(f"{name} is not installed: {_HINT}{extra}]'", name=name)
