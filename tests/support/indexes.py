"""An index of a built session, as the app and the commands read one."""

from __future__ import annotations

from agent_tui.store.index import SessionIndex
from agent_tui.store.reader import parse_session
from tests.support.session_builder import Builder


def index_of(b: Builder) -> SessionIndex:
    return SessionIndex(parse_session(b.text().encode()))
