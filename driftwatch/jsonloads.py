"""One JSON value from a line, as Python's own ``json`` writes them too: with ``NaN``,
``Infinity`` and ``-Infinity``.

``json.dumps`` writes a float NaN as the bare token ``NaN`` (and infinities as
``Infinity``) unless told not to, so a Python service that sends a missing feature as
``float("nan")`` publishes lines that are not strict JSON. orjson (and the scanner and the
block parser, which take only what orjson takes) refuses them: every such record was
dead-lettered as ``invalid_json``, and ``init`` stopped on the first. A line orjson
refuses that holds such a token is read again with ``json``, which takes them; any other
line's error is orjson's.

>>> loads(b'{"income": NaN, "age": 41, "limit": -Infinity}')
{'income': nan, 'age': 41, 'limit': -inf}
>>> loads(b'{"income": 3}')
{'income': 3}
>>> try:
...     loads(b'{"income": nan}')
... except ValueError as exc:
...     print(type(exc).__name__)
JSONDecodeError
"""

from __future__ import annotations

import json
from typing import Any

import orjson

__all__ = ["loads"]


def loads(data: bytes | bytearray | memoryview | str) -> Any:
    """The JSON value in ``data`` (orjson's reading; a line with ``NaN`` or ``Infinity``
    read by ``json``). Raises ``orjson.JSONDecodeError`` (a ``ValueError``)."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        raw = data.encode() if isinstance(data, str) else bytes(data)
        if b"NaN" not in raw and b"Infinity" not in raw:
            raise
        try:
            return json.loads(raw)
        except (ValueError, RecursionError):
            pass
        raise
