"""Ids and timestamps as pi writes them: standard library only, so what needs a time or an id
does not import the entry schemas (``store.entries``)."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from typing import Any


def new_id(taken: set[str] | dict[str, Any] | None = None) -> str:
    """A short unique id: 8 hex characters, checked against ``taken`` (as pi does)."""
    for _ in range(100):
        eid = secrets.token_hex(4)
        if taken is None or eid not in taken:
            return eid
    return secrets.token_hex(16)


def now_iso() -> str:
    """ISO 8601 in UTC with milliseconds and a Z, as JavaScript's toISOString writes it."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def now_ms() -> int:
    return int(datetime.now(UTC).timestamp() * 1000)
