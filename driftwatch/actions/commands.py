"""``driftwatch actions ...`` and ``driftwatch approve``.

These commands read and write the state directory of a daemon that may be running: they
only touch the outbox (SQLite in WAL mode takes a second writer); the daemon's executor
carries out an approval or a cancellation on its next pass. ``driftwatch pool`` lives in
:mod:`driftwatch.service.pool_commands`.

>>> import argparse
>>> parser = argparse.ArgumentParser(prog="driftwatch")
>>> add_commands(parser.add_subparsers(dest="command"))
>>> args = parser.parse_args(["actions", "approve", "7", "--by", "ana"])
>>> args.action_id, args.by, args.state_dir, args.func is run_approve
('7', 'ana', './state', True)
>>> parser.parse_args(["approve", "7", "--by", "ana"]).func is run_approve
True
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from driftwatch.actions.outbox import OUTBOX_FILE, Outbox
from driftwatch.actions.records import ActionState
from driftwatch.clock import SystemClock
from driftwatch.errors import ActionError

__all__ = [
    "add_commands",
    "run_approve",
    "run_cancel",
    "run_export",
    "run_list",
    "run_rollback",
    "run_show",
]

DEFAULT_STATE = "./state"


def _state(p: argparse.ArgumentParser) -> None:
    p.add_argument("--state-dir", default=DEFAULT_STATE, help="state folder (default ./state)")


def add_commands(subparsers: Any) -> None:
    """Add ``actions`` and ``approve`` to a CLI's subparsers."""
    actions = subparsers.add_parser("actions", help="list, inspect, approve, cancel actions")
    sub = actions.add_subparsers(dest="actions_command", required=True)
    ls = sub.add_parser("list", help="actions, newest last")
    ls.add_argument("--state", action="append", help="only these states (repeatable)")
    ls.add_argument("--model", help="only this model")
    ls.add_argument("--json", action="store_true", help="JSON lines instead of a table")
    ls.set_defaults(func=run_list)
    show = sub.add_parser("show", help="one action's audit entry: decision, steps, outcome")
    show.add_argument("action_id", metavar="ID", help="action id, or MODEL:ID")
    show.set_defaults(func=run_show)
    for p in (ls, show):
        _state(p)
    _approval(sub.add_parser("approve", help="approve an action awaiting approval"))
    cancel = sub.add_parser("cancel", help="cancel an unfinished action")
    cancel.add_argument("action_id", metavar="ID", help="action id, or MODEL:ID")
    cancel.add_argument("--by", required=True, metavar="NAME", help="who cancels")
    cancel.add_argument("--reason", default="", help="why (kept in the audit trail)")
    cancel.set_defaults(func=run_cancel)
    export = sub.add_parser("export", help="the audit trail as JSON")
    export.add_argument("--out", "-o", help="file to write (default: stdout)")
    export.add_argument("--model", help="only this model")
    export.set_defaults(func=run_export)
    rb = sub.add_parser("rollback", help="restore the previous champion of a model")
    rb.add_argument("model", metavar="MODEL")
    rb.add_argument("--by", required=True, metavar="NAME", help="who rolls back")
    rb.add_argument("--tracking-uri", help="MLflow tracking URI (default: the state folder's)")
    rb.set_defaults(func=run_rollback)
    for p in (cancel, export, rb):
        _state(p)

    _approval(subparsers.add_parser("approve", help="approve an action (same as actions approve)"))


def _approval(p: argparse.ArgumentParser) -> None:
    p.add_argument("action_id", metavar="ACTION_ID", help="action id, or MODEL:ID")
    p.add_argument("--by", required=True, metavar="NAME", help="who approves")
    _state(p)
    p.set_defaults(func=run_approve)


