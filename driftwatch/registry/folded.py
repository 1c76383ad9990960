"""Which of a champion's categorical inputs reach it folded: levels outside the top K.

Live categorical values are kept as the reference's ``detectors.top_k`` most frequent
levels; a level the reference holds beyond them is kept as ``__other__``
(:data:`~driftwatch.schema.OTHER_LEVEL`), and that is what a model scoring live rows (the
champion and its challengers in shadow, an online update) is given for it. A bank's own
model trained on every level then reads them as one it never saw. The start says so, with
the ``top_k`` that keeps them all.

>>> from driftwatch.schema import FeatureSchema
>>> schema = FeatureSchema(categorical=("org", "purpose"), levels=(("a", "b"), ("car",)),
...                        other=(frozenset({"c", "d", "e"}), frozenset()))
>>> print(folded_note(["org", "purpose", "income"], schema))
its input 'org' has 5 levels in the reference, 3 of them outside its 2 most frequent: \
those reach the model as '__other__' on live rows; detectors.top_k: 5 in the policy keeps \
every level
>>> folded_note(["purpose"], schema) is None
True
"""

from __future__ import annotations

from collections.abc import Iterable

from driftwatch.schema import OTHER_LEVEL, FeatureSchema

__all__ = ["folded_note"]


def folded_note(features: Iterable[str], schema: FeatureSchema) -> str | None:
    """What to say of the connector ``features`` a model reads (its inputs, mapped) that
    ``schema`` folds into ``__other__``; None where it folds none of them. A feature that
    folds any keeps ``top_k`` levels: their count is the setting's value."""
    folded = []
    for name in dict.fromkeys(features):
        if name not in schema.categorical:
            continue
        j = schema.categorical.index(name)
        if schema.other[j]:
            folded.append((name, len(schema.levels[j]), len(schema.other[j])))
    if not folded:
        return None
    widest = max(k + o for _, k, o in folded)
    if len(folded) == 1:
        name, k, o = folded[0]
        what = (f"its input {name!r} has {k + o} levels in the reference, {o} of them outside "
                f"its {k} most frequent: those reach")
    else:
        listed = ", ".join(f"{n!r} ({o} of {k + o})" for n, k, o in folded)
        what = (f"its inputs {listed} have levels in the reference outside the "
                f"{max(k for _, k, _ in folded)} most frequent: those reach")
    return (f"{what} the model as {OTHER_LEVEL!r} on live rows; detectors.top_k: {widest} "
            "in the policy keeps every level")
