"""Safe YAML loading that remembers where every value came from.

Policies and connector definitions are data people edit by hand, so an error must point at
``file:line:col`` with the offending line and a caret. :func:`load_yaml` returns the plain
data plus a map from document paths to positions.

>>> doc = load_yaml("a:\\n  b: [1, two]\\n", file="x.yaml")
>>> doc.data
{'a': {'b': [1, 'two']}}
>>> doc.locate(("a", "b", 1))
(2, 10)
>>> err = doc.error(("a", "b", 1), "expected a number", found="'two'")
>>> print(err)
x.yaml:2:10: expected a number, found 'two'
  at a.b[1]
    2 |   b: [1, two]
      |          ^
>>> load_yaml("a: [1,", file="bad.yaml")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
driftwatch.errors.ConfigError: bad.yaml:1:7: YAML syntax error: expected ...
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from driftwatch.errors import ConfigError

__all__ = ["LocatedDoc", "PathT", "format_path", "load_yaml", "nearest", "render_excerpt"]

PathT = tuple[str | int, ...]


def format_path(path: Sequence[str | int]) -> str:
    """``("a", "b", 1)`` -> ``a.b[1]``."""
    out = ""
    for p in path:
        if isinstance(p, int):
            out += f"[{p}]"
        else:
            out += f".{p}" if out else str(p)
    return out or "<document>"


def nearest(word: str, choices: Iterable[str]) -> str | None:
    """The closest valid spelling, if one is close enough.

    >>> nearest("thresold", ["threshold", "features"])
    'threshold'
    """
    m = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return m[0] if m else None


def render_excerpt(text: str, line: int, col: int, context: int = 0) -> str:
    """The numbered source line(s) with a caret under ``col`` (both 1-based)."""
    lines = text.splitlines()
    if not (1 <= line <= len(lines)):
        return ""
    width = len(str(min(len(lines), line + context)))
    out = []
    for n in range(max(1, line - context), min(len(lines), line + context) + 1):
        out.append(f"    {n:>{width}} | {lines[n - 1]}")
        if n == line:
            out.append(f"    {'':>{width}} | {' ' * (col - 1)}^")
    return "\n".join(out)


@dataclass
class LocatedDoc:
    """Parsed YAML data plus the position (1-based line, col) of every node."""

    data: Any
    text: str
    file: str
    positions: dict[PathT, tuple[int, int]] = field(default_factory=dict)
    key_positions: dict[PathT, tuple[int, int]] = field(default_factory=dict)

    def locate(self, path: Sequence[str | int], *, key: bool = False) -> tuple[int, int]:
        """Position of the value at ``path`` (or of its key); the nearest parent if absent."""
        p = tuple(path)
        while True:
            if key and p in self.key_positions:
                return self.key_positions[p]
            if p in self.positions:
                return self.positions[p]
            if not p:
                return (1, 1)
            p = p[:-1]

    def error(
        self,
        path: Sequence[str | int],
        message: str,
        *,
        found: str | None = None,
        key: bool = False,
        hint: str | None = None,
        cls: type[ConfigError] = ConfigError,
    ) -> ConfigError:
        line, col = self.locate(path, key=key)
        return cls(
            message,
            file=self.file,
            line=line,
            col=col,
            path=format_path(path),
            found=found,
            excerpt=render_excerpt(self.text, line, col),
            hint=hint,
        )


def _walk(node: yaml.Node, path: PathT, doc: LocatedDoc) -> Any:
    doc.positions[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
    if isinstance(node, yaml.MappingNode):
        out: dict[Any, Any] = {}
        for k_node, v_node in node.value:
            key = _scalar(k_node) if isinstance(k_node, yaml.ScalarNode) else str(k_node.value)
            if key == "<<":  # merge keys are not supported: keep policies explicit
                raise ConfigError(
                    "YAML merge keys (<<) are not supported",
                    file=doc.file,
                    line=k_node.start_mark.line + 1,
                    col=k_node.start_mark.column + 1,
                )
            kp = (*path, key)
            doc.key_positions[kp] = (k_node.start_mark.line + 1, k_node.start_mark.column + 1)
            if key in out:
                line, col = doc.key_positions[kp]
                raise ConfigError(
                    f"duplicate key {key!r}",
                    file=doc.file,
                    line=line,
                    col=col,
                    path=format_path(kp),
                    excerpt=render_excerpt(doc.text, line, col),
                )
            out[key] = _walk(v_node, kp, doc)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_walk(v, (*path, i), doc) for i, v in enumerate(node.value)]
    return _scalar(node)


def _scalar(node: yaml.Node) -> Any:
    return yaml.SafeLoader.construct_object(_CONSTRUCTOR, node, deep=True)


_CONSTRUCTOR = yaml.SafeLoader("")


def load_yaml(source: str | Path, *, file: str | None = None) -> LocatedDoc:
    """Load one YAML document safely (no tags, no eval) with node positions.

    ``source`` is a path or the YAML text itself (then pass ``file`` for messages).
    Raises :class:`ConfigError` with ``file:line:col`` on syntax errors.
    """
    if isinstance(source, Path):
        name = file or str(source)
        try:
            text = source.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot read file: {exc.strerror}", file=name) from exc
    else:
        text, name = source, file or "<string>"
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        col = mark.column + 1 if mark else None
        problem = exc.problem or "invalid YAML"
        raise ConfigError(
            f"YAML syntax error: {problem}",
            file=name,
            line=line,
            col=col,
            excerpt=render_excerpt(text, line, col) if line and col else None,
        ) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"YAML syntax error: {exc}", file=name) from None
    doc = LocatedDoc(data=None, text=text, file=name)
    if node is None:
        doc.data = None
        return doc
    try:
        doc.data = _walk(node, (), doc)
    except yaml.constructor.ConstructorError as exc:
        mark = exc.problem_mark
        raise ConfigError(
            f"unsupported YAML value: {exc.problem}",
            file=name,
            line=mark.line + 1 if mark else None,
            col=mark.column + 1 if mark else None,
        ) from None
    return doc
