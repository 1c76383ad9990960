"""Package attributes imported on first use, so importing a package stays cheap.

A package that re-exports names from heavy modules (MLflow, the daemon) sets its module
``__getattr__`` from :func:`lazy_attributes` with a map of name to defining module.

>>> getattr_ = lazy_attributes("pkg", {"sqrt": "math"})
>>> getattr_("sqrt")(9.0)
3.0
>>> getattr_("nope")
Traceback (most recent call last):
...
AttributeError: module 'pkg' has no attribute 'nope'
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_attributes"]


def lazy_attributes(package: str, where: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` that imports ``where[name]`` and returns its ``name``."""

    def __getattr__(name: str) -> Any:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(where[name]), name)

    return __getattr__
