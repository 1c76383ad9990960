"""SignalResult's hand-written __init__ builds what the dataclass-generated one built.

The reference is a frozen slots dataclass with the same fields, defaults and flags, built
by the generated __init__.
"""

from __future__ import annotations

import copy
import dataclasses
import pickle
from typing import Any

import pytest

from driftwatch.detectors.base import SignalResult


@dataclasses.dataclass(frozen=True, slots=True)
class _Generated:
    signal: str
    group: str
    value: float
    feature: str | None = None
    threshold: float | None = None
    n_ref: int = 0
    n_cur: int = 0
    p_value: float | None = None
    details: dict[str, Any] = dataclasses.field(default_factory=dict, compare=False, hash=False)
    segment: str | None = None


CASES: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
    (("psi", "drift", 0.3), {}),
    (("psi", "drift", 0.3, "income", 0.1, 100, 50, None, {"eps": 1e-4}, "web"), {}),
    (("ks", "drift", 0.1), {"feature": "x", "p_value": 0.02, "details": None}),
    (("gini", "performance", float("nan")), {"segment": "shop", "n_cur": 7}),
]


def _fields(obj: object) -> tuple[Any, ...]:
    return tuple(getattr(obj, f.name) for f in dataclasses.fields(_Generated))


@pytest.mark.parametrize(("args", "kw"), CASES)
def test_same_fields_as_the_generated_init(args, kw) -> None:
    got, want = SignalResult(*args, **kw), _Generated(*args, **kw)
    assert repr(_fields(got)) == repr(_fields(want))  # NaN and None alike
    assert repr(got).replace("SignalResult", "_Generated") == repr(want)


def test_default_details_are_a_new_dict_each_time() -> None:
    a, b = SignalResult("psi", "drift", 0.1), SignalResult("psi", "drift", 0.1)
    assert a.details == {} and a.details is not b.details


def test_frozen_hashable_and_replaceable() -> None:
    r = SignalResult("psi", "drift", 0.3, "income", 0.1, details={"k": 1})
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.value = 1.0  # type: ignore[misc]
    assert hash(r) == hash(SignalResult("psi", "drift", 0.3, "income", 0.1))
    assert r == SignalResult("psi", "drift", 0.3, "income", 0.1, details={"other": 2})
    s = dataclasses.replace(r, value=0.5)
    assert (s.value, s.details, s.feature) == (0.5, {"k": 1}, "income")
    for c in (pickle.loads(pickle.dumps(r)), copy.deepcopy(r), SignalResult.from_dict(r.to_dict())):
        assert c == r and c.details == r.details
    with pytest.raises(TypeError):
        SignalResult("psi", "drift")  # type: ignore[call-arg]
