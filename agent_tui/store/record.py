"""One entry of a session file, decoded lazily.

Loading decodes only ``type``, ``id`` and ``parentId`` of each line and keeps the
rest as undecoded JSON bytes. The full object is decoded the first time
someone asks for it, so opening a 50 MB session costs one scan, not one parse
into Python objects of every byte.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

JSONObject = dict[str, Any]


class _MessageHead(msgspec.Struct):
    role: Any = None
    toolName: Any = None
    content: msgspec.Raw = msgspec.Raw(b"")
    excludeFromContext: Any = None


_decode_message_head = msgspec.json.Decoder(_MessageHead).decode
_decode_any = msgspec.json.Decoder().decode


#: A JSON escape of a UTF-16 surrogate (the quick test before the repair below).
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
#: Every escape sequence, left to right (so an escaped backslash is never read as an escape's
#: start): a surrogate pair, a lone surrogate, or any other escape.
_ESCAPES = re.compile(
    rb"\\(?:u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|u[dD][89a-fA-F][0-9a-fA-F]{2}|.)",
    re.DOTALL,
)


def _lone_to_fffd(match: re.Match[bytes]) -> bytes:
    escape = match.group()
    return b"\\ufffd" if len(escape) == 6 else escape  # six bytes: the lone-surrogate alternative


def repair_lone_surrogates(raw: bytes | memoryview) -> bytes | None:
    """``raw`` with each escaped lone surrogate (``"\\ud83d"`` alone) turned into ``\\ufffd``, or None
    when it holds none.

    pi writes such escapes when it cuts a string inside an emoji (JavaScript strings are UTF-16);
    that is valid JSON and pi loads it, but msgspec refuses it. U+FFFD rather than the surrogate
    itself: a Python string holding a lone surrogate cannot be encoded to UTF-8, so writing it back,
    exporting it or sending it to a provider would fail.
    """
    data = bytes(raw)
    if _SURROGATE_ESCAPE.search(data) is None:
        return None
    repaired = _ESCAPES.sub(_lone_to_fffd, data)
    return repaired if repaired != data else None


def decode_json(raw: bytes | memoryview | msgspec.Raw) -> Any:
    """A JSON value from bytes that loading let through, never raising.

    Loading checks each line's shape and decodes only type, id and parentId, so a
    payload can still hold invalid UTF-8 inside a string (replaced here by
    U+FFFD) or nest too deeply to decode (None).
    """
    try:
        return _decode_any(raw)
    except msgspec.DecodeError:
        text = bytes(raw).decode("utf-8", "replace").encode()
        try:
            return _decode_any(repair_lone_surrogates(text) or text)
        except (msgspec.DecodeError, RecursionError):
            return None
    except RecursionError:
        return None


class LineSource:
    """The bytes of a loaded file, and where each line starts (found on first use)."""

    __slots__ = ("_starts", "data")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self._starts: list[int] | None = None

    @property
    def starts(self) -> list[int]:
        """Offset of each line's first byte (a final empty line after the last newline included)."""
        if self._starts is None:
            starts = [0]
            find, pos = self.data.find, 0
            while (pos := find(b"\n", pos) + 1) > 0:
                starts.append(pos)
            self._starts = starts
        return self._starts

    def line(self, number: int) -> memoryview:
        """Line ``number`` (1-based) without its newline."""
        starts = self.starts
        start = starts[number - 1]
        end = starts[number] - 1 if number < len(starts) else len(self.data)
        return memoryview(self.data)[start:end]


