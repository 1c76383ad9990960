"""Champion and challenger moves: promote, discard, roll back. Each is safe to repeat.

A promoted version remembers the champion it replaced (tag
``driftwatch.previous_champion``), so a rollback knows where to go back to; every alias
move is also appended to the model's alias history (see
:meth:`~driftwatch.registry.mlflow_registry.MlflowRegistry.alias_history`), and each
version's fate is tagged ``driftwatch.verdict`` (``promoted``, ``discarded``,
``rolled_back``, ...).
"""

from __future__ import annotations

from driftwatch.errors import ActionError
from driftwatch.registry.mlflow_registry import MlflowRegistry
from driftwatch.registry.versions import CHALLENGER, CHAMPION, TAG_PREVIOUS_CHAMPION, TAG_VERDICT

__all__ = ["discard", "make_challenger", "promote", "rollback"]


def promote(
    registry: MlflowRegistry, model: str, version: str, *, at: float, by: str = ""
) -> str | None:
    """Make ``version`` the champion; returns the version it replaced (None if none).

    Repeating the call after a crash finishes what the first one started.
    """
    version = str(version)
    current = registry.by_alias(model, CHAMPION)
    if current is not None and current.version == version:
        previous = current.tags.get(TAG_PREVIOUS_CHAMPION)
    else:
        previous = current.version if current is not None else None
        if previous is not None:
            registry.set_version_tag(model, version, TAG_PREVIOUS_CHAMPION, previous)
        registry.set_alias(model, CHAMPION, version, at=at, by=by)
    registry.set_version_tag(model, version, TAG_VERDICT, "promoted")
    challenger = registry.by_alias(model, CHALLENGER)
    if challenger is not None and challenger.version == version:
        registry.delete_alias(model, CHALLENGER, at=at, by=by)
    return previous


def make_challenger(
    registry: MlflowRegistry, model: str, version: str, *, at: float, by: str = ""
) -> str | None:
    """Point ``challenger`` at ``version``; a challenger it replaces that had no verdict yet
    is tagged ``superseded``. Returns the replaced version (None if none)."""
    version = str(version)
    current = registry.by_alias(model, CHALLENGER)
    if current is not None and current.version == version:
        return None
    if current is not None and TAG_VERDICT not in current.tags:
        registry.set_version_tag(model, current.version, TAG_VERDICT, "superseded")
    registry.set_alias(model, CHALLENGER, version, at=at, by=by)
    return current.version if current is not None else None


def discard(
    registry: MlflowRegistry,
    model: str,
    version: str,
    *,
    at: float,
    by: str = "",
    verdict: str = "discarded",
) -> None:
    """Take ``version`` out of shadow: drop the challenger alias if it points to it and tag
    the verdict."""
    challenger = registry.by_alias(model, CHALLENGER)
    if challenger is not None and challenger.version == str(version):
        registry.delete_alias(model, CHALLENGER, at=at, by=by)
    registry.set_version_tag(model, str(version), TAG_VERDICT, verdict)


def rollback(
    registry: MlflowRegistry, model: str, *, at: float, by: str = "", version: str | None = None
) -> str:
    """Restore the champion that ``version`` (default: the current champion) replaced;
    returns the restored version. When ``version`` is no longer the champion, the
    rollback already happened and the current champion is returned."""
    current = registry.by_alias(model, CHAMPION)
    if current is None:
        raise ActionError(f"model {model!r} has no champion to roll back")
    if version is not None and current.version != str(version):
        return current.version
    previous = current.tags.get(TAG_PREVIOUS_CHAMPION)
    if not previous:
        raise ActionError(
            f"champion {model} v{current.version} has no previous champion to restore"
        )
    registry.set_version_tag(model, current.version, TAG_VERDICT, "rolled_back")
    registry.set_alias(model, CHAMPION, previous, at=at, by=by)
    return previous