def _outboxes(state_dir: str | Path) -> dict[str, Path]:
    """Outbox folders by model: the daemon keeps one per model under ``models/<name>/``;
    a single outbox at the top (key ``""``) is what a replay or a library user writes."""
    state = Path(state_dir)
    found = {"": state} if (state / OUTBOX_FILE).exists() else {}
    for path in sorted(state.glob(f"models/*/{OUTBOX_FILE}")):
        found[path.parent.name] = path.parent
    if not found:
        raise ActionError(f"no actions recorded in {state} (no {OUTBOX_FILE})")
    return found


def _open_all(args: argparse.Namespace) -> dict[str, Outbox]:
    folders = _outboxes(args.state_dir)
    model = getattr(args, "model", None)
    if model and model in folders:
        folders = {model: folders[model]}
    return {name: Outbox(path, clock=SystemClock()) for name, path in folders.items()}


def _close(boxes: dict[str, Outbox]) -> None:
    for box in boxes.values():
        box.close()


def _find(args: argparse.Namespace) -> tuple[Outbox, int]:
    """The outbox holding ``args.action_id`` (``ID`` or ``MODEL:ID``), opened."""
    model, _, num = str(args.action_id).rpartition(":")
    if not num.isdigit():
        raise ActionError(f"no action {args.action_id!r}: expected an action id or MODEL:ID")
    folders = _outboxes(args.state_dir)
    if model:
        if model not in folders:
            raise ActionError(f"no actions of model {model!r} in {args.state_dir}")
        folders = {model: folders[model]}
    holders = []
    for path in folders.values():
        box = Outbox(path, clock=SystemClock())
        if _has(box, int(num)):
            holders.append(box)
        else:
            box.close()
    if not holders:
        raise ActionError(f"no action {args.action_id} in {args.state_dir}")
    if len(holders) > 1:
        for box in holders:
            box.close()
        raise ActionError(f"action {num} exists for several models: use MODEL:{num}")
    return holders[0], int(num)


def _has(box: Outbox, action_id: int) -> bool:
    try:
        box.get(action_id)
    except ActionError:
        return False
    return True


def _when(t: float | None) -> str:
    if t is None:
        return "-"
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d %H:%M:%S")


def run_list(args: argparse.Namespace) -> int:
    boxes = _open_all(args)
    try:
        recs = [r for box in boxes.values() for r in box.list(states=args.state, model=args.model)]
    finally:
        _close(boxes)
    if args.json:
        for r in recs:
            print(json.dumps(r.to_dict(), sort_keys=True, default=str))
        return 0
    print(f"{'ID':>5}  {'STATE':<17} {'ACTION':<13} {'DECIDED (UTC)':<19}  KEY / NOTE")
    for r in recs:
        said = r.error or r.note or ""
        # a succeeded action's verdict (a shadow's discard, an update left unchanged): the
        # state says the action ran to its end, not what it decided
        verdict = (r.outcome or {}).get("verdict")
        info = "; ".join(x for x in (verdict if verdict not in (None, "") and verdict not in said
                                     else None,
                                     r.approver and f"approved by {r.approver}", said) if x)
        print(
            f"{r.id:>5}  {r.state.value:<17} {r.action:<13} {_when(r.decided_at):<19}  {r.key}"
            + (f"  ({info})" if info else "")
        )
    return 0


def run_show(args: argparse.Namespace) -> int:
    from driftwatch.actions.audit import AuditTrail

    box, action_id = _find(args)
    try:
        entry = AuditTrail(box).entry(action_id)
    finally:
        box.close()
    print(json.dumps(entry, indent=2, sort_keys=True, default=str))
    return 0


def run_approve(args: argparse.Namespace) -> int:
    box, action_id = _find(args)
    try:
        rec = box.approve(action_id, args.by)
        superseded: list[Any] = []
        done = _carry_out(box, action_id, superseded)
    finally:
        box.close()
    if done is None:
        print(f"action {rec.id} ({rec.key}) approved by {args.by}; the daemon carries it out "
              "next")
        return 0
    verdict = done.outcome.get("verdict") or done.state.value
    print(f"action {done.id} ({done.key}) approved by {args.by}: {verdict}"
          + (f", champion is now v{done.outcome['version']}" if verdict == "promoted" else "")
          + (f" ({done.error})" if done.error else ""))
    for other in superseded:
        print(f"action {other.id} ({other.key}) superseded: {other.outcome['reason']}")
    return 0 if done.state is not ActionState.FAILED else 1


