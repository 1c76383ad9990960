"""What the columns of a reference table and the fields of a stream sample are.

Types come from the reference (the bins are fitted there): booleans and integers with at
most :data:`MAX_INT_LEVELS` distinct values are categorical (but for more than two values
named like a count, :data:`COUNT_NAMES`: numeric), and so are integer columns named like
category codes (:data:`CODE_NAMES`) whatever their count, other numbers numeric, text
categorical. Roles (id, time, score, label, decision, exposure) are found by name and
checked on the values; each finding comes with the reason it was made.

>>> import pandas as pd
>>> column_kind(pd.Series([True, False, None]))
('categorical', 'boolean')
>>> column_kind(pd.Series([0, 1, 1, 0]))
('categorical', 'integer with 2 distinct values')
>>> column_kind(pd.Series([0, 1, 2, 3, 1], name="NumberOfDependents"))
('numeric', 'a count (named like one), 4 distinct values')
>>> column_kind(pd.Series([0.5, 1.5, 2.25]))
('numeric', 'numbers')
>>> column_kind(pd.Series(range(-1, 104), name="ps_car_11_cat"))
('categorical', 'integer codes named like categories (*_cat), 105 distinct values')
>>> time_unit([1.7e9, 1.7e9 + 60]), time_unit(["2024-01-01T00:00:00Z"]), time_unit(["x"])
('s', 'iso', None)
>>> text_formats(["Dec-2015", "Jan-2016"]), text_formats(["01/02/2015", "03/04/2015"])
(['%b-%Y'], ['%d/%m/%Y', '%m/%d/%Y'])
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from driftwatch.connectors.eventtime import from_format
from driftwatch.errors import ConfigError
from driftwatch.flags import flag_side
from driftwatch.money import bare_money
from driftwatch.onboard.outcomewords import unknown_codes, word_side

__all__ = [
    "CODE_NAMES",
    "COUNT_NAMES",
    "GOOD_WHEN_TRUE",
    "MAX_INT_LEVELS",
    "TIME_FORMATS",
    "Candidate",
    "choose",
    "column_kind",
    "epoch_text_unit",
    "flag_truth",
    "good_when_true",
    "label_key",
    "label_note",
    "label_sides",
    "label_values",
    "leaf",
    "looked_for",
    "money_text",
    "name_rank",
    "named_codes",
    "named_count",
    "not_a_feature",
    "percent_text",
    "refuse_no_bad",
    "text_format",
    "text_formats",
    "time_unit",
]

MAX_INT_LEVELS = 10
#: Names of integer columns that hold category codes, not amounts (Porto Seguro's
#: ``ps_ind_02_cat``, ``ps_car_11_cat`` with 104 codes)
CODE_NAMES = (r".+_cat",)
#: The words of a credit table's counts, each a whole word of a snake_case name (Lending
#: Club's ``delinq_2yrs``, ``inq_last_6mths``, ``pub_rec``, ``mort_acc``, ``open_acc_6m``,
#: ``num_tl_90g_dpd_24m``; HMEQ's ``DEROG``, ``DELINQ``, ``NINQ`` and ``CLNO``, credit lines)
_COUNT_WORDS = (r"delinq\w*", r"n?inq\w*", r"inquir\w*", r"derog\w*", r"pub_rec\w*",
                r"acc|accs|accts?|accounts", r"\d*(?:mths|months)", r"tls?", r"cnt|count",
                r"\d+g_dpd", r"cl_?no")
#: A name ending in a code's word is no count (an ``acc_type``, a ``delinq_flag``, a
#: ``num_cat``, a ``pub_rec_band``)
_CODE_END = (r"(?!.*_(?:cat|code|cd|type|flag|ind|id|key|status|grade|class|group|band"
             r"|bucket|level)$)")
#: ... nor, for :data:`_COUNT_WORDS`, a name with a time's word in it: a
#: ``last_delinq_date`` is still a time's name
_TIME_WORD = r"(?!.*(?:date|time|stamp|_at$|_ts$|_dt$))"
#: A count of distinct values, whatever else its name says: the Bank Account Fraud
#: table's ``date_of_birth_distinct_emails_4w`` (emails seen with one date of birth in four
#: weeks) names a date but holds a count
_DISTINCT = r"(?:.*_)?(?:distinct|n?unique)(?:_.*)?"
#: Names of integer columns that count occurrences (Give Me Some Credit's
#: ``NumberOfTimes90DaysLate`` and ``NumberRealEstateLoansOrLines``, a ``num_open_loans``,
#: an ``inquiry_count``, the words of :data:`_COUNT_WORDS`): ordered, so a count never seen
#: in the reference is a larger number, not a new category. A name that starts as a count
#: is one whatever follows (``count_time_outs``), but a code's ending.
COUNT_NAMES = (*(_CODE_END + p for p in (r"number_?of.*", r"(?:num|number|no|cnt|count)_.*",
                                         r".+_(?:count|cnt)", r".*times(?!tamp).*",
                                         _DISTINCT)),
               *(_CODE_END + _TIME_WORD + rf"(?:.*_)?(?:{w})(?:_.*)?" for w in _COUNT_WORDS))


def leaf(path: str) -> str:
    """The last segment of a dotted path."""
    return path.rsplit(".", 1)[-1]


def _norm(v: Any) -> str:
    from driftwatch.windows.conventions import norm_value

    return norm_value(v)


def label_key(v: Any) -> str:
    """How label values written differently in two files are matched: as the connector
    matches them (:func:`~driftwatch.windows.conventions.norm_value`), and without trailing
    full stops (UCI Adult's test file writes ``>50K.`` where its training file has
    ``>50K``).

    >>> label_key(" >50K."), label_key("Charged Off")
    ('>50k', 'charged off')
    """
    return _norm(v).rstrip(".").rstrip()


def refuse_no_bad(values: Sequence[Any], bad: Sequence[Any], where: str, name: str,
                  given: Sequence[Any]) -> None:
    """Refuse a sample's label whose two or more values hold none of the ``bad`` ones
    :func:`label_values` found for ``given``: written so, every outcome would be good."""
    distinct = sorted({str(v) for v in values if v is not None and not pd.isna(v)})
    if bad or len(distinct) < 2:
        return
    raise ConfigError(
        "none of the label values " + ", ".join(repr(v) for v in distinct[:6])
        + f" of {name} is a bad value (" + ", ".join(repr(str(b)) for b in given)
        + "): every outcome would read as good", file=where,
        hint="name the bad value as this file writes it: --label-bad VALUE, repeated for "
        "each spelling")


def _is_bool_like(s: pd.Series) -> bool:
    vals = s.dropna()
    if pd.api.types.is_bool_dtype(s):
        return True
    if vals.empty or not (pd.api.types.is_object_dtype(s) or pd.api.types.is_string_dtype(s)):
        return False
    return all(isinstance(v, bool | np.bool_) or str(v).strip().lower() in ("true", "false")
               for v in vals.unique())


def named_codes(name: Any) -> bool:
    """Whether a column's name says it holds category codes (:data:`CODE_NAMES`).

    >>> named_codes("ps_ind_02_cat"), named_codes("carCat"), named_codes("cat"), named_codes(None)
    (True, True, False, False)
    """
    return name is not None and name_rank(str(name), (), CODE_NAMES) >= 2


def named_count(name: Any) -> bool:
    """Whether a column's name says it counts occurrences (:data:`COUNT_NAMES`).

    >>> named_count("NumberOfDependents"), named_count("num_open_loans"), named_count("timestamp")
    (True, True, False)
    >>> named_count("NumberRealEstateLoansOrLines"), named_count("number_type")
    (True, False)
    >>> [named_count(n) for n in ("delinq_2yrs", "inq_last_6mths", "mort_acc", "NINQ", "CLNO")]
    [True, True, True, True, True]
    >>> [named_count(n) for n in ("PAY_0", "EDUCATION", "acc_type", "last_delinq_date")]
    [False, False, False, False]
    """
    return name is not None and name_rank(str(name), (), COUNT_NAMES) >= 2


def column_kind(s: pd.Series) -> tuple[str, str]:
    """``(numeric | categorical, why)`` for one reference column (named ``s.name``)."""
    if _is_bool_like(s):
        return "categorical", "boolean"
    vals = s.dropna()
    if vals.empty:
        return "numeric", "all missing"
    if pd.api.types.is_numeric_dtype(s):
        arr = vals.to_numpy(dtype=np.float64)
        n = len(np.unique(arr))
        # infinities are not whole numbers (np.mod of one warns and gives NaN)
        whole = bool(np.isfinite(arr).all() and np.all(np.mod(arr, 1) == 0))
        if whole and 2 < n <= MAX_INT_LEVELS and named_count(s.name) \
                and not named_codes(s.name):
            # counts are ordered: a count the reference never reached is a larger one
            return "numeric", f"a count (named like one), {n} distinct values"
        if whole and n <= MAX_INT_LEVELS:
            return "categorical", (f"integer with {n} distinct values" if n > 1 else
                                   "one value only (a constant)")
        if whole and named_codes(s.name):  # codes have no order: bins between them mean nothing
            return "categorical", (f"integer codes named like categories (*_cat), {n} "
                                   "distinct values")
        return "numeric", "numbers"
    n = vals.astype(str).nunique()
    return "categorical", (f"text with {n} levels" if n > 1 else
                           "text with one value only (a constant)")


#: Text columns with more distinct values than this, most of them once, name rows
MAX_ID_LEVELS = 100
#: Percent text: a number with a decimal point or comma (see :mod:`driftwatch.percent`),
#: by the decimal mark of the file (there any one comma is the mark: ``1,234%`` is 1.234)
_PERCENT = {".": re.compile(r"\s*[-+]?(\d+(\.\d*)?|\.\d+|\d+,(\d{1,2}|\d{4,}))\s*%\s*"),
            ",": re.compile(r"\s*[-+]?(\d+(\.\d*)?|\.\d+|\d+,\d+)\s*%\s*")}
#: Date text as public tables write it ('2015-12-01', 'Dec-2015', '12/2015', '01/12/2015')
_DATE_FORMATS = ("ISO8601", "%b-%Y", "%b %Y", "%B %Y", "%m/%Y", "%m/%d/%Y", "%d/%m/%Y",
                 "%d-%b-%Y", "%d-%b-%y", "%d.%m.%Y")


def _all_dates(texts: pd.Series) -> bool:
    for fmt in _DATE_FORMATS:
        if (pd.to_datetime(texts[:50], errors="coerce", format=fmt).notna().all()
                and pd.to_datetime(texts, errors="coerce", format=fmt).notna().all()):
            return True
    return False


def _tally(values: pd.Series | Sequence[Any]) -> pd.Series:
    """Each present value once, with how many times it comes: a reference column of
    300,000 rows holds a few hundred, and each is tested once, not once a row. Empty for a
    column of typed numbers, which holds no text.

    >>> _tally(["7%", None, "7%", 3]).to_dict(), len(_tally(pd.Series([1.5, 2.5])))
    ({'7%': 2, 3: 1}, 0)
    """
    if isinstance(values, pd.Series) and values.dtype.kind in "biufcmM":
        return pd.Series([], dtype="int64")
    vals = pd.Series(values, dtype=object).dropna()
    try:
        return vals.value_counts(sort=False)
    except TypeError:  # unhashable values (a JSON list): each counts once
        return pd.Series(1, index=pd.Index(vals.tolist(), dtype=object), dtype="int64")


def _holds(tally: pd.Series, is_it: Callable[[str], bool], most: bool) -> bool:
    """Whether ``is_it`` holds for every present value of a :func:`_tally`, all text
    (``most``: for more than half of them); False with none present."""
    if not len(tally):
        return False
    hits = np.fromiter((isinstance(v, str) and is_it(v) for v in tally.index), dtype=bool,
                       count=len(tally))
    counts = tally.to_numpy()
    return bool(2 * counts[hits].sum() > counts.sum()) if most else bool(hits.all())


def percent_text(values: pd.Series | Sequence[Any], most: bool = False,
                 decimal: str = ".") -> bool:
    """Whether every present value is percent text (Lending Club's ``int_rate``,
    ``'13.56%'``), some at least: a number the connector reads with ``format: percent``;
    ``most``: more than half of them (a sample with a few bad values); ``decimal``: the
    decimal mark of the file they were read from.

    >>> percent_text(pd.Series(["13.56%", "7.9 %", None])), percent_text(["13.56%", "abc%"])
    (True, False)
    >>> percent_text(["13.56%", "7%", "abc%"], most=True), percent_text([13.56, 7.9])
    (True, False)
    >>> percent_text(["13,56%", "7,9 %"]), percent_text(["13,56%", "1,234%"])
    (True, False)
    >>> percent_text(["13,56%", "1,234%"], decimal=",")
    True
    """
    pattern = _PERCENT[decimal]
    return _holds(_tally(values), lambda v: bool(pattern.fullmatch(v)), most)


#: What marks text as an amount rather than a number's plain text, by the file's decimal
#: mark: a currency sign, a thousands comma (a thousands point where the decimal mark is
#: the comma) or an accountant's bracket (the mark alone makes no amount)
_MONEY_MARK = {".": re.compile(r"[$€£(]|\d,\d{3}"), ",": re.compile(r"[$€£(]|\d\.\d{3}")}


def money_text(values: pd.Series | Sequence[Any], most: bool = False,
               decimal: str = ".") -> bool:
    """Whether every present value is money text (``most``: more than half of them), all
    text, and some amount among them is marked as one: a currency sign (the SBA's
    ``DisbursementGross``, ``'$60,000.00 '``), thousands commas (``'1,234,567.89'``) or
    brackets (``'(1,234.00)'``); a number the connector reads with ``format: money``.
    Plain numbers written as text (``'12'``) are not money text. ``decimal``: the decimal
    mark of the file they were read from (``,``: ``'1.234,56 €'`` is money text).

    >>> money_text(pd.Series(["$60,000.00 ", "$0.00 ", None])), money_text(["$5", "5 apples"])
    (True, False)
    >>> money_text(["60,000", "12"]), money_text(["12", "7"]), money_text(["6,00", "12"])
    (True, False, False)
    >>> money_text(["$5", "$7", "n/a"], most=True)
    True
    >>> money_text(["1.234,56 €", "-12,50"]), money_text(["1.234,56", "7"], decimal=",")
    (False, True)
    """
    tally = _tally(values)
    mark = _MONEY_MARK[decimal]
    marked = any(isinstance(v, str) and mark.search(v) and bare_money(v, decimal)
                 for v in tally.index)
    return marked and _holds(tally, lambda v: bool(bare_money(v, decimal)), most)


def text_format(values: pd.Series | Sequence[Any], most: bool = False,
                decimal: str = ".") -> str | None:
    """``percent`` or ``money`` where the values are numbers written as such text
    (:func:`percent_text`, :func:`money_text`; ``decimal``: the decimal mark of the file
    they were read from), else None.

    >>> text_format(["13.56%"]), text_format(["$1,200.00 "]), text_format(["RENT"])
    ('percent', 'money', None)
    >>> text_format(["€ 1.200,00"], decimal=","), text_format(["€ 1.200,00"])
    ('money', None)
    """
    if percent_text(values, most, decimal):
        return "percent"
    return "money" if money_text(values, most, decimal) else None


def not_a_feature(s: pd.Series, decimal: str = ".") -> str | None:
    """Why a reference text column makes no feature, or None: dates, or a value per row
    (an identifier or free text). As categories each moves on by itself: every window
    brings levels the reference never saw. (Percent and money text are features: see
    :func:`text_format`, ``decimal`` being the decimal mark of the file.)

    >>> not_a_feature(pd.Series(["Dec-2015", "Jan-2016"]))[:18]
    "dates ('Dec-2015',"
    >>> not_a_feature(pd.Series(["RENT", "OWN", "RENT"])) is None
    True
    >>> not_a_feature(pd.Series([f"{i / 100:.2f}%" for i in range(500)])) is None
    True
    """
    if not (pd.api.types.is_object_dtype(s) or pd.api.types.is_string_dtype(s)):
        return None
    vals = s.dropna()
    if vals.empty or not all(isinstance(v, str) for v in vals.head(1000)):
        return None
    levels = pd.Series(vals.astype(str).unique())
    if text_format(levels, decimal=decimal):  # numbers, however many: percent or money text
        return None
    first = ", ".join(repr(v) for v in levels[:2])
    if _all_dates(levels):
        return (f"dates ({first}, ...): every new period is a level the reference never saw; "
                f"to watch it, add its age (e.g. months before the event) as a number")
    if len(levels) > MAX_ID_LEVELS and len(levels) >= 0.5 * len(vals):
        return (f"a value per row ({len(levels)} distinct in {len(vals)} rows): an identifier "
                f"or free text, whose live values the reference never saw")
    return None


def time_unit(values: Sequence[Any]) -> str | None:
    """``s``, ``ms``, ``us``, ``ns`` or ``iso`` when every non-null value reads as an event
    time; ``auto``
    for a table's own timestamps or dates (a Parquet timestamp column), which carry their
    unit with them.

    >>> import datetime as dt
    >>> time_unit([dt.datetime(2025, 3, 1, tzinfo=dt.timezone.utc), dt.date(2025, 3, 2)])
    'auto'
    """
    vals = [v for v in values if v is not None and not (isinstance(v, float) and np.isnan(v))]
    if not vals:
        return None
    if all(isinstance(v, datetime.date) for v in vals):  # datetime and pd.Timestamp too
        return "auto"
    if all(isinstance(v, int | float) and not isinstance(v, bool) for v in vals):
        arr = np.asarray(vals, dtype=np.float64)
        if np.all((arr > 9.4e8) & (arr < 4.2e9)):
            return "s"
        if np.all((arr > 9.4e11) & (arr < 4.2e12)):
            return "ms"
        if np.all((arr > 9.4e14) & (arr < 4.2e15)):
            return "us"  # Debezium's ts_us, Java's Instant in micros
        if np.all((arr > 9.4e17) & (arr < 4.2e18)):
            return "ns"  # Go's UnixNano, Spark's timestamps as integers
        return None
    if all(isinstance(v, str) for v in vals):
        parsed = pd.to_datetime(pd.Series(vals), errors="coerce", utc=True, format="ISO8601")
        return "iso" if parsed.notna().all() else None
    return None


_EPOCH_TEXT = re.compile(r"\s*\d{10,19}(\.\d+)?\s*")


def epoch_text_unit(values: Sequence[Any]) -> str | None:
    """``s``, ``ms``, ``us`` or ``ns`` when every present value is text holding an epoch
    count in that unit (``"1704067200123"``: a Java service's ``long`` sent as a string),
    which replay's decoder reads as the number it writes; None otherwise. Only for a field
    named like a time: ten digits of text may as well be a phone number.

    >>> epoch_text_unit(["1704067200123", "1704067260000"]), epoch_text_unit(["1704067200"])
    ('ms', 's')
    >>> epoch_text_unit(["20240131"]), epoch_text_unit(["1704067200", 1704067260])
    (None, None)
    """
    vals = [v for v in values if v is not None and not (isinstance(v, float) and np.isnan(v))]
    if not vals or not all(isinstance(v, str) and _EPOCH_TEXT.fullmatch(v) for v in vals):
        return None
    unit = time_unit([float(v) for v in vals])
    return unit if unit in ("s", "ms", "us", "ns") else None


#: strptime formats tried on text times that are not ISO-8601, in order of preference
TIME_FORMATS = ("%b-%Y", "%b %Y", "%B %Y", "%B-%Y", "%m/%Y", "%m-%Y", "%Y/%m/%d",
                "%d/%m/%Y", "%m/%d/%Y", "%d-%m-%Y", "%m-%d-%Y", "%d.%m.%Y", "%d-%b-%Y",
                "%d-%b-%y",  # the SBA's ApprovalDate, '28-Feb-97'; %Y reads 4 digits only
                "%d %b %Y", "%b %d, %Y", "%d/%m/%Y %H:%M", "%m/%d/%Y %H:%M",
                "%d/%m/%Y %H:%M:%S", "%m/%d/%Y %H:%M:%S", "%Y/%m/%d %H:%M:%S",
                "%d.%m.%Y %H:%M", "%d.%m.%Y %H:%M:%S", "%d-%b-%Y %H:%M:%S",
                # a 12-hour clock, as US exports and .NET's DateTime.ToString() write it
                "%m/%d/%Y %I:%M:%S %p", "%d/%m/%Y %I:%M:%S %p", "%m/%d/%Y %I:%M %p",
                "%d/%m/%Y %I:%M %p")


def text_formats(values: Sequence[Any], formats: Sequence[str] = TIME_FORMATS) -> list[str]:
    """The ``formats`` that read every present value (all text) as a time, as replay's
    decoder reads them; one that reads them to the same times as an earlier one is left
    out, so two formats left mean the values are ambiguous (day/month or month/day).

    >>> text_formats(["13/02/2015 10:30"]), text_formats(["May 2015"]), text_formats([1.5])
    (['%d/%m/%Y %H:%M'], ['%b %Y'], [])
    """
    vals = [v for v in values if v is not None and not (isinstance(v, float) and np.isnan(v))]
    if not vals or not all(isinstance(v, str) for v in vals):
        return []
    texts = np.array(list(dict.fromkeys(vals)), dtype=object)
    head = texts[:20]
    found: list[tuple[str, np.ndarray]] = []
    for fmt in formats:
        try:  # a microsecond screen on one value; pandas (the decoder's reader) decides
            datetime.datetime.strptime(texts[0], fmt)
        except ValueError:
            continue
        if np.isnan(from_format(head, fmt)).any():
            continue
        secs = from_format(texts, fmt)
        if not np.isnan(secs).any() and not any(np.array_equal(secs, s) for _, s in found):
            found.append((fmt, secs))
    return [f for f, _ in found]


#: Label names whose true / 1 value is the good outcome (the loan was repaid)
GOOD_WHEN_TRUE = (r"(is_|was_|has_|loan_)?(re)?paid(_off|_back|_in_full)?", r"fully_paid",
                  r"(is_)?good(_loan|_credit|_payer)?", r"(is_)?performing",
                  r"(is_)?non_?default(ed)?", r"(is_)?repayment", r".+_repaid")
_NEGATED = re.compile(r"(^|_)(not|no|un)(_|$)|^un")
def flag_truth(v: Any) -> bool | None:
    """Which side of a flag ``v`` spells (:func:`driftwatch.flags.flag_side` of its text),
    None where it is no flag.

    >>> flag_truth(True), flag_truth("Y"), flag_truth(0.0), flag_truth("no"), flag_truth(2)
    (True, True, False, False, None)
    """
    return flag_side(_norm(v))


def good_when_true(name: str | None) -> bool:
    """Whether a label's name says its true / 1 value is the good outcome.

    >>> good_when_true("repaid"), good_when_true("is_good"), good_when_true("loan_paid_off")
    (True, True, True)
    >>> good_when_true("SeriousDlqin2yrs"), good_when_true("not_repaid"), good_when_true("unpaid")
    (False, False, False)
    """
    if name is None:
        return False
    snake = _SPACES.sub("_", _HUMPS.sub("_", leaf(name).strip())).lower()
    return not _NEGATED.search(snake) and any(re.fullmatch(p, snake) for p in GOOD_WHEN_TRUE)


#: Label names that say their true / 1 value is the bad event (SeriousDlqin2yrs,
#: TARGET, is_fraud, loan_default, ...): ``init`` says nothing more of them
_BAD_EVENT = re.compile(r"default|bad|fraud|dlq|delinq|charge|loss|dpd|arrear|writ|target")


def label_note(name: str | None, good: Sequence[Any], bad: Sequence[Any] = ()) -> str:
    """What ``init`` adds to a label's line when it chose which value is good: by the
    name, or, for a yes/no flag whose name says neither (Bank Marketing's ``y``), by the
    rule that a true value is the event the model predicts (said for a word, ``yes`` or
    ``Y``; a 1 is that event by every convention).

    >>> label_note("y", ["no"], ["yes"])[:64]
    "; a yes/no flag whose name says neither: 'yes' taken as the even"
    >>> label_note("default", [0], [1]), label_note("SeriousDlqin2yrs", [0], [1])
    ('', '')
    """
    if good_when_true(name) and len(good) == 1 and flag_truth(good[0]) is True:
        return f"; the name says {good[0]!r} is the good outcome (--label-bad to change)"
    if (len(bad) == 1 and len(good) == 1 and flag_truth(bad[0]) is True
            and isinstance(bad[0], str) and not bad[0].strip().isdigit()
            and not _BAD_EVENT.search((leaf(name) if name else "").lower())):
        return (f"; a yes/no flag whose name says neither: {bad[0]!r} taken as the event "
                f"the model predicts, so bad (--label-bad {good[0]} if {bad[0]!r} is the "
                "good outcome)")
    return ""


def label_values(values: Sequence[Any], where: str, bad: Sequence[str] = (),
                 name: str | None = None) -> tuple[list[Any], list[Any]]:
    """``(bad, good)`` of :func:`label_sides`.

    Bad values written with a trailing full stop in one file and not the other match
    (:func:`label_key`).

    >>> label_values([True, False, True], "out.jsonl", bad=["1"])
    ([True], [False])
    >>> label_values(["<=50K.", ">50K."], "test.csv", bad=[">50K"])
    (['>50K.'], ['<=50K.'])
    """
    return label_sides(values, where, bad, name)[:2]


def label_sides(values: Sequence[Any], where: str, bad: Sequence[str] = (),
                name: str | None = None) -> tuple[list[Any], list[Any], list[Any]]:
    """``(bad, good, pending)`` values of a label column (``where``: the file, for the
    error). Without ``bad``, each value must be an outcome word
    (:mod:`~driftwatch.onboard.outcomewords`), one bad and one good at least: a flag (1/0,
    true/false, yes/no) is bad when true, unless the column's ``name`` says true is good
    (:func:`good_when_true`: ``repaid``); a loan status's ``Current`` or ``Past Due ...`` is
    pending (no outcome yet). Given ``bad`` values, every other value is good but a
    pending word (where a final good value is there too: beside ``Delinquent`` alone,
    ``Current`` is good) or Freddie Mac's unknown delinquency status ``XX``
    (:func:`~driftwatch.onboard.outcomewords.unknown_codes`); of which none is in a flag
    column, the column's own spelling of the same side is bad: a reference's 1 is an
    outcomes stream's ``true``.

    >>> label_sides(["Chargedoff", "Completed", "Current", "Defaulted"], "p.csv")
    (['Chargedoff', 'Defaulted'], ['Completed'], ['Current'])
    >>> label_sides(["Charged Off", "Fully Paid", "Current"], "l.csv", bad=["Charged Off"])
    (['Charged Off'], ['Fully Paid'], ['Current'])
    >>> label_sides(["0", "1", "3", "RA", "XX"], "f.csv", bad=["3", "4", "6", "RA"])
    (['3', 'RA'], ['0', '1'], ['XX'])
    """
    distinct = sorted({v for v in values if v is not None and not pd.isna(v)}, key=str)
    keys = {_norm(v): v for v in distinct}
    if bad:
        want = {_norm(b) for b in bad}
        if not want & keys.keys() and all(flag_truth(v) is not None for v in [*bad, *distinct]):
            sides = {flag_truth(b) for b in bad}
            want = {k for k, v in keys.items() if flag_truth(v) in sides}
        if not want & keys.keys():
            loose = {label_key(b) for b in bad}
            want = {k for k, v in keys.items() if label_key(v) in loose}
        b = [v for k, v in keys.items() if k in want]
        rest = [v for k, v in keys.items() if k not in want]
        unknown = unknown_codes(rest, bad)  # Freddie Mac's XX: no outcome known
        good = [v for v in rest if word_side(v) != "pending" and v not in unknown]
        if not good:  # no final outcome beside them: a 'current' / 'delinquent' flag
            return b, rest, []
        return b, good, [v for v in rest if word_side(v) == "pending" or v in unknown]
    side = {k: word_side(v) for k, v in keys.items()}
    b = [v for k, v in keys.items() if side[k] == "bad"]
    g = [v for k, v in keys.items() if side[k] == "good"]
    if not b or not g or None in side.values():
        raise ConfigError(
            "cannot tell which label value is bad: values "
            + ", ".join(repr(v) for v in distinct[:6])
            + (f" (and {len(distinct) - 6} more)" if len(distinct) > 6 else "")
            + (f" of {name}" if name else ""), file=where,
            hint="pass --label-bad VALUE (repeat it for several)"
            + (f"; if {name} is not the label, --label-field NAME" if name else ""))
    pending = [v for k, v in keys.items() if side[k] == "pending"]
    if len(b) == len(g) == 1 and good_when_true(name) and flag_truth(b[0]) is True:
        return g, b, pending
    return b, g, pending


@dataclass(frozen=True)
class Candidate:
    """A field that may play a role: its name, how well the name fits, why it fits."""

    name: str
    rank: int  # 3: exact name, 2: a usual pattern, 1: a weaker one
    why: str


def name_rank(name: str, exact: Sequence[str], patterns: Sequence[str],
              weak: Sequence[str] = (), unlike: Sequence[str] = ()) -> int:
    """3 for an exact name, 2 for a pattern, 1 for a weak pattern, 0 otherwise or for a
    name that ``unlike`` matches (a pattern's false friend); a CamelCase or spaced name is
    read as its snake_case too (``ClosedAt`` as ``closed_at``).

    >>> name_rank("ClosedAt", ("ts",), (r".+_at",)), name_rank("Event Time", ("event_time",), ())
    (2, 3)
    >>> name_rank("NumberOfTimes90DaysLate", (), (r".*time.*",), (), (r"number_?of.*",))
    0
    """
    low = leaf(name).lower()
    snake = _SPACES.sub("_", _HUMPS.sub("_", leaf(name).strip())).lower()
    forms = (low, snake)
    if low in exact or snake in exact or name.lower() in exact:
        return 3
    if any(re.fullmatch(p, f) for p in unlike for f in forms):
        return 0
    if any(re.fullmatch(p, f) for p in patterns for f in forms):
        return 2
    if any(re.fullmatch(p, f) for p in weak for f in forms):
        return 1
    return 0


_HUMPS = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SPACES = re.compile(r"[\s\-]+")


def looked_for(exact: Sequence[str], patterns: Sequence[str], weak: Sequence[str] = (),
               unlike: Sequence[str] = ()) -> str:
    """The names a role's spec accepts, as a user reads them.

    >>> looked_for(("id", "uuid"), (r".+_id",))
    'id, uuid, *_id'
    """
    return ", ".join([*exact, *(p.replace(".+", "*").replace(".*", "*") for p in patterns)])


def choose(role: str, candidates: Sequence[Candidate], flag: str, where: str,
           *, required: bool = False, missing: str = "", todo: str = "") -> Candidate | None:
    """The best candidate for ``role`` in the file ``where``; two equally good ones are an
    error naming both. A required role that is absent is an error saying ``missing`` (what
    was looked at) and ``todo`` (what to do besides ``flag``)."""
    if not candidates:
        if required:
            raise ConfigError(f"cannot find the {role} field" + (f": {missing}" if missing
                                                                 else ""), file=where,
                              hint=f"{todo}, or pass {flag} NAME" if todo
                              else f"pass {flag} NAME")
        return None
    best = max(c.rank for c in candidates)
    top = [c for c in candidates if c.rank == best]
    if len(top) > 1:
        raise ConfigError(
            f"the {role} is ambiguous: candidates "
            + ", ".join(f"{c.name} ({c.why})" for c in top), file=where,
            hint=f"pass {flag} NAME to say which")
    return top[0]
