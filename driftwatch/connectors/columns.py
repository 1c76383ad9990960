"""Raw field columns -> typed numpy arrays, with the rows that could not be read.

A raw column is either a ``pyarrow`` array (block-parsed JSON, CSV, Parquet) or a list of
Python values from per-line JSON parsing, where ``None`` is null or absent and
:data:`BAD_PARENT` marks a path that runs through something that is not an object. Both
forms go through the same rules, so a record decodes the same whichever path read it.

>>> vals, bad, null = numeric([1, None, "3", 2.5])
>>> vals.tolist()[:2], bad.tolist(), null.tolist()
([1.0, nan], [False, False, True, False], [False, True, False, False])
>>> texts([1, "a", None, True, 2.0])[0].to_pylist()
['1', 'a', None, 'true', '2']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from driftwatch.connectors.mapping import as_text
from driftwatch.money import money_text
from driftwatch.percent import NUMBER, decimal_comma
from driftwatch.textnumbers import bare_text

__all__ = [
    "BAD_PARENT",
    "REASONS",
    "CodeLookup",
    "Problems",
    "Raw",
    "blank",
    "code_lookup",
    "describe",
    "encode",
    "fixed_width",
    "is_arrow",
    "keys",
    "numeric",
    "python_values",
    "text_numbers",
    "texts",
]

REASONS = (
    "invalid_json",
    "not_an_object",
    "missing_id",
    "missing_time",
    "bad_time",
    "wrong_type",
    "non_finite_score",
    "score_out_of_range",
    "bad_label",
    "invalid_csv",  # files: a CSV row with the wrong number of fields
    "bad_envelope",  # files: a Kafka recording line without topic/partition/offset
    "id_too_long",  # caps that keep a batch's memory bounded (see decode.py)
    "text_too_long",
    "message_too_large",
    "invalid_avro",  # an Avro stream's value that is no record of its writer schema
    "schema_unavailable",  # an Avro stream's schema registry could not be asked
)

Raw = pa.Array | pa.ChunkedArray | list[Any]


class _BadParent:
    __slots__ = ()

    def __repr__(self) -> str:
        return "BAD_PARENT"


BAD_PARENT: Any = _BadParent()
_NUMBER = (int, float)


def is_arrow(raw: Raw) -> bool:
    return isinstance(raw, pa.Array | pa.ChunkedArray)


def _arrow(raw: Raw) -> pa.Array:
    arr = raw.combine_chunks() if isinstance(raw, pa.ChunkedArray) else raw
    if pa.types.is_dictionary(arr.type):  # type: ignore[union-attr]
        arr = arr.dictionary_decode()  # type: ignore[union-attr]
    return arr  # type: ignore[return-value]


def python_values(raw: Raw) -> list[Any]:
    """The column as Python values (arrow nulls become ``None``)."""
    return _arrow(raw).to_pylist() if is_arrow(raw) else raw  # type: ignore[return-value]


def describe(v: Any) -> str:
    """A short, bounded description of a found value for a dead-letter detail."""
    if v is BAD_PARENT:
        return "a value that is not an object on the path"
    if isinstance(v, dict):
        return "an object"
    if isinstance(v, list):
        return "a list"
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return "text " + repr(v if len(v) <= 40 else v[:40] + "...")
    return repr(v)


class Problems:
    """First problem per row: reasons are flagged in precedence order, later ones never
    overwrite an earlier one, and details are built only for the rows flagged."""

    def __init__(self, n: int) -> None:
        self.code = np.zeros(n, dtype=np.int8)  # 0 = fine, else 1 + index in REASONS
        self.detail: dict[int, str] = {}
        #: the value at fault, for the rows whose flag named one (see ``BadRecord.value``)
        self.value: dict[int, str] = {}

    def flag(self, mask: np.ndarray, reason: str, detail: Callable[[int], str],
             value: Callable[[int], str] | None = None) -> None:
        idx = np.flatnonzero(mask & (self.code == 0))
        if len(idx):
            self.code[idx] = REASONS.index(reason) + 1
            for i in idx.tolist():
                self.detail[i] = detail(i)
                if value is not None:
                    self.value[i] = value(i)

    @property
    def ok(self) -> np.ndarray:
        return self.code == 0

    def reason(self, i: int) -> str:
        return REASONS[int(self.code[i]) - 1]


def numeric(
    raw: Raw, *, lenient: bool = False, bools: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(values, bad, null)``: float64 values (NaN where null or bad), rows whose value is
    not a number, rows that are null/absent. With ``bools`` (a feature) a boolean is 0/1,
    a flag typed numeric; ``lenient`` (CSV) parses text, and then ``true``/``false`` too.

    >>> v, bad, null = numeric([1, 2.5, True, None, "x"], bools=True)
    >>> v.tolist()[:3], bad.tolist(), null.tolist()
    ([1.0, 2.5, 1.0], [False, False, False, False, True], [False, False, False, True, False])
    """
    if is_arrow(raw):
        return _numeric_arrow(_arrow(raw), lenient, bools)
    vals: Sequence[Any] = raw  # type: ignore[assignment]
    n = len(vals)
    kinds = set(map(type, vals))
    if kinds <= ({int, float, bool, type(None)} if bools else {int, float, type(None)}):
        out = np.array(vals, dtype=np.float64) if n else np.zeros(0)
        null = np.fromiter((v is None for v in vals), bool, n) if type(None) in kinds \
            else np.zeros(n, bool)
        return out, np.zeros(n, bool), null
    out = np.full(n, np.nan)
    bad = np.zeros(n, bool)
    null = np.zeros(n, bool)
    for i, v in enumerate(vals):
        t = type(v)
        if t is float or t is int or (t is bool and bools):
            out[i] = v
        elif v is None:
            null[i] = True
        elif lenient and t is str:
            out[i], bad[i], null[i] = _parse_number(v, bools)
        else:
            bad[i] = True
    return out, bad, null


