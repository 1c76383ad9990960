"""One exception tree for the whole package.

Every error driftwatch raises on purpose derives from :class:`DriftwatchError`, so a
caller can catch the package's failures without catching programming errors.

>>> err = ConfigError("expected a number", file="p.yaml", line=3, col=5, found="'abc'")
>>> str(err).splitlines()[0]
"p.yaml:3:5: expected a number, found 'abc'"
>>> isinstance(PolicyError("x"), ConfigError)
True
>>> err.recast(PolicyError).location
'p.yaml:3:5'
>>> str(ConfigError("--champion-column needs --champion"))
'--champion-column needs --champion'
"""

from __future__ import annotations

from typing import TypeVar

__all__ = [
    "ActionError",
    "ConfigError",
    "ConnectorError",
    "DataFrameError",
    "DriftwatchError",
    "MissingExtraError",
    "PolicyError",
    "PoolError",
    "ReplayError",
    "ServiceError",
    "SourceError",
    "StateError",
]


ConfigErrorT = TypeVar("ConfigErrorT", bound="ConfigError")


class DriftwatchError(Exception):
    """Root of every error driftwatch raises deliberately."""


class ConfigError(DriftwatchError):
    """A configuration file (connector, policy, service) is invalid.

    Carries where (``file:line:col``, 1-based), the path inside the document, what was
    expected and what was found, plus an optional excerpt with a caret.
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        col: int | None = None,
        path: str | None = None,
        found: str | None = None,
        excerpt: str | None = None,
        hint: str | None = None,
    ) -> None:
        self.message = message
        self.file = file
        self.line = line
        self.col = col
        self.path = path
        self.found = found
        self.excerpt = excerpt
        self.hint = hint
        super().__init__(self.render())

    def fields(self) -> dict[str, str | int | None]:
        """Everything but the message, to rebuild the error (or another leaf) from it."""
        return {
            "file": self.file,
            "line": self.line,
            "col": self.col,
            "path": self.path,
            "found": self.found,
            "excerpt": self.excerpt,
            "hint": self.hint,
        }

    def recast(self, cls: type[ConfigErrorT], **changes: str | int | None) -> ConfigErrorT:
        """The same error as another leaf of the tree (a YAML error inside a policy file
        becomes a :class:`PolicyError`), optionally with some fields changed."""
        return cls(self.message, **{**self.fields(), **changes})  # type: ignore[arg-type]

    @property
    def location(self) -> str:
        """``file:line:col``; empty for an error with neither file nor line (a
        command-line option's, which its message names)."""
        if self.file is None and self.line is None:
            return ""
        parts = [self.file or "<string>"]
        if self.line is not None:
            parts.append(str(self.line))
            if self.col is not None:
                parts.append(str(self.col))
        return ":".join(parts)

    def render(self) -> str:
        head = f"{self.location}: {self.message}" if self.location else self.message
        if self.found is not None:
            head += f", found {self.found}"
        lines = [head]
        if self.path:
            lines.append(f"  at {self.path}")
        if self.hint:
            lines.append(f"  hint: {self.hint}")
        if self.excerpt:
            lines.append(self.excerpt)
        return "\n".join(lines)


class ConnectorError(ConfigError):
    """A connector definition is invalid."""


class PolicyError(ConfigError):
    """A policy file is invalid."""


class SourceError(DriftwatchError):
    """A source cannot be read at all (as opposed to one bad record, which is dead-lettered)."""


class DataFrameError(SourceError):
    """A table given to the Python API cannot be assessed (empty, a column missing...)."""


class MissingExtraError(DriftwatchError, ModuleNotFoundError):
    """An optional dependency is not installed; the message names the extra to install."""


class ServiceError(DriftwatchError):
    """The daemon cannot start or serve (its HTTP port is taken, for instance)."""


class StateError(DriftwatchError):
    """A checkpoint or state store is unreadable or inconsistent."""


class ReplayError(DriftwatchError):
    """A replay cannot go on (a process of its own it relies on has stopped)."""


class ActionError(DriftwatchError):
    """An action (online update, shadow, retrain, alert) failed."""


class PoolError(DriftwatchError):
    """The GPU pool refused or lost a job."""
