"""What every wire format shares: a tool's description and parameters, arguments as JSON text."""

from __future__ import annotations

from typing import Any

import msgspec

JSONObject = dict[str, Any]
_encode = msgspec.json.Encoder().encode


def tool_description(tool: JSONObject) -> str:
    value = tool.get("description")
    return value if isinstance(value, str) else ""


def tool_parameters(tool: JSONObject) -> JSONObject:
    value = tool.get("parameters")
    return value if isinstance(value, dict) and value else {"type": "object", "properties": {}}


def json_text(value: Any) -> str:
    return _encode(value).decode()
