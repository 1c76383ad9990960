r"""Replay expectations: small sentences checked against a replay timeline.

A timeline record is a dict with ``window_id``, ``start_time``, ``end_time`` (epoch
seconds), ``tier`` and ``decision`` (``action`` and ``data_quality_fault``).

Grammar (spaces around operators optional)::

    [no] SUBJECT [QUANTIFIER] [RANGE]
    SUBJECT    := tier OP TIER | action (==|!=) ACTION | ACTION | data_quality_fault
    OP         := >= | > | <= | < | == | !=
    QUANTIFIER := at least once | at least N times | every window
    RANGE      := between TIME and TIME | before TIME | after TIME
    TIME       := 2026-03-01 | 2026-03-01T06:00 | 2026-03-01T06:00:00+01:00 (UTC if no zone)

Semantics:

* a window belongs to a range by its **end time** (when its decision was made):
  ``between A and B`` is ``A <= end <= B``, ``before T`` is ``end < T``, ``after T`` is
  ``end > T``; no range means the whole timeline;
* without a quantifier, a lower bound (``tier>=X``, ``tier>X``), an action name,
  ``action==X`` and ``data_quality_fault`` hold if **at least once**; an upper bound
  (``tier<=X``, ``tier<X``), ``tier==X``, ``tier!=X`` and ``action!=X`` hold in
  **every window**; ``no ...`` holds if it **never** happens;
* a range with no window in it fails (so a short recording cannot pass by accident).

>>> day = 86400.0
>>> t0 = 1772323200.0  # 2026-03-01T00:00:00Z
>>> def rec(i, tier, action=None, dq=False):
...     return {"window_id": i, "start_time": t0 + (i - 1) * day, "end_time": t0 + i * day,
...             "tier": tier, "decision": {"action": action, "data_quality_fault": dq}}
>>> timeline = [rec(1, "none"), rec(2, "mild", "online_update"),
...             rec(3, "moderate", "shadow"), rec(4, "none")]
>>> parse_expectation("tier>=moderate between 2026-03-02 and 2026-03-04").check(timeline).passed
True
>>> parse_expectation("no retrain").check(timeline).passed
True
>>> r = parse_expectation("tier<=mild after 2026-03-03").check(timeline)
>>> r.passed, r.windows
(False, (3,))
>>> print(r.message.replace("; ", ";\n"))
expected tier<=mild in every window ending after 2026-03-03T00:00:00Z;
1 of 2 windows broke it: window 3 (moderate, ends 2026-03-04T00:00:00Z)
>>> print(parse_expectation("tier>=severe").check(timeline).message.replace("; ", ";\n"))
expected tier>=severe at least once in the whole timeline;
the highest tier was moderate (window 3, ends 2026-03-04T00:00:00Z)
>>> try:
...     parse_expectation("tier=>mild")
... except ExpectationError as exc:
...     print(exc.location, exc.message, exc.found)
expectation:1:5 expected an operator (>=, <=, ==, !=, >, <) after 'tier' '=>'
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from driftwatch.policy.catalog import ACTION_TYPES
from driftwatch.policy.errors import ExpectationError
from driftwatch.policy.tiers import TIER_NAMES, Tier
from driftwatch.yamlio import nearest, render_excerpt

__all__ = ["Expectation", "ExpectationResult", "check_expectations", "parse_expectation"]

_OPS = (">=", "<=", "==", "!=", ">", "<")
_TOKEN = re.compile(r">=|<=|==|!=|>|<|[^\s<>=!]+|[<>=!]+")
_EXAMPLE = "e.g. tier>=moderate between 2026-03-01 and 2026-03-03"
_ACTIONS = tuple(a for a in ACTION_TYPES if a != "none")


@dataclass(frozen=True)
class ExpectationResult:
    """Whether an expectation held, a sentence saying what was seen, and the windows
    that decided it (the ones that broke it, or the ones that satisfied it)."""

    expectation: Expectation
    passed: bool
    message: str
    windows: tuple[int, ...] = ()


@dataclass(frozen=True)
class Expectation:
    """A parsed expectation; :meth:`check` evaluates it on a timeline."""

    text: str
    subject: str  # "tier", "action" or "data_quality_fault"
    op: str  # comparison for tier/action; "==" for data_quality_fault
    value: str  # tier name, action name, or "true"
    quantifier: str  # "any", "all" or "never"
    min_count: int = 1
    start: float | None = None
    end: float | None = None
    range_kind: str = ""  # "", "between", "before", "after"

    def matches(self, record: Mapping[str, Any]) -> bool:
        """Whether one timeline record satisfies the subject."""
        if self.subject == "tier":
            return _compare(int(Tier.parse(record.get("tier", "none"))),
                            self.op, int(Tier.parse(self.value)))
        decision = record.get("decision") or {}
        if self.subject == "data_quality_fault":
            return bool(decision.get("data_quality_fault", record.get("data_quality_fault")))
        action = decision.get("action", record.get("action")) or "none"
        return (action == self.value) == (self.op == "==")

    def in_range(self, record: Mapping[str, Any]) -> bool:
        end = float(record["end_time"])
        if self.range_kind == "between":
            return self.start <= end <= self.end  # type: ignore[operator]
        if self.range_kind == "before":
            return end < self.end  # type: ignore[operator]
        if self.range_kind == "after":
            return end > self.start  # type: ignore[operator]
        return True

    def describe_range(self) -> str:
        if self.range_kind == "between":
            return f"ending between {_iso(self.start)} and {_iso(self.end)}"
        if self.range_kind == "before":
            return f"ending before {_iso(self.end)}"
        if self.range_kind == "after":
            return f"ending after {_iso(self.start)}"
        return "the whole timeline"

    def check(self, records: Iterable[Mapping[str, Any]]) -> ExpectationResult:
        """Evaluate on a timeline; the message says what was seen either way."""
        rows = [r for r in records if self.in_range(r)]
        where = self.describe_range()
        head = self._head(where)
        if not rows:
            return ExpectationResult(self, False, f"{head}; no window in range")
        hits = [r for r in rows if self.matches(r)]
        ids = tuple(int(r["window_id"]) for r in hits)
        if self.quantifier == "any":
            ok = len(hits) >= self.min_count
            if ok:
                return ExpectationResult(self, True, f"{head}; held in {len(hits)} window(s), "
                                         f"first {_win(hits[0])}", ids)
            return ExpectationResult(self, False, f"{head}; {self._seen(rows, hits)}", ids)
        bad = hits if self.quantifier == "never" else [r for r in rows if not self.matches(r)]
        bad_ids = tuple(int(r["window_id"]) for r in bad)
        if not bad:
            return ExpectationResult(self, True, f"{head}; held in all {len(rows)} windows")
        shown = ", ".join(self._label(r) for r in bad[:5]) + (", ..." if len(bad) > 5 else "")
        return ExpectationResult(
            self, False, f"{head}; {len(bad)} of {len(rows)} windows broke it: {shown}", bad_ids
        )

    def _head(self, where: str) -> str:
        what = self.text_subject()
        if self.quantifier == "never":
            return f"expected no {what} in {where}" if not self.range_kind else \
                f"expected no {what} in windows {where}"
        if self.quantifier == "all":
            return f"expected {what} in every window" + (f" {where}" if self.range_kind
                                                          else f" of {where}")
        times = "at least once" if self.min_count == 1 else f"at least {self.min_count} times"
        return f"expected {what} {times} in " + (f"windows {where}" if self.range_kind
                                                  else where)

    def text_subject(self) -> str:
        if self.subject == "tier":
            return f"tier{self.op}{self.value}"
        if self.subject == "data_quality_fault":
            return "data_quality_fault"
        return self.value if self.op == "==" else f"action!={self.value}"

    def _label(self, r: Mapping[str, Any]) -> str:
        if self.subject == "tier":
            return f"window {r['window_id']} ({r.get('tier')}, ends {_iso(r['end_time'])})"
        return _win(r)

    def _seen(self, rows: Sequence[Mapping[str, Any]], hits: Sequence[Mapping[str, Any]]) -> str:
        if self.subject == "tier":
            top = max(rows, key=lambda r: int(Tier.parse(r.get("tier", "none"))))
            seen = f"the highest tier was {top.get('tier')} ({_win(top)})"
        elif self.subject == "data_quality_fault":
            seen = "no window had a data-quality fault"
        else:
            acts = Counter((r.get("decision") or {}).get("action") or "none" for r in rows)
            seen = "actions seen: " + ", ".join(f"{a} x{n}" for a, n in sorted(acts.items()))
        if hits:
            seen = f"held in {len(hits)} window(s) only; " + seen
        return seen


def _compare(a: int, op: str, b: int) -> bool:
    return {">=": a >= b, ">": a > b, "<=": a <= b, "<": a < b, "==": a == b, "!=": a != b}[op]


def _iso(t: float | None) -> str:
    return datetime.fromtimestamp(float(t or 0.0), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _win(r: Mapping[str, Any]) -> str:
    return f"window {r['window_id']}, ends {_iso(r['end_time'])}"


class _Parser:
    def __init__(self, text: str, file: str | None, line: int | None, col: int) -> None:
        self.text, self.file, self.line, self.col0 = text, file, line, col
        self.toks = [(m.group(), m.start()) for m in _TOKEN.finditer(text)]
        self.i = 0

    def error(self, message: str, at: int | None = None, found: str | None = None,
              hint: str | None = _EXAMPLE) -> ExpectationError:
        if at is None:
            at = self.toks[self.i][1] if self.i < len(self.toks) else len(self.text)
        if found is None:
            found = repr(self.toks[self.i][0]) if self.i < len(self.toks) else "the end"
        return ExpectationError(
            message, file=self.file or "expectation", line=self.line or 1,
            col=self.col0 + at + 1, found=found, hint=hint,
            excerpt=render_excerpt(self.text, 1, at + 1),
        )

    def peek(self, k: int = 0) -> str | None:
        j = self.i + k
        return self.toks[j][0].lower() if j < len(self.toks) else None

    def take(self) -> str:
        tok = self.toks[self.i][0]
        self.i += 1
        return tok

    def time(self) -> float:
        if self.peek() is None:
            raise self.error("expected a date or time like 2026-03-01T06:00")
        tok = self.take()
        try:
            dt = datetime.fromisoformat(tok.replace("Z", "+00:00"))
        except ValueError:
            self.i -= 1
            raise self.error("expected a date or time like 2026-03-01T06:00") from None
        return (dt if dt.tzinfo else dt.replace(tzinfo=UTC)).timestamp()

    def parse(self) -> Expectation:
        negate = self.peek() == "no"
        if negate:
            self.take()
        subject, op, value = self.subject()
        quant, count = self.quantifier()
        if negate and quant:
            raise self.error("'no ...' takes no quantifier", at=self._quant_at)
        if not quant:
            lower = subject == "tier" and op in (">=", ">")
            quant = "never" if negate else (
                "any" if lower or (subject != "tier" and op == "==") else "all")
        start = end = None
        kind = ""
        word = self.peek()
        if word == "between":
            self.take()
            start = self.time()
            if self.peek() != "and":
                raise self.error("expected 'and' after the first time of 'between'")
            self.take()
            end = self.time()
            if end < start:
                raise self.error("the range ends before it starts", at=self.toks[self.i - 1][1],
                                 found=self.toks[self.i - 1][0], hint=None)
            kind = "between"
        elif word == "before":
            self.take()
            end, kind = self.time(), "before"
        elif word == "after":
            self.take()
            start, kind = self.time(), "after"
        if self.peek() is not None:
            raise self.error("unexpected words at the end",
                             hint="a range is: between A and B, before T or after T")
        return Expectation(self.text, subject, op, value, quant, count, start, end, kind)

    def subject(self) -> tuple[str, str, str]:
        word = self.peek()
        if word is None:
            raise self.error("empty expectation")
        if word in ("tier", "action"):
            self.take()
            op = self.peek()
            allowed = _OPS if word == "tier" else ("==", "!=")
            if op not in allowed:
                raise self.error(f"expected an operator ({', '.join(allowed)}) after {word!r}")
            self.take()
            valid = TIER_NAMES if word == "tier" else ACTION_TYPES
            name = self.peek()
            if name not in valid:
                guess = nearest(name or "", valid)
                raise self.error(
                    f"expected a {word} name" + (f" (did you mean {guess!r}?)" if guess else ""),
                    hint="valid: " + ", ".join(valid))
            self.take()
            return word, op, name
        if word == "data_quality_fault":
            self.take()
            return "data_quality_fault", "==", "true"
        if word in _ACTIONS:
            self.take()
            return "action", "==", word
        guess = nearest(word, ["tier", "action", "data_quality_fault", *_ACTIONS])
        raise self.error(
            "expected tier, action, an action name or data_quality_fault"
            + (f" (did you mean {guess!r}?)" if guess else ""))

    _quant_at = 0

    def quantifier(self) -> tuple[str, int]:
        self._quant_at = self.toks[self.i][1] if self.i < len(self.toks) else len(self.text)
        if self.peek() == "at" and self.peek(1) == "least":
            self.take(), self.take()
            if self.peek() == "once":
                self.take()
                return "any", 1
            n = self.peek()
            if n is not None and n.isdigit() and int(n) >= 1 and self.peek(1) == "times":
                self.take(), self.take()
                return "any", int(n)
            raise self.error("expected 'once' or 'N times' after 'at least'")
        if self.peek() == "in" and self.peek(1) == "every":
            self.take()
        if self.peek() == "every":
            self.take()
            if self.peek() != "window":
                raise self.error("expected 'window' after 'every'")
            self.take()
            return "all", 1
        return "", 1


def parse_expectation(text: str, *, file: str | None = None, line: int | None = None,
                      col: int = 0) -> Expectation:
    """Parse one expectation; :class:`ExpectationError` points at the bad word.

    ``file``/``line``/``col`` say where the text sits (a replay config), for messages.
    """
    return _Parser(text.strip(), file, line, col).parse()


def check_expectations(texts: Iterable[str], records: Sequence[Mapping[str, Any]]
                       ) -> list[ExpectationResult]:
    """Parse and check several expectations against one timeline."""
    return [parse_expectation(t).check(records) for t in texts]
