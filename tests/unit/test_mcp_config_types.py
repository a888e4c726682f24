"""The ``type`` of an MCP server entry, as Claude Code writes it: stdio, http (streamable HTTP) or
sse (the legacy SSE transport); the transport follows from it, and a wrong one is one reason."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agent_tui.agent.mcp.config import parse_server


def parse(raw: dict[str, object]) -> str:
    return parse_server("s", raw, ".mcp.json", base=Path("/w"), env={}).transport


def test_the_type_chooses_the_transport() -> None:
    assert parse({"command": "srv"}) == "stdio"
    assert parse({"url": "http://127.0.0.1:1/mcp"}) == "http"
    assert parse({"type": "http", "url": "http://127.0.0.1:1/mcp"}) == "http"
    assert parse({"type": "streamable-http", "url": "http://127.0.0.1:1/mcp"}) == "http"
    assert parse({"type": "sse", "url": "http://127.0.0.1:1/sse"}) == "sse"


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ({"type": "sse", "command": "srv"}, 'type "sse" needs a url'),
        (
            {"type": "websocket", "url": "ws://x"},
            'type must be one of "stdio", "http", "streamable-http", "streamableHttp", "sse", not "websocket"',
        ),
    ],
)
def test_a_wrong_type_is_one_reason(raw: dict[str, object], reason: str) -> None:
    with pytest.raises(ValueError, match="^" + re.escape(reason) + "$"):
        parse(raw)


def test_the_sse_transport_is_part_of_what_restarts_a_server() -> None:
    http = parse_server("s", {"url": "http://h/x"}, "c", base=Path("/w"), env={})
    sse = parse_server("s", {"type": "sse", "url": "http://h/x"}, "c", base=Path("/w"), env={})
    assert http.key() != sse.key()
