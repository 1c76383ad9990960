"""Reference, connector and policy must agree on the columns: checked before anything runs.

The reference table's columns are features unless the policy's ``reference:`` block names
them (score, label, decision, exposure) or ignores them. A named column the table lacks, a
feature the connector does not map, a connector feature the table lacks, or a
``model.features`` entry that is no feature: each is a located error (``file:line:col`` in
the policy or the connector) naming the columns, with a hint.

>>> import pandas as pd, tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> pd.DataFrame({"x": [1.0], "score": [0.5]}).to_csv(d / "ref.csv", index=False)
>>> reference_columns(d / "ref.csv")
['x', 'score']
>>> resolve_reference("nope.csv", d).name
'nope.csv'
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from driftwatch.connectors.config import Connector
from driftwatch.csvheader import REFERENCE_FIX, refuse_data_header
from driftwatch.csvnames import REFERENCE_NAMES, named_header
from driftwatch.errors import ConfigError, PolicyError, SourceError
from driftwatch.policy.errors import PolicyErrors
from driftwatch.policy.schema import Policy
from driftwatch.windows.conventions import TableConventions
from driftwatch.yamlio import LocatedDoc, PathT, load_yaml, nearest

__all__ = ["check_reference", "reference_columns", "resolve_reference"]

_ROLE_PATH: dict[str, PathT] = {
    "score": ("reference", "score"),
    "label": ("reference", "label"),
    "decision": ("reference", "decision"),
    "exposure": ("reference", "exposure"),
    "segment": ("reference", "segment"),
}


def resolve_reference(path: str | Path, base: Path | None = None) -> Path:
    """A reference path as replay opens it: absolute, or relative to ``base`` (the working
    directory by default)."""
    p = Path(path)
    if p.is_absolute() or p.exists():
        return p
    return (base or Path.cwd()) / p


def reference_columns(path: Path, names: Sequence[str] | None = None) -> list[str]:
    """The column names of a reference table (CSV, CSV.gz, Parquet) without reading it all
    (``names``: those of a CSV without a header line, checked against its first lines as
    the reader checks them); for a saved profile (``.json`` / ``.json.gz``), its feature
    names."""
    import pandas as pd

    try:
        if path.name.endswith((".json", ".json.gz")):
            from driftwatch.windows.profile import ReferenceProfile

            return list(ReferenceProfile.load(path).schema.names)
        from driftwatch.windows.profile import (
            is_parquet,
            reference_separator,
            refuse_parquet_names,
        )

        if is_parquet(path):
            refuse_parquet_names(path, names)
            import pyarrow.parquet as pq

            # pandas' own columns: its saved index is no column of the table
            meta = pq.read_schema(path).pandas_metadata or {}
            index = {i for i in meta.get("index_columns", []) if isinstance(i, str)}
            return [n for n in pq.read_schema(path).names if n not in index]

        sep = reference_separator(path) or ","
        if names is not None:
            named_header(path, sep, names, f"reference {path}", given=REFERENCE_NAMES)
            return list(names)
        refuse_data_header(path, sep, f"reference {path}", fix=REFERENCE_FIX)
        return [str(c).strip() for c in pd.read_csv(path, nrows=0, sep=sep).columns]
    except (OSError, ValueError) as exc:
        raise SourceError(f"cannot read reference {path}: {exc}") from exc


def _policy_doc(policy: Policy) -> LocatedDoc | None:
    try:
        return load_yaml(Path(policy.file))
    except (OSError, ConfigError):
        return None


def _perr(doc: LocatedDoc | None, policy: Policy | None, path: PathT, msg: str,
          hint: str | None = None, key: bool = False) -> PolicyError:
    if doc is not None:
        return doc.error(path, msg, hint=hint, key=key, cls=PolicyError)  # type: ignore[return-value]
    return PolicyError(msg, file=policy.file if policy else None, hint=hint)


def _listing(cols: Sequence[str], limit: int = 12) -> str:
    shown = ", ".join(cols[:limit])
    return shown + (f", ... ({len(cols)} in all)" if len(cols) > limit else "")


def check_reference(
    policy: Policy | None,
    *,
    connector: Connector | None = None,
    reference: str | Path | None = None,
    base_dir: Path | None = None,
) -> list[str]:
    """Open the reference and check it against the policy and the connector.

    Returns the feature columns. Raises :class:`PolicyErrors` (policy problems, every one)
    or :class:`~driftwatch.errors.ConnectorError` (the first connector problem).
    """
    doc = _policy_doc(policy) if policy is not None else None
    if policy is not None and connector is not None and connector.numbers_records() \
            and policy.window.kind == "time":
        # checked before the reference is read: no time to cut panes by
        raise PolicyErrors([_perr(
            doc, policy, ("window", "kind"), "the connector's predictions carry no time "
            f"(event_time: {{source: order}} in {connector.file}): expected window.kind: "
            "count", hint="count windows: kind: count with pane: N records")])
    ref = reference or (policy.model.reference if policy else None)
    if ref is None:
        raise ConfigError("no reference: give --reference or a policy whose model names one")
    path = resolve_reference(str(ref), base_dir)
    if not path.exists():
        where: PathT = ("model", "reference")
        msg = f"the reference {str(ref)!r} does not exist"
        hint = (f"looked for {path}; a relative path is read from the working directory"
                if reference is None else "check --reference")
        if reference is None and policy is not None:
            raise PolicyErrors([_perr(doc, policy, where, msg, hint)])
        raise ConfigError(msg, hint=hint)
    tc = policy.reference.conventions() if policy is not None else TableConventions()
    columns = reference_columns(path, tc.names)
    profile = path.name.endswith((".json", ".json.gz"))
    features = columns if profile else tc.feature_columns(columns)
    errors: list[PolicyError] = []
    if not profile:
        for role, col in tc.missing_columns(columns):
            where_col = _ROLE_PATH[role] if role != "ignore" else (
                "reference", "ignore", tc.ignore.index(col))
            errors.append(_perr(
                doc, policy, where_col,
                f"the reference {path.name} has no column {col!r} "
                + (f"(the {role} column)" if role != "ignore" else "(in ignore)"),
                hint=_near(col, columns)))
    declared = policy.model.features if policy is not None else None
    for i, f in enumerate(declared or []):
        if f not in features:
            errors.append(_perr(doc, policy, ("model", "features", i),
                                f"feature {f!r} is not a feature column of the reference "
                                f"{path.name}", hint=_near(f, features)))
    if errors:
        raise PolicyErrors(errors)
    if connector is not None:
        _check_connector(connector, features, tc, path.name)
    return features


def _near(name: str, choices: Sequence[str]) -> str:
    guess = nearest(name, list(choices))
    return f"did you mean {guess!r}?" if guess else "columns: " + _listing(list(choices))


def _check_connector(conn: Connector, features: list[str], tc: TableConventions,
                     ref_name: str) -> None:
    if tc.segment and conn.streams and not any(s.segment is not None for s in conn.streams):
        # every live event would land in 'other' and be measured against the reference's
        # rarest values: a drift that is not there
        s = next((s for s in conn.streams if s.features is not None or s.score is not None),
                 conn.streams[0])
        raise conn.error(("source", "streams", s.name, "fields"),
                         f"the policy's reference.segment names column {tc.segment!r}, but "
                         "no stream maps a segment field", key=True,
                         hint="map it (segment: <path>) under fields, or remove "
                              "reference.segment from the policy")
    conn.missing_values()  # streams that read different values as missing: an error
    conn.score_scale(tc.score_is)  # streams in different scales, points read as P(good)
    for s in conn.streams:
        for name in s.missing.by_feature:
            if name not in features:
                raise conn.error(("source", "streams", s.name, "fields",
                                  "missing_values_by_feature", name),
                                 f"feature {name!r} is not a feature column of the "
                                 f"reference {ref_name}", key=True,
                                 hint=_near(name, features))
    mapped: dict[str, str] = {}
    infer = False
    for s in conn.streams:
        if s.features is None:
            infer = True
            continue
        for f in s.features:
            mapped.setdefault(f.name, s.name)
            if f.name not in features:
                role = next((r for r, c in tc.named.items() if c == f.name), None)
                if role is not None or f.name in tc.ignore:
                    why = f"it is the reference's {role} column" if role else \
                        "the policy's reference.ignore lists it"
                    hint = f"{why}; remove it from features"
                else:
                    hint = _near(f.name, features)
                raise conn.error(("source", "streams", s.name, "fields", "features", f.name),
                                 f"feature {f.name!r} is not a feature column of the "
                                 f"reference {ref_name}", key=True, hint=hint)
    if infer or not mapped:
        return
    unmapped = [c for c in features if c not in mapped]
    if unmapped:
        s = next(s for s in conn.streams if s.features)
        raise conn.error(("source", "streams", s.name, "fields", "features"),
                         f"reference columns not mapped in the connector: {_listing(unmapped)}",
                         key=True, hint="map each under features:, or list them under "
                         "reference.ignore in the policy")

