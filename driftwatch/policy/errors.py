"""Policy errors that carry several problems at once, and expectation syntax errors.

>>> a = PolicyError("unknown key 'x'", file="p.yaml", line=3, col=1)
>>> b = PolicyError("expected a number", file="p.yaml", line=9, col=12, found="'high'")
>>> print(PolicyErrors([a, b]))
p.yaml: 2 errors
p.yaml:3:1: unknown key 'x'
p.yaml:9:12: expected a number, found 'high'
>>> str(PolicyErrors([a])) == str(a)
True
"""

from __future__ import annotations

from collections.abc import Sequence

from driftwatch.errors import PolicyError

__all__ = ["ExpectationError", "PolicyErrors", "describe"]


class PolicyErrors(PolicyError):
    """Every problem found in one policy file; ``errors`` holds them in file order.

    Its own ``file``/``line``/``col``/``message`` are those of the first error, so code
    that handles a single :class:`PolicyError` still gets a useful location.
    """

    def __init__(self, errors: Sequence[PolicyError]) -> None:
        if not errors:
            raise ValueError("PolicyErrors needs at least one error")
        self.errors = list(errors)
        first = self.errors[0]
        super().__init__(first.message, **first.fields())  # type: ignore[arg-type]

    def render(self) -> str:
        if len(self.errors) == 1:
            return self.errors[0].render()
        head = f"{self.errors[0].file or '<string>'}: {len(self.errors)} errors"
        return "\n".join([head, *(e.render() for e in self.errors)])


class ExpectationError(PolicyError):
    """A replay expectation that cannot be parsed; ``col`` points into its text."""


def describe(value: object) -> str:
    """What was found, as a person would say it.

    >>> describe("high"), describe(True), describe({"a": 1}), describe(None)
    ("'high'", 'true', 'a mapping', 'nothing (null)')
    """
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list" if value else "an empty list"
    if isinstance(value, str):
        return repr(value)
    return str(value)
