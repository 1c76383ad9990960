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
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from driftwatch.errors import ConfigError

__all__ = [
    "LIMITS",
    "LocatedDoc",
    "PathT",
    "YamlLimits",
    "format_path",
    "load_yaml",
    "nearest",
    "read_capped",
    "render_excerpt",
]

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


def render_excerpt(text: str, line: int, col: int, context: int = 0, width: int = 100) -> str:
    """The numbered source line(s) with a caret under ``col`` (both 1-based).

    A line longer than ``width`` is cut around ``col`` (``...`` marks the cuts):

    >>> print(render_excerpt("x" * 300 + " bad " + "y" * 300, 1, 302, width=20))
        1 | ...xxxxxxxxx bad yyyyyy...
          |              ^
    """
    lines = text.splitlines()
    if not (1 <= line <= len(lines)):
        return ""
    num_w = len(str(min(len(lines), line + context)))
    start = max(0, col - 1 - width // 2) if len(lines[line - 1]) > width else 0
    out = []
    for n in range(max(1, line - context), min(len(lines), line + context) + 1):
        src = lines[n - 1]
        if len(src) > width:
            cut = src[start:start + width]
            src = ("..." if start else "") + cut + ("..." if start + width < len(src) else "")
        out.append(f"    {n:>{num_w}} | {src}")
        if n == line:
            shift = 3 if start else 0
            out.append(f"    {'':>{num_w}} | {' ' * (col - 1 - start + shift)}^")
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


@dataclass(frozen=True, slots=True)
class YamlLimits:
    """Caps that keep one hand-edited file from taking the process's memory or time.

    ``max_nodes`` counts values after aliases are expanded, so a "billion laughs" file
    (anchors that repeat anchors) is refused before it grows; ``max_depth`` bounds the
    nesting (and a recursive alias, which nests forever).
    """

    max_bytes: int = 1 << 20
    max_depth: int = 64
    max_nodes: int = 50_000


#: The caps every policy, connector and service file is read under.
LIMITS = YamlLimits()

# libyaml when the wheel has it (fast), the pure-Python parser otherwise; the latter also
# words syntax errors better, so it re-reads a file the fast one refused.
_FAST: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _size(n: int) -> str:
    return f"{n / (1 << 20):.1f} MiB" if n >= 1 << 20 else f"{n / 1024:.0f} KiB"


def _too_big(name: str, size: int, limits: YamlLimits) -> ConfigError:
    return ConfigError(f"file too large: {_size(size)} (the limit is {_size(limits.max_bytes)})",
                       file=name, hint="a policy or connector file is a few KiB of YAML")


def read_capped(path: Path, *, file: str | None = None, limits: YamlLimits = LIMITS) -> bytes:
    """The file's bytes, refused (:class:`ConfigError`) without reading it whole when it
    is over ``limits.max_bytes``, or when it cannot be read."""
    name = file or str(path)
    try:
        with path.open("rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size > limits.max_bytes:
                raise _too_big(name, size, limits)
            data = fh.read(limits.max_bytes + 1)  # st_size may lie (pipes, /proc)
    except OSError as exc:
        raise ConfigError(f"cannot read file: {exc.strerror or exc}", file=name) from exc
    if len(data) > limits.max_bytes:
        raise _too_big(name, len(data), limits)
    return data


def _decode(data: bytes, name: str) -> str:
    """UTF-8 text, or an error at the line and column of the first byte that is not."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = exc.start
        line_start = data.rfind(b"\n", 0, bad) + 1
        line = data.count(b"\n", 0, bad) + 1
        col = len(data[line_start:bad].decode("utf-8", "replace")) + 1
        hint = "save the file as UTF-8"
        if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
            hint = "the file looks like UTF-16: save it as UTF-8"
        raise ConfigError(
            f"not UTF-8 text: byte 0x{data[bad]:02x} cannot be decoded", file=name,
            line=line, col=col, hint=hint,
            excerpt=render_excerpt(data.decode("utf-8", "replace"), line, col),
        ) from None


def _limit_error(name: str, text: str, mark: Any, message: str, hint: str) -> ConfigError:
    line, col = (mark.line + 1, mark.column + 1) if mark is not None else (None, None)
    return ConfigError(message, file=name, line=line, col=col, hint=hint,
                       excerpt=render_excerpt(text, line, col) if line and col else None)


_DEPTH_HINT = "keep a policy's structure flat: a few levels of mappings and lists"
_NODES_HINT = "anchors (&a) and aliases (*a) expand: is this a 'billion laughs' file?"


def _scan(text: str, name: str, limits: YamlLimits, loader: Any) -> None:
    """Walk the parser's events (no tree is built) and enforce depth and node caps."""
    depth = nodes = 0
    for ev in yaml.parse(text, Loader=loader):
        if isinstance(ev, yaml.NodeEvent):
            nodes += 1
            if nodes > limits.max_nodes:
                raise _limit_error(name, text, ev.start_mark,
                                   f"too many values: more than {limits.max_nodes}",
                                   "a policy or connector file holds a few hundred values")
        if isinstance(ev, yaml.CollectionStartEvent):
            depth += 1
            if depth > limits.max_depth:
                raise _limit_error(name, text, ev.start_mark,
                                   f"nested deeper than {limits.max_depth} levels", _DEPTH_HINT)
        elif isinstance(ev, yaml.CollectionEndEvent):
            depth -= 1


def _syntax_error(exc: yaml.YAMLError, text: str, name: str) -> ConfigError:
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        col = mark.column + 1 if mark else None
        problem = exc.problem or "invalid YAML"
        if exc.context and exc.context.startswith("expected"):  # "... a single document"
            problem = f"{exc.context}, {problem}"
        return ConfigError(
            f"YAML syntax error: {problem}", file=name, line=line, col=col,
            excerpt=render_excerpt(text, line, col) if line and col else None)
    if isinstance(exc, yaml.reader.ReaderError) and isinstance(exc.position, int):
        pos = min(exc.position, len(text))
        line = text.count("\n", 0, pos) + 1
        col = pos - (text.rfind("\n", 0, pos) + 1) + 1
        char = exc.character if isinstance(exc.character, int) else ord(str(exc.character)[:1]
                                                                          or "\0")
        return ConfigError(
            f"YAML syntax error: character U+{char:04X} is not allowed in YAML text",
            file=name, line=line, col=col, hint="control characters (other than tab and "
            "newline) must be written as escapes inside double quotes, e.g. \"\\x00\"")
    return ConfigError(f"YAML syntax error: {exc}", file=name)


def _compose(text: str, name: str, limits: YamlLimits) -> yaml.Node | None:
    try:
        _scan(text, name, limits, _FAST)
        return yaml.compose(text, Loader=_FAST)
    except yaml.YAMLError as fast:
        if "nesting depth" in str(getattr(fast, "problem", "")):  # libyaml's own cap (1000)
            raise _limit_error(name, text, getattr(fast, "problem_mark", None),
                               f"nested deeper than {limits.max_depth} levels",
                               _DEPTH_HINT) from None
        if _FAST is not yaml.SafeLoader:
            try:
                _scan(text, name, limits, yaml.SafeLoader)
            except yaml.YAMLError as exc:
                raise _syntax_error(exc, text, name) from None
        raise _syntax_error(fast, text, name) from None


class _Walker:
    """Builds plain data from composed nodes, counting values as aliases expand them."""

    def __init__(self, doc: LocatedDoc, limits: YamlLimits) -> None:
        self.doc = doc
        self.limits = limits
        self.nodes = 0
        self.constructor = yaml.SafeLoader("")  # one per file: it caches every node it built

    def error(self, node: yaml.Node, path: PathT, message: str, hint: str) -> ConfigError:
        err = _limit_error(self.doc.file, self.doc.text, node.start_mark, message, hint)
        return err.recast(ConfigError, path=format_path(path))

    def walk(self, node: yaml.Node, path: PathT) -> Any:
        self.nodes += 1
        if self.nodes > self.limits.max_nodes:
            raise self.error(node, path, f"aliases expand to more than {self.limits.max_nodes} "
                             "values", _NODES_HINT)
        if len(path) > self.limits.max_depth:
            raise self.error(node, path, f"nested deeper than {self.limits.max_depth} levels "
                             "(an alias inside its own anchor?)", _DEPTH_HINT)
        doc = self.doc
        doc.positions[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
        if isinstance(node, yaml.MappingNode):
            out: dict[Any, Any] = {}
            for k_node, v_node in node.value:
                if not isinstance(k_node, yaml.ScalarNode):
                    raise self.error(k_node, path, "a key must be a plain value, not a list or "
                                     "mapping", "write keys as names: `name: value`")
                merge = k_node.tag == "tag:yaml.org,2002:merge"
                key = "<<" if merge else self.scalar(k_node)
                if key == "<<":  # merge keys are not supported: keep policies explicit
                    raise ConfigError("YAML merge keys (<<) are not supported", file=doc.file,
                                      line=k_node.start_mark.line + 1,
                                      col=k_node.start_mark.column + 1)
                kp = (*path, key)
                doc.key_positions[kp] = (k_node.start_mark.line + 1,
                                         k_node.start_mark.column + 1)
                if key in out:
                    line, col = doc.key_positions[kp]
                    raise ConfigError(f"duplicate key {key!r}", file=doc.file, line=line,
                                      col=col, path=format_path(kp),
                                      excerpt=render_excerpt(doc.text, line, col))
                out[key] = self.walk(v_node, kp)
            return out
        if isinstance(node, yaml.SequenceNode):
            return [self.walk(v, (*path, i)) for i, v in enumerate(node.value)]
        return self.scalar(node)

    def scalar(self, node: yaml.Node) -> Any:
        try:
            return self.constructor.construct_object(node, deep=True)
        except yaml.constructor.ConstructorError as exc:
            mark = exc.problem_mark or node.start_mark
            raise _limit_error(self.doc.file, self.doc.text, mark,
                               f"unsupported YAML value: {exc.problem}",
                               "policies are plain data: no tags such as !!python/...") from None
        except (ValueError, TypeError, OverflowError) as exc:  # !!int x, 2020-13-45
            raise _limit_error(self.doc.file, self.doc.text, node.start_mark,
                               f"invalid {node.tag.rsplit(':', 1)[-1]} value {node.value!r}: "
                               f"{exc}", "quote it to make it a string") from None


def load_yaml(source: str | bytes | Path, *, file: str | None = None,
              limits: YamlLimits = LIMITS) -> LocatedDoc:
    """Load one YAML document safely (no tags, no eval) with node positions.

    ``source`` is a path, the file's bytes or the YAML text itself (then pass ``file``
    for messages). Raises :class:`ConfigError` with ``file:line:col`` on syntax errors,
    and with the reason when a file is not UTF-8 or is over one of ``limits``:

    >>> load_yaml("a: &x [1, 2]\\nb: [*x, *x, *x]\\n", limits=YamlLimits(max_nodes=12))
    Traceback (most recent call last):
    ...
    driftwatch.errors.ConfigError: <string>:1:8: aliases expand to more than 12 values
      at b[2][0]
      hint: anchors (&a) and aliases (*a) expand: is this a 'billion laughs' file?
        1 | a: &x [1, 2]
          |        ^
    >>> load_yaml(b"a: caf\\xe9\\n", file="p.yaml")
    Traceback (most recent call last):
    ...
    driftwatch.errors.ConfigError: p.yaml:1:7: not UTF-8 text: byte 0xe9 cannot be decoded
      hint: save the file as UTF-8
        1 | a: caf\ufffd
          |       ^
    """
    name = file or (str(source) if isinstance(source, Path) else "<string>")
    if isinstance(source, Path):
        source = read_capped(source, file=name, limits=limits)
    if isinstance(source, bytes):
        if len(source) > limits.max_bytes:
            raise _too_big(name, len(source), limits)
        text = _decode(source, name)
    else:
        text = source
        if len(text) > limits.max_bytes:
            raise _too_big(name, len(text.encode("utf-8", "replace")), limits)
    node = _compose(text, name, limits)
    doc = LocatedDoc(data=None, text=text, file=name)
    if node is not None:
        doc.data = _Walker(doc, limits).walk(node, ())
    return doc
