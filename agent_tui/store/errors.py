"""Errors raised by the store. Each message is one line naming the file and the line or id."""

from __future__ import annotations


class StoreError(Exception):
    """A session file could not be read or written as asked."""


class NotASessionError(StoreError):
    """The file exists but is not a session file (no header line)."""


class SessionLockedError(StoreError):
    """Another process holds the single-writer lock of a session file."""


class ReadOnlyError(StoreError):
    """The session was opened read-only, or its format cannot be appended to."""


class EntryNotFoundError(StoreError):
    """An id names no entry of the session."""


class ConcurrentChangeError(StoreError):
    """The file changed on disk behind our back (another program appended or truncated it)."""
