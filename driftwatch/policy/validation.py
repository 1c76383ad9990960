"""Pydantic's validation errors, rewritten for the person who edits the policy.

Each error is mapped back through the YAML positions to ``file:line:col``, with the
document path, what was expected and what was found, and the line with a caret.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from driftwatch.errors import PolicyError
from driftwatch.policy.errors import describe
from driftwatch.yamlio import LocatedDoc, PathT, nearest

__all__ = ["validation_errors"]

#: Already reported, more plainly, by the structural pass.
_STRUCTURAL = {"extra_forbidden", "union_tag_invalid", "union_tag_not_found"}

_EXPECTED = {
    "float_type": "expected a number",
    "float_parsing": "expected a number",
    "finite_number": "expected a finite number",
    "int_type": "expected a whole number",
    "int_parsing": "expected a whole number",
    "int_from_float": "expected a whole number",
    "bool_type": "expected true or false",
    "bool_parsing": "expected true or false",
    "string_type": "expected a string",
    "list_type": "expected a list",
    "dict_type": "expected a mapping",
    "model_type": "expected a mapping",
    "model_attributes_type": "expected a mapping",
}

_BOUNDS = {
    "greater_than": "greater than {gt}",
    "greater_than_equal": "of at least {ge}",
    "less_than": "less than {lt}",
    "less_than_equal": "of at most {le}",
}


def validation_errors(
    exc: ValidationError, doc: LocatedDoc, covered: set[PathT] = frozenset()  # type: ignore[assignment]
) -> list[PolicyError]:
    """One :class:`PolicyError` per pydantic error that the structural pass did not cover.

    ``covered`` holds paths already explained: a missing key that an unknown key nearby
    was probably meant to be (``thresold`` for ``thresholds``) is not reported twice.
    """
    out: list[PolicyError] = []
    seen: set[PathT] = set(covered)
    for err in exc.errors(include_url=False):
        if err["type"] in _STRUCTURAL:
            continue
        path = _data_path(doc.data, err["loc"])
        if path in seen:  # one error per place: union branches repeat themselves
            continue
        seen.add(path)
        out.append(_to_policy_error(err, path, doc))
    return out


def _data_path(data: Any, loc: tuple[int | str, ...]) -> PathT:
    """The part of pydantic's ``loc`` that names places in the data.

    Union tags and validator names in ``loc`` are skipped; a missing key ends the path
    and is kept, so the error can name it.
    """
    path: list[str | int] = []
    node = data
    for i, part in enumerate(loc):
        in_dict = isinstance(node, dict) and part in node
        in_list = isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        if in_dict or in_list:
            node = node[part]  # type: ignore[index]
            path.append(part)
        elif i == len(loc) - 1 and isinstance(node, dict) and isinstance(part, str):
            path.append(part)  # the missing key itself
    return tuple(path)


def _to_policy_error(err: ErrorDetails, path: PathT, doc: LocatedDoc) -> PolicyError:
    kind = err["type"]
    ctx: dict[str, Any] = dict(err.get("ctx") or {})
    value = err.get("input")
    hint = ctx.get("hint")
    if kind == "missing":
        return doc.error(path[:-1], f"missing required key {path[-1]!r}", key=True,
                         cls=PolicyError)
    if kind == "literal_error":
        expected = str(ctx.get("expected", ""))
        choices = re.findall(r"'([^']*)'", expected)
        guess = nearest(value, choices) if isinstance(value, str) else None
        hint = hint or (f"did you mean {guess!r}?" if guess else None)
        message = f"expected {expected}"
    elif kind in _EXPECTED:
        message = _EXPECTED[kind]
    elif kind in _BOUNDS:
        nums = {k: f"{v:g}" if isinstance(v, float) else v for k, v in ctx.items()}
        message = "expected a value " + _BOUNDS[kind].format(**nums)
    elif kind == "too_short":
        n = ctx.get("min_length", 1)
        message = f"expected at least {n} item{'s' if n != 1 else ''}"
    elif kind == "value_error":
        message = str(err["msg"]).removeprefix("Value error, ")
        return doc.error(path, message, hint=hint, cls=PolicyError)
    else:  # our own PydanticCustomError messages are written for people already
        return doc.error(path, str(err["msg"]), found=_found(value, kind), hint=hint,
                         cls=PolicyError)
    return doc.error(path, message, found=describe(value), hint=hint, cls=PolicyError)


def _found(value: Any, kind: str) -> str | None:
    # a message that names the value (unknown detector 'x') needs no "found"
    if kind.startswith("unknown_") or kind in {"detector_group", "argv_string", "argv_item",
                                               "opt_in", "learner_order"}:
        return None
    return describe(value)