_BOOL_TEXT = {"true": 1.0, "false": 0.0}


def _parse_number(s: str, bools: bool = False) -> tuple[float, bool, bool]:
    if not s.strip():
        return np.nan, False, True
    if bools and s.strip().lower() in _BOOL_TEXT:
        return _BOOL_TEXT[s.strip().lower()], False, False
    try:
        return float(s), False, False
    except ValueError:
        return np.nan, True, False


def _numeric_arrow(
    arr: pa.Array, lenient: bool, bools: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    t = arr.type
    null = arr.is_null().to_numpy(zero_copy_only=False)
    n = len(arr)
    if (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t)
            or (bools and pa.types.is_boolean(t))):
        vals = arr.cast(pa.float64()).to_numpy(zero_copy_only=False)
        return np.asarray(vals, dtype=np.float64), np.zeros(n, bool), null
    if pa.types.is_null(t):
        return np.full(n, np.nan), np.zeros(n, bool), np.ones(n, bool)
    if lenient and (pa.types.is_string(t) or pa.types.is_large_string(t)):
        try:
            vals = pc.cast(arr, pa.float64()).to_numpy(zero_copy_only=False)
            return np.asarray(vals, dtype=np.float64), np.zeros(n, bool), null
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return numeric(arr.to_pylist(), lenient=True, bools=bools)
    return np.full(n, np.nan), ~null, null


#: Money text whole, in RE2, by the file's decimal mark (:func:`driftwatch.money.money_text`)
_MONEY_RE2 = {d: money_text(d) for d in ".,"}


