"""Read a policy file: YAML with positions, then keys, then types, then cross-field rules.

Every problem found is reported at once, each at ``file:line:col`` with a caret:

>>> text = '''apiVersion: driftwatch/v1
... kind: DriftPolicy
... metadata: {name: demo}
... model: {name: credit, reference: ref.parquet}
... window: {kind: count, pane: 500}
... signals:
...   - detector: psi
...     thresold: 0.1
...     thresholds: {mild: 0.1, moderate: 0.05}
... cooldown: {mild: 15 minutes}
... '''
>>> try:  # doctest: +ELLIPSIS
...     load_policy_text(text, file="demo.yaml")
... except PolicyErrors as exc:
...     print(exc)
demo.yaml: 2 errors
demo.yaml:8:5: unknown key 'thresold' (did you mean 'thresholds'?)
  at signals[0].thresold
  hint: valid keys here: detector, features, direction, ...
    8 |     thresold: 0.1
      |     ^
demo.yaml:10:18: expected a duration like 15m, 1h or 7d (units s, m, h, d, w), found '15 minutes'
  at cooldown.mild
    10 | cooldown: {mild: 15 minutes}
       |                  ^
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from pydantic import ValidationError

from driftwatch.errors import ConfigError, PolicyError
from driftwatch.policy.checks import semantic_errors
from driftwatch.policy.domains import domain_errors
from driftwatch.policy.errors import PolicyErrors, describe
from driftwatch.policy.schema import API_VERSION, KIND, Policy
from driftwatch.policy.structure import structural_errors
from driftwatch.policy.validation import validation_errors
from driftwatch.yamlio import LocatedDoc, load_yaml

__all__ = ["load_policy", "load_policy_bytes", "load_policy_text", "parse_policy"]


def load_policy(path: str | Path) -> Policy:
    """Load and check a policy file; raises :class:`PolicyErrors` listing every problem."""
    return _load(Path(path), None)


def load_policy_text(text: str, *, file: str = "<string>") -> Policy:
    """Like :func:`load_policy` for YAML text; ``file`` names it in messages."""
    return _load(text, file)


def load_policy_bytes(data: bytes, *, file: str) -> Policy:
    """Like :func:`load_policy` for a file's bytes already read (they must be UTF-8)."""
    return _load(data, file)


def _load(source: str | bytes | Path, file: str | None) -> Policy:
    try:
        doc = load_yaml(source, file=file)
    except ConfigError as exc:
        raise PolicyErrors([_as_policy_error(exc)]) from None
    return parse_policy(doc)


def parse_policy(doc: LocatedDoc) -> Policy:
    """Check an already-loaded YAML document and build the :class:`Policy`."""
    if not isinstance(doc.data, dict):
        raise PolicyErrors([doc.error(
            (), f"expected a policy mapping (apiVersion: {API_VERSION}, kind: {KIND}, ...)",
            found=describe(doc.data) if doc.data is not None else "an empty document",
            cls=PolicyError,
        )])
    errors, suggested = structural_errors(doc, Policy)
    policy: Policy | None = None
    try:
        policy = Policy.model_validate(doc.data)
    except ValidationError as exc:
        errors += validation_errors(exc, doc, suggested)
    errors += semantic_errors(doc)
    seen = {(e.line, e.col) for e in errors}  # a place already explained stays explained
    errors += [e for e in domain_errors(doc) if (e.line, e.col) not in seen]
    if errors:
        errors.sort(key=lambda e: (e.line or 0, e.col or 0))
        raise PolicyErrors(errors)
    assert policy is not None
    lines = {p: line for p, (line, _col) in doc.positions.items()}
    digest = hashlib.sha256(doc.text.encode("utf-8")).hexdigest()
    policy.attach_source(doc.file, lines, digest)
    return policy


def _as_policy_error(exc: ConfigError) -> PolicyError:
    return exc.recast(PolicyError)