def _carry_out(box: Outbox, action_id: int, superseded: list[Any]) -> Any:
    """After ``replay --execute`` no daemon is left to act on an approval: an approved
    shadow promotion or online update of a replay's state folder is carried out here (None
    when a daemon owns the folder, or the action needs the GPU pool). The shadows its
    promotion leaves without a comparison are closed and added to ``superseded``."""
    from driftwatch.actions.handoff import read_replay_state

    saved = read_replay_state(box.state_dir)
    rec = box.get(action_id)
    if saved is None or rec.action not in ("shadow", "online_update"):
        return None
    from driftwatch.actions.executor import ActionExecutor
    from driftwatch.errors import StateError
    from driftwatch.registry.mlflow_registry import MlflowRegistry
    from driftwatch.registry.reading import champion_scale, resolve_scale

    registry = MlflowRegistry.from_uri(saved.get("tracking_uri"), box.state_dir)
    score_is = saved.get("score_is") or "p_bad"
    # written resolved by the replay: never "stream"
    scale = resolve_scale(champion_scale(saved.get("score_scale") or "probability"), None,
                          score_is=score_is)
    try:
        ex = ActionExecutor(box, registry, None, SystemClock(),
                            columns=saved.get("columns") or None,
                            score_is=score_is, score_scale=scale,
                            # a replay before they were kept: the defaults, as it read them
                            bad_labels=saved.get("bad_labels") or None)
    except StateError:  # a process runs actions on this folder: it carries this one out
        return None
    try:
        done = ex.run_one(action_id)
        # another shadow waiting to promote the same version, or compared against the
        # champion this one replaced: closed now, as the daemon's next pass would
        superseded.extend(ex.close_stale_approvals())
        return done
    finally:
        ex.close_lock()


def run_cancel(args: argparse.Namespace) -> int:
    box, action_id = _find(args)
    try:
        rec = box.cancel(action_id, args.by, args.reason)
    finally:
        box.close()
    print(f"action {rec.id} ({rec.key}) cancelled by {args.by}")
    return 0


def run_export(args: argparse.Namespace) -> int:
    from driftwatch.actions.audit import AuditTrail

    boxes = _open_all(args)
    try:
        doc: dict[str, list[Any]] = {"actions": [], "admin": []}
        for box in boxes.values():
            trail = AuditTrail(box)
            doc["actions"] += trail.entries(model=args.model)
            doc["admin"] += trail.admin_calls()
    finally:
        _close(boxes)
    text = json.dumps(doc, sort_keys=True, indent=2, default=str) + "\n"
    if args.out is None:
        sys.stdout.write(text)
    else:
        Path(args.out).write_text(text, encoding="utf-8")
        print(f"wrote {args.out}")
    return 0


def run_rollback(args: argparse.Namespace) -> int:
    from driftwatch.registry.mlflow_registry import MlflowRegistry
    from driftwatch.registry.promotion import rollback

    clock = SystemClock()
    registry = MlflowRegistry.from_uri(args.tracking_uri, args.state_dir)
    restored = rollback(registry, args.model, at=clock.now(), by=args.by)
    folder = Path(args.state_dir) / "models" / args.model
    box = Outbox(folder if folder.is_dir() else args.state_dir, clock=clock)
    try:
        box.log_admin(None, "rollback", args.by, {"model": args.model, "restored": restored})
    finally:
        box.close()
    print(
        f"{args.model}: champion is v{restored} again (the daemon adopts its reference profile "
        "on its next reference refresh)"
    )
    return 0
