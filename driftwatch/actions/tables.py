"""The outbox's tables, and how values are stored in them (JSON text, sorted keys).

>>> dumps({"b": 1, "a": [1.5, None]})
'{"a":[1.5,null],"b":1}'
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["SCHEMA", "SCHEMA_VERSION", "dumps"]

SCHEMA_VERSION = 1


SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS actions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    key TEXT NOT NULL UNIQUE,
    model TEXT NOT NULL,
    tier TEXT NOT NULL,
    window_id INTEGER NOT NULL,
    action TEXT NOT NULL,
    state TEXT NOT NULL,
    decision TEXT NOT NULL,
    context TEXT NOT NULL,
    policy TEXT NOT NULL,
    policy_digest TEXT NOT NULL,
    requires_approval INTEGER NOT NULL,
    decided_at REAL NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at REAL,
    approver TEXT,
    approved_at REAL,
    outcome TEXT NOT NULL DEFAULT '{}',
    artifacts TEXT NOT NULL DEFAULT '{}',
    error TEXT,
    note TEXT,
    parent_id INTEGER REFERENCES actions (id)
);
CREATE INDEX IF NOT EXISTS actions_state ON actions (state);
CREATE TABLE IF NOT EXISTS steps (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    action_id INTEGER NOT NULL REFERENCES actions (id),
    step TEXT NOT NULL,
    status TEXT NOT NULL,
    at REAL NOT NULL,
    detail TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS steps_action ON steps (action_id, step);
CREATE TABLE IF NOT EXISTS admin (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    action_id INTEGER REFERENCES actions (id),
    command TEXT NOT NULL,
    actor TEXT NOT NULL,
    at REAL NOT NULL,
    detail TEXT NOT NULL DEFAULT '{}'
);
"""


def dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