class Entry(msgspec.Struct, eq=False, gc=False):
    """A session entry: its tree links eagerly, its payload on demand.

    A Struct rather than a plain class: loading builds one per line, and a Struct
    is built in C, three times faster. Equality is identity (``eq=False``); no
    entry refers back to another, so the collector need not track them.
    """

    type: str
    id: str
    parent_id: str | None
    line: int  # 1-based line number in the file; 0 for entries not (yet) in a file
    raw: bytes | memoryview | LineSource | None = None
    _message_raw: msgspec.Raw | None = None
    _data: JSONObject | None = None
    _role: str | bool | None = False  # False: not decoded yet
    _plain: bool = False
    _tool: str | bool | None = False  # ``message.toolName``; False: not decoded yet

    @classmethod
    def from_data(cls, data: JSONObject, line: int = 0) -> Entry:
        return cls(data["type"], data["id"], data.get("parentId"), line, None, None, data)

    @property
    def data(self) -> JSONObject:
        """The whole JSON object of the line (decoded once, then cached)."""
        if self._data is None:
            raw = self.raw
            if isinstance(raw, LineSource):
                raw = raw.line(self.line)
            assert raw is not None
            self._data = self._decode(raw)
            self.raw = None
        return self._data

    def _decode(self, raw: bytes | memoryview) -> JSONObject:
        """The line's object; if it cannot be read (see ``decode_json``), only type, id and parentId,
        so the entry stays in the tree, out of context."""
        value = decode_json(raw)
        if not isinstance(value, dict):
            value = {"type": self.type, "id": self.id, "parentId": self.parent_id}
        return value

    @property
    def message_raw(self) -> msgspec.Raw | None:
        """The undecoded ``message`` field, when it is still undecoded."""
        return self._message_raw if self._data is None else None

    def peek_message_raw(self) -> msgspec.Raw | None:
        """:attr:`message_raw` for one look (a usage, a name): an entry read from the file by the
        sidecar reads it again next time rather than keep it (a 1 GB session's every assistant
        message would stay in memory)."""
        return self.message_raw

    @property
    def role(self) -> str | None:
        """For ``message`` entries, ``message.role``; otherwise None."""
        if self._role is False:
            self._decode_message_head()
        return self._role  # type: ignore[return-value]

    @property
    def is_plain_message(self) -> bool:
        """True when the undecoded message can be passed on as it is: it has content and is not excluded."""
        if self._role is False:
            self._decode_message_head()
        return self._plain and self._data is None

    def plain_role(self) -> str | None:
        """The role of a message that can be passed on undecoded (see ``is_plain_message``), else None."""
        if self._role is False:
            self._decode_message_head()
        return self._role if self._plain and self._data is None else None  # type: ignore[return-value]

    @property
    def tool_name(self) -> str | None:
        """For ``message`` entries, ``message.toolName`` when it is a string (a ``toolResult``'s
        tool); otherwise None. Known without reading the line when the sidecar recorded it."""
        if self._role is False:
            self._decode_message_head()
        if self._tool is False:
            self._tool = self._read_tool_name()
        return self._tool  # type: ignore[return-value]

    def _read_tool_name(self) -> str | None:
        if self.type != "message":
            return None
        raw = self.message_raw
        name: Any = None
        if raw is not None:
            try:
                name = _decode_message_head(raw).toolName
            except msgspec.ValidationError:
                name = None
            except (msgspec.DecodeError, RecursionError):
                raw = None  # read it through ``data``, which repairs it
        if raw is None:
            message = self.message
            name = message.get("toolName") if message is not None else None
        return name if isinstance(name, str) else None

    def _decode_message_head(self) -> None:
        role: Any = None
        tool: Any = None
        plain = False
        if self.type == "message":
            if self._data is None and self._message_raw is not None:
                try:
                    head = _decode_message_head(self._message_raw)
                except msgspec.ValidationError:
                    head = _MessageHead()
                except (msgspec.DecodeError, RecursionError):
                    head = None  # e.g. invalid UTF-8 inside: read it through ``data``, which repairs it
                if head is not None:
                    role = head.role
                    tool = head.toolName
                    content = head.content
                    plain = (
                        len(content) > 0
                        and not (len(content) == 4 and bytes(content) == b"null")
                        and not head.excludeFromContext
                    )
                else:
                    message = self.data.get("message")
                    role = message.get("role") if isinstance(message, dict) else None
                    tool = message.get("toolName") if isinstance(message, dict) else None
            else:
                message = self.data.get("message")
                role = message.get("role") if isinstance(message, dict) else None
                tool = message.get("toolName") if isinstance(message, dict) else None
        self._role = role if isinstance(role, str) else None
        self._tool = tool if isinstance(tool, str) else None
        self._plain = plain

    @property
    def message(self) -> JSONObject | None:
        """For ``message`` entries, the message object; otherwise None."""
        message = self.data.get("message") if self.type == "message" else None
        return message if isinstance(message, dict) else None

    def __repr__(self) -> str:
        return f"Entry({self.type!r}, {self.id!r}, parent={self.parent_id!r}, line={self.line})"
