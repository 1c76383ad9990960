"""The outbox: every decision that asks for an action, written durably before it runs.

One SQLite file in the state directory (WAL journal, ``synchronous=FULL``: a committed row
survives a power cut). Three tables, which together are the audit trail:

* ``actions`` — one row per idempotency key ``model:tier:window_id``; ``INSERT OR IGNORE``
  makes a repeated decision a no-op. The row holds the decision (reasons, policy file and
  content hash), the context (window bounds), the state, the approver, the outcome and the
  artifacts (MLflow run, model versions, pool job).
* ``steps`` — each step of each action, ``started`` and then ``done`` (with its result) or
  ``failed``; a step with a ``done`` row is never run again.
* ``admin`` — calls made by people (approve, cancel, rollback), with who and when.

States: ``pending`` → (``awaiting_approval``) → ``running`` → ``succeeded`` | ``failed`` |
``cancelled``.

>>> import tempfile
>>> from driftwatch.clock import ManualClock
>>> from driftwatch.policy.decision import Decision
>>> from driftwatch.policy.tiers import Tier
>>> box = Outbox(tempfile.mkdtemp(), clock=ManualClock(100.0))
>>> d = Decision(model="credit", window_id=7, time=90.0, tier=Tier.MILD, raw_tier=Tier.MILD,
...              action="online_update")
>>> box.record(d, {"window_end": 90.0})
(1, True)
>>> box.record(d, {"window_end": 90.0})
(1, False)
>>> box.get(1).state, box.get(1).key
(<ActionState.PENDING: 'pending'>, 'credit:mild:7')
>>> box.close()
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from driftwatch.actions.records import ActionRecord, ActionState, AdminCall, StepRecord
from driftwatch.actions.tables import SCHEMA, SCHEMA_VERSION, dumps
from driftwatch.clock import Clock
from driftwatch.errors import ActionError, StateError
from driftwatch.policy.decision import Decision

__all__ = ["OUTBOX_FILE", "Outbox"]

OUTBOX_FILE = "outbox.sqlite3"


class Outbox:
    """Durable actions, their steps and the admin calls on them (see module doc)."""

    def __init__(self, state_dir: str | Path, *, clock: Clock, filename: str = OUTBOX_FILE):
        self.state_dir = Path(state_dir).absolute()
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.path = self.state_dir / filename
        self.clock = clock
        self._lock = threading.RLock()
        try:
            self._db = sqlite3.connect(
                self.path, isolation_level=None, check_same_thread=False, timeout=30.0
            )
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._db.executescript(SCHEMA)
            row = self._db.execute("SELECT value FROM meta WHERE name = 'schema'").fetchone()
            if row is None:
                self._db.execute(
                    "INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),)
                )
            elif int(row[0]) != SCHEMA_VERSION:
                raise StateError(f"{self.path}: outbox schema {row[0]}, expected {SCHEMA_VERSION}")
        except sqlite3.DatabaseError as exc:
            raise StateError(f"{self.path}: cannot open the outbox: {exc}") from exc

    def close(self) -> None:
        with self._lock:
            self._db.close()

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                if self._db.in_transaction:  # SQLite ends it by itself on a full disk
                    self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    # -- recording ---------------------------------------------------------------------
    def record(
        self,
        decision: Decision,
        context: Mapping[str, Any] | None = None,
        *,
        state: ActionState = ActionState.PENDING,
        key: str | None = None,
        action: str | None = None,
        parent_id: int | None = None,
    ) -> tuple[int, bool]:
        """Write ``decision`` durably; returns ``(action id, created)``. A key already
        recorded returns its id and ``False`` and changes nothing."""
        key = key or decision.key
        kind = action or decision.action
        if not kind:
            raise ActionError(f"decision {key} has no action to record")
        now = self.clock.now()
        with self._tx() as db:
            row = db.execute("SELECT id FROM actions WHERE key = ?", (key,)).fetchone()
            if row is not None:  # checked first so that ids stay consecutive
                return int(row[0]), False
            cur = db.execute(
                "INSERT OR IGNORE INTO actions (key, model, tier, window_id, action, state, "
                "decision, context, policy, policy_digest, requires_approval, decided_at, "
                "created_at, updated_at, parent_id) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    key,
                    decision.model,
                    str(decision.tier),
                    decision.window_id,
                    kind,
                    state.value,
                    dumps(decision.to_dict()),
                    dumps(dict(context or {})),
                    decision.policy,
                    decision.policy_digest,
                    int(decision.requires_approval),
                    decision.time,
                    now,
                    now,
                    parent_id,
                ),
            )
            created = cur.rowcount == 1
            (action_id,) = db.execute("SELECT id FROM actions WHERE key = ?", (key,)).fetchone()
            if created:
                self._insert_step(db, action_id, "recorded", "done", now, {"state": state.value})
        return int(action_id), created

    # -- reading -----------------------------------------------------------------------
    def get(self, action_id: int) -> ActionRecord:
        rows = self._select("WHERE id = ?", (int(action_id),))
        if not rows:
            raise ActionError(f"no action {action_id} in {self.path}")
        return rows[0]

    def by_key(self, key: str) -> ActionRecord | None:
        rows = self._select("WHERE key = ?", (key,))
        return rows[0] if rows else None

    def list(
        self,
        *,
        states: Sequence[ActionState | str] | None = None,
        model: str | None = None,
        since: float | None = None,
        until: float | None = None,
        limit: int | None = None,
    ) -> list[ActionRecord]:
        """Actions by id (oldest first), filtered by state, model and decision time."""
        where, args = [], []
        if states:
            where.append(f"state IN ({', '.join('?' for _ in states)})")
            args += [str(ActionState(s).value) for s in states]
        if model:
            where.append("model = ?")
            args.append(model)
        if since is not None:
            where.append("decided_at >= ?")
            args.append(since)
        if until is not None:
            where.append("decided_at < ?")
            args.append(until)
        sql = ("WHERE " + " AND ".join(where)) if where else ""
        sql += " ORDER BY id"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return self._select(sql, tuple(args))

    def unfinished(self) -> list[ActionRecord]:
        """Actions the executor still has to move (pending or running), oldest first."""
        return self.list(states=[ActionState.PENDING, ActionState.RUNNING])

    def _select(self, tail: str, args: tuple[Any, ...]) -> list[ActionRecord]:
        with self._lock:
            cur = self._db.execute(f"SELECT * FROM actions {tail}", args)
            names = [c[0] for c in cur.description]
            rows = cur.fetchall()
        out = []
        for row in rows:
            d = dict(zip(names, row, strict=True))
            for k in ("decision", "context", "outcome", "artifacts"):
                d[k] = json.loads(d[k])
            d["state"] = ActionState(d["state"])
            d["requires_approval"] = bool(d["requires_approval"])
            out.append(ActionRecord(**d))
        return out

    # -- steps -------------------------------------------------------------------------
    @staticmethod
    def _insert_step(
        db: sqlite3.Connection,
        action_id: int,
        step: str,
        status: str,
        at: float,
        detail: Mapping[str, Any],
    ) -> None:
        db.execute(
            "INSERT INTO steps (action_id, step, status, at, detail) VALUES (?, ?, ?, ?, ?)",
            (action_id, step, status, at, dumps(dict(detail))),
        )

    def log_step(
        self, action_id: int, step: str, status: str, detail: Mapping[str, Any] | None = None
    ) -> None:
        with self._lock:
            self._insert_step(self._db, action_id, step, status, self.clock.now(), detail or {})

    def step_result(self, action_id: int, step: str) -> dict[str, Any] | None:
        """The result of ``step`` if it finished (``done``), else None."""
        with self._lock:
            row = self._db.execute(
                "SELECT detail FROM steps WHERE action_id = ? AND step = ? AND status = 'done' "
                "ORDER BY id DESC LIMIT 1",
                (action_id, step),
            ).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def steps(self, action_id: int) -> list[StepRecord]:
        with self._lock:
            rows = self._db.execute(
                "SELECT action_id, step, status, at, detail FROM steps WHERE action_id = ? "
                "ORDER BY id",
                (action_id,),
            ).fetchall()
        return [StepRecord(a, s, st, at, json.loads(d)) for a, s, st, at, d in rows]

    # -- changes -----------------------------------------------------------------------
    def update(
        self,
        action_id: int,
        *,
        state: ActionState | None = None,
        expect: Sequence[ActionState] | None = None,
        outcome: Mapping[str, Any] | None = None,
        artifacts: Mapping[str, Any] | None = None,
        error: str | None = None,
        note: str | None = None,
        attempts: int | None = None,
        next_attempt_at: float | None = None,
    ) -> ActionRecord:
        """Change an action in one transaction; ``artifacts`` are merged into the stored
        ones; a state change is logged as step ``state`` and refused unless the current
        state is in ``expect`` (when given)."""
        now = self.clock.now()
        with self._tx() as db:
            current = self._select("WHERE id = ?", (action_id,))
            if not current:
                raise ActionError(f"no action {action_id} in {self.path}")
            rec = current[0]
            if expect is not None and rec.state not in expect:
                raise ActionError(
                    f"action {action_id} {rec.state.sentence}; this needs it "
                    + " or ".join(s.label for s in expect)
                )
            sets: dict[str, Any] = {"updated_at": now, "next_attempt_at": next_attempt_at}
            if state is not None:
                sets["state"] = state.value
            if outcome is not None:
                sets["outcome"] = dumps(dict(outcome))
            if artifacts:
                sets["artifacts"] = dumps({**rec.artifacts, **artifacts})
            if error is not None:
                sets["error"] = error
            if note is not None:
                sets["note"] = note
            if attempts is not None:
                sets["attempts"] = attempts
            db.execute(
                f"UPDATE actions SET {', '.join(f'{k} = ?' for k in sets)} WHERE id = ?",
                (*sets.values(), action_id),
            )
            if state is not None and state is not rec.state:
                self._insert_step(
                    db,
                    action_id,
                    "state",
                    "done",
                    now,
                    {"from": rec.state.value, "to": state.value, "error": error},
                )
        return self.get(action_id)

    def approve(self, action_id: int, approver: str) -> ActionRecord:
        """A person approves an action awaiting approval; the executor carries it on."""
        if not approver.strip():
            raise ActionError("an approval needs the approver's name (--by NAME)")
        now = self.clock.now()
        with self._tx() as db:
            rec = self._select("WHERE id = ?", (action_id,))
            if not rec:
                raise ActionError(f"no action {action_id} in {self.path}")
            if rec[0].state is not ActionState.AWAITING_APPROVAL:
                raise ActionError(
                    f"action {action_id} {rec[0].state.sentence}: there is nothing to approve"
                )
            started = db.execute(
                "SELECT COUNT(*) FROM steps WHERE action_id = ? AND step NOT IN "
                "('recorded', 'state', 'export')",
                (action_id,),
            ).fetchone()[0]
            to = ActionState.RUNNING if started else ActionState.PENDING
            db.execute(
                "UPDATE actions SET state = ?, approver = ?, approved_at = ?, updated_at = ?, "
                "next_attempt_at = NULL WHERE id = ?",
                (to.value, approver, now, now, action_id),
            )
            self._insert_step(
                db,
                action_id,
                "state",
                "done",
                now,
                {"from": "awaiting_approval", "to": to.value, "by": approver},
            )
            db.execute(
                "INSERT INTO admin (action_id, command, actor, at, detail) VALUES (?,?,?,?,?)",
                (action_id, "approve", approver, now, "{}"),
            )
        return self.get(action_id)

    def cancel(self, action_id: int, actor: str, reason: str = "") -> ActionRecord:
        """Cancel an unfinished action (a running pool job or a challenger in shadow is
        cleaned up by the executor)."""
        rec = self.get(action_id)
        if rec.state.is_final:
            raise ActionError(f"action {action_id} {rec.state.sentence}: there is nothing "
                              "to cancel")
        out = self.update(
            action_id,
            state=ActionState.CANCELLED,
            expect=[ActionState.PENDING, ActionState.AWAITING_APPROVAL, ActionState.RUNNING],
            error=f"cancelled by {actor}" + (f": {reason}" if reason else ""),
        )
        self.log_admin(action_id, "cancel", actor, {"reason": reason})
        return out

    def log_admin(
        self,
        action_id: int | None,
        command: str,
        actor: str,
        detail: Mapping[str, Any] | None = None,
    ) -> None:
        with self._lock:
            self._db.execute(
                "INSERT INTO admin (action_id, command, actor, at, detail) VALUES (?,?,?,?,?)",
                (action_id, command, actor, self.clock.now(), dumps(dict(detail or {}))),
            )

    def admin_calls(self, action_id: int | None = None) -> list[AdminCall]:
        with self._lock:
            if action_id is None:
                rows = self._db.execute(
                    "SELECT action_id, command, actor, at, detail FROM admin ORDER BY id"
                ).fetchall()
            else:
                rows = self._db.execute(
                    "SELECT action_id, command, actor, at, detail FROM admin "
                    "WHERE action_id = ? ORDER BY id",
                    (action_id,),
                ).fetchall()
        return [AdminCall(a, c, who, at, json.loads(d)) for a, c, who, at, d in rows]