def text_numbers(raw: Raw, fmt: str, decimal: str = ".",
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`numeric` of a feature written as text in ``fmt`` (a connector's ``format:``,
    :mod:`driftwatch.textnumbers`): ``percent`` or ``money`` (``"$60,000.00 "`` is 60000;
    ``"1.234,56 €"`` is 1234.56 where ``decimal``, the file's decimal mark, is ``,``).
    Text that is no such value, or a boolean, is bad; blank text is missing.

    >>> v, bad, null = text_numbers(["$60,000.00 ", "-$5", 3, "$6,00", "", None, True], "money")
    >>> v.tolist()[:3], bad.tolist(), null.tolist()[4:]
    ([60000.0, -5.0, 3.0], [False, False, False, True, False, False, True], [True, True, False])
    >>> v, bad, _ = text_numbers(pa.array(["$60,000.00 ", "$6,00", "€ 1.5", " ", "($1,234.50)"]),
    ...                          "money")
    >>> v.tolist()[0], v.tolist()[2], v.tolist()[4], bad.tolist()
    (60000.0, 1.5, -1234.5, [False, True, False, False, False])
    >>> v, bad, _ = text_numbers(pa.array(["1.234,56 €", "€ -1.234,56", "(7,5)", "1.23"]),
    ...                          "money", decimal=",")
    >>> v.tolist()[:3], bad.tolist()
    ([1234.56, -1234.56, -7.5], [False, False, False, True])
    >>> v, bad, null = text_numbers(["13.56%", " 7 % ", 21, "abc%", "%", "", None, True],
    ...                             "percent")
    >>> v.tolist()[:3], bad.tolist(), null.tolist()[5:]
    ([13.56, 7.0, 21.0], [False, False, False, True, True, False, False, True], [True, True, False])
    >>> v, bad, _ = text_numbers(pa.array(["13,56%", "1,234%", "-0,5 %", "nan%"]), "percent")
    >>> v.tolist()[0], v.tolist()[2], bad.tolist()
    (13.56, -0.5, [False, True, False, True])
    >>> v, bad, _ = text_numbers(pa.array(["13,56%", "1,234%", "1,2,3%"]), "percent", ",")
    >>> v.tolist()[:2], bad.tolist()
    ([13.56, 1.234], [False, False, True])
    """
    if is_arrow(raw):
        arr = _arrow(raw)
        if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
            return numeric(arr, lenient=True)
        if fmt == "money":
            space = blank(arr)
            fits = pc.fill_null(pc.match_substring_regex(arr, _MONEY_RE2[decimal]), False)
            unfit = ~fits.to_numpy(zero_copy_only=False) & ~space
            # the grouping mark and the rest that is no digit go; a decimal comma is a point
            group = r"\." if decimal == "," else ","
            digits = pc.replace_substring_regex(arr, rf"[\s$€£(){group}]", "")
            if decimal == ",":
                digits = pc.replace_substring(digits, ",", ".")
            vals, bad, null = numeric(digits, lenient=True)
            # an accountant's negative: what fits with a bracket is an amount in brackets
            owed = pc.fill_null(pc.match_substring(arr, "("), False).to_numpy(
                zero_copy_only=False)
            vals = np.where(owed, -vals, vals)
            return np.where(unfit, np.nan, vals), bad | unfit, null & ~unfit
        trimmed = pc.utf8_trim_whitespace(arr)
        signed = pc.fill_null(pc.ends_with(trimmed, "%"), False).to_numpy(zero_copy_only=False)
        bare = pc.utf8_rtrim_whitespace(pc.replace_substring_regex(trimmed, "%$", ""))
        bare = pc.replace_substring_regex(bare, f"^{decimal_comma(decimal)}$", r"\1.\2")
        vals, bad, null = numeric(bare, lenient=True)
        empty = blank(bare)
        # "%" alone: a sign with no number is no blank; "nan%", "inf%": no number in digits
        sign_only = signed & empty
        digits = pc.fill_null(pc.match_substring_regex(bare, f"^{NUMBER}$"), True)
        unfit = ~digits.to_numpy(zero_copy_only=False) & ~empty
        return (np.where(unfit, np.nan, vals), bad | sign_only | unfit,
                null & ~sign_only & ~unfit)
    values: Sequence[Any] = raw  # type: ignore[assignment]
    plain: list[Any] = list(values)
    unread = np.zeros(len(values), bool)
    for i, v in enumerate(values):
        if type(v) is str:
            b = bare_text(fmt, v, decimal)
            unread[i] = b is None
            plain[i] = b or ""
    out, bad, null = numeric(plain, lenient=True)
    return out, bad | unread, null & ~unread


def texts(raw: Raw, *, bools: bool = True) -> tuple[pa.Array, np.ndarray]:
    """``(values, bad)``: a pyarrow string array (null where null, absent or unreadable) and
    the rows holding something that is not a scalar (or a boolean, when ``bools`` is false).
    Numbers and booleans become text as :func:`~driftwatch.connectors.mapping.as_text` says.
    """
    if is_arrow(raw):
        arr = _arrow(raw)
        t = arr.type
        n = len(arr)
        if pa.types.is_string(t) or pa.types.is_large_string(t):
            return arr.cast(pa.string()), np.zeros(n, bool)
        if pa.types.is_integer(t) or (bools and pa.types.is_boolean(t)):
            return arr.cast(pa.string()), np.zeros(n, bool)
        if pa.types.is_null(t):
            return pa.nulls(n, pa.string()), np.zeros(n, bool)
        raw = arr.to_pylist()
    vals: Sequence[Any] = raw  # type: ignore[assignment]
    n = len(vals)
    kinds = set(map(type, vals))
    if kinds <= {str, type(None)}:
        return pa.array(vals, pa.string()), np.zeros(n, bool)
    out: list[str | None] = [None] * n
    bad = np.zeros(n, bool)
    for i, v in enumerate(vals):
        t = type(v)
        if t is str:
            out[i] = v
        elif v is None:
            continue
        elif t is int or t is float or (t is bool and bools):
            out[i] = as_text(v)
        else:
            bad[i] = True
    return pa.array(out, pa.string()), bad


def blank(arr: pa.Array) -> np.ndarray:
    """Rows that are null, empty or only whitespace.

    Arrow's trim is asked only about the rows that may be blank: a text whose first byte
    is printable ASCII other than the space (``A0001``, ``web``) is not, whatever follows.

    >>> blank(pa.array(["a", None, "", " \t", "\u00a0", " b"])).tolist()
    [False, True, True, True, True, False]
    """
    maybe = _maybe_blank(arr)
    if maybe is None:
        return _blank(arr)
    rows = np.flatnonzero(maybe)
    if rows.size:
        maybe[rows] = _blank(arr.take(pa.array(rows)))
    return maybe


def _blank(arr: pa.Array) -> np.ndarray:
    empty = pc.equal(pc.utf8_length(pc.utf8_trim_whitespace(arr)), 0)
    return pc.fill_null(empty, True).to_numpy(zero_copy_only=False)


def _maybe_blank(arr: pa.Array) -> np.ndarray | None:
    """Rows of a text array that may be blank (null, empty, or a first byte that is not
    printable ASCII: a space, a control or a multi-byte character), from its buffers; None
    for other layouts."""
    if not isinstance(arr, pa.Array) or arr.type != pa.string():
        return None
    n = len(arr)
    _, offsets, data = arr.buffers()
    offs = np.frombuffer(offsets, dtype=np.int32)[arr.offset : arr.offset + n + 1]
    maybe = offs[1:] <= offs[:-1]
    if data is not None and len(data):
        first = np.frombuffer(data, dtype=np.uint8)[np.minimum(offs[:-1], len(data) - 1)]
        maybe |= (first <= 0x20) | (first >= 0x7F)
    if arr.null_count:
        maybe |= arr.is_null().to_numpy(zero_copy_only=False)
    return maybe


def keys(arr: pa.Array) -> pa.Array:
    """Match keys of a text column (stripped, lower-cased), as ``value_key`` makes them."""
    return pc.utf8_lower(pc.utf8_trim_whitespace(arr))


class CodeLookup(NamedTuple):
    """What :func:`encode` needs of one feature's coding: its texts, each text's code, and
    whether a text is blank (then its rows are missing all the same)."""

    value_set: pa.Array
    codes: np.ndarray
    blank_level: bool


def code_lookup(levels: Sequence[str], other: frozenset[str]) -> CodeLookup:
    """The lookup :func:`encode` takes: the FeatureSchema coding of one feature."""
    d = {v: i for i, v in enumerate(levels)}
    d.update({v: len(levels) for v in sorted(other) if v not in d})
    value_set = pa.array(list(d), pa.string())
    return CodeLookup(value_set, np.array(list(d.values()), dtype=np.int32),
                      bool(len(value_set)) and bool(blank(value_set).any()))


def encode(arr: pa.Array, lookup: CodeLookup, n_levels: int) -> np.ndarray:
    """Vectorised ``FeatureSchema.encode_categorical`` for a text column (blank = missing).

    >>> encode(pa.array(["b", "zz", None, " ", "a"]), code_lookup(["a", "b"], frozenset()), 2)
    array([ 1,  3, -1, -1,  0], dtype=int32)
    """
    at = pc.fill_null(pc.index_in(arr, value_set=lookup.value_set), -1)
    # -1 (no text matched) picks the last entry: unseen
    out = np.append(lookup.codes, np.int32(n_levels + 1))[at.to_numpy(zero_copy_only=False)]
    if lookup.blank_level:
        out[blank(arr)] = -1
    else:  # a level is never blank: only the rows no level matched may be
        rest = np.flatnonzero(out == n_levels + 1)
        if rest.size:
            out[rest[blank(arr.take(pa.array(rest)))]] = -1
    return out


def fixed_width(arr: pa.Array) -> np.ndarray:
    """A text column as numpy fixed-width text (null as ``""``), what ``astype(str)`` of its
    Python strings gives; ASCII columns go by their bytes, without a Python string per row.

    >>> fixed_width(pa.array(["ab", None, "c"])).tolist(), fixed_width(pa.array(["é"])).dtype
    (['ab', '', 'c'], dtype('<U1'))
    >>> fixed_width(pa.array(["ab", "cd", "ef"]).slice(1)).tolist()
    ['cd', 'ef']
    """
    arr = pc.fill_null(_arrow(arr).cast(pa.string()), "")
    n = len(arr)
    if n == 0 or not pc.all(pc.string_is_ascii(arr)).as_py():
        return np.asarray(arr.to_numpy(zero_copy_only=False)).astype(str)
    _, offsets, data = arr.buffers()
    offs = np.frombuffer(offsets, dtype=np.int32)[arr.offset : arr.offset + n + 1]
    lens = np.diff(offs)
    width = max(1, int(lens.max()))
    if data is not None and int(lens.min()) == width:  # all as wide (ids): the bytes as they are
        raw = np.frombuffer(data, dtype=np.uint8, count=n * width, offset=int(offs[0]))
        # ASCII bytes are their code points: widening them is the text, no decoding
        return raw.astype(np.uint32).view(f"U{width}")
    out = np.zeros((n, width), dtype=np.uint8)
    if data is not None and offs[-1] > offs[0]:
        inside = np.arange(width) < lens[:, None]
        out[inside] = np.frombuffer(data, dtype=np.uint8)[(offs[:-1, None]
                                                            + np.arange(width))[inside]]
    # like numpy's own text, a trailing NUL does not survive either way
    return out.astype(np.uint32).view(f"U{width}").ravel()
