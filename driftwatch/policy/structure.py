"""The first, structural pass over a policy: unknown keys and unknown action types.

It walks the YAML data beside the schema's models, before any type is checked, so a
typo reads as ``unknown key 'thresold' (did you mean 'thresholds'?)`` rather than as
a validator dump.
"""

from __future__ import annotations

import types
import typing
from typing import Any

from pydantic import BaseModel

from driftwatch.errors import PolicyError
from driftwatch.policy.catalog import ACTION_TYPES
from driftwatch.policy.fields import unknown_name
from driftwatch.yamlio import LocatedDoc, PathT, nearest

__all__ = ["structural_errors"]


def structural_errors(
    doc: LocatedDoc, model: type[BaseModel]
) -> tuple[list[PolicyError], set[PathT]]:
    """Unknown keys (with the nearest valid one) and unknown action ``type`` names.

    Also returns the paths of the keys suggested for typos, so a "missing key" error for
    the same key is not reported again.
    """
    errors: list[PolicyError] = []
    _walk(doc.data, model, (), doc, errors)
    suggested = {e.suggested for e in errors if isinstance(e, _Unknown) and e.suggested}
    return list(errors), suggested


class _Unknown(PolicyError):
    suggested: PathT | None = None


def _members(ann: Any) -> list[Any]:
    """Strip ``Annotated`` and split unions, recursively."""
    origin = typing.get_origin(ann)
    if origin is typing.Annotated:
        return _members(typing.get_args(ann)[0])
    if origin is typing.Union or origin is types.UnionType:
        return [m for a in typing.get_args(ann) for m in _members(a)]
    return [ann]


def _is_model(ann: Any) -> bool:
    return isinstance(ann, type) and issubclass(ann, BaseModel)


def _action_union(models: list[type[BaseModel]]) -> dict[str, type[BaseModel]] | None:
    tags: dict[str, type[BaseModel]] = {}
    for m in models:
        field = m.model_fields.get("type")
        if field is None or typing.get_origin(field.annotation) is not typing.Literal:
            return None
        tags[typing.get_args(field.annotation)[0]] = m
    return tags


def _walk(data: Any, ann: Any, path: PathT, doc: LocatedDoc, errors: list[PolicyError]) -> None:
    members = _members(ann)
    models = [m for m in members if _is_model(m)]
    if len(models) > 1:
        tags = _action_union(models)
        if tags is not None:
            _walk_action(data, tags, path, doc, errors)
        return
    if models and isinstance(data, dict):
        _walk_model(data, models[0], path, doc, errors)
        return
    for m in members:
        origin = typing.get_origin(m)
        if origin is list and isinstance(data, list):
            (item,) = typing.get_args(m)
            for i, v in enumerate(data):
                _walk(v, item, (*path, i), doc, errors)
            return
        if origin is dict and isinstance(data, dict):
            _, value_ann = typing.get_args(m)
            for k, v in data.items():
                _walk(v, value_ann, (*path, k), doc, errors)
            return


def _walk_model(
    data: dict[Any, Any], model: type[BaseModel], path: PathT, doc: LocatedDoc,
    errors: list[PolicyError],
) -> None:
    fields = {(f.alias or name): f for name, f in model.model_fields.items()}
    for key, value in data.items():
        field = fields.get(key) if isinstance(key, str) else None
        if field is None:
            guess = nearest(str(key), fields)
            msg = f"unknown key {key!r}" + (f" (did you mean {guess!r}?)" if guess else "")
            e = doc.error((*path, key), msg, key=True, cls=_Unknown,
                          hint="valid keys here: " + ", ".join(fields))
            if guess and guess not in data:
                e.suggested = (*path, guess)  # type: ignore[attr-defined]
            errors.append(e)
            continue
        ann = field.annotation
        if field.metadata:
            ann = typing.Annotated[(ann, *field.metadata)]
        _walk(value, ann, (*path, key), doc, errors)


def _walk_action(
    data: Any, tags: dict[str, type[BaseModel]], path: PathT, doc: LocatedDoc,
    errors: list[PolicyError],
) -> None:
    valid = "valid actions: " + ", ".join(ACTION_TYPES)
    if isinstance(data, str):
        if data not in tags:  # a bare name: ``mild: none``
            errors.append(doc.error(path, unknown_name("action", data, ACTION_TYPES),
                                    hint=valid, cls=PolicyError))
        return
    if not isinstance(data, dict):
        errors.append(doc.error(
            path, "expected an action: a name like alert, or a mapping with a type",
            found=repr(data), hint=valid, cls=PolicyError,
        ))
        return
    if "type" not in data:
        errors.append(doc.error(path, "missing required key 'type'", key=True, hint=valid,
                                cls=PolicyError))
        return
    name = data["type"]
    if not isinstance(name, str) or name not in tags:
        errors.append(doc.error((*path, "type"), unknown_name("action", name, ACTION_TYPES),
                                hint=valid, cls=PolicyError))
        return
    _walk_model(data, tags[name], path, doc, errors)
