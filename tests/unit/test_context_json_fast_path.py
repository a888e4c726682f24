"""``agent-tui context --format json`` copies the messages' bytes from the file in batches
(``sidecar.write_messages``) and does not check again the UTF-8 of bytes its records say were
valid: its output is byte for byte what reading and checking each message alone gives, and the
same JSON as re-encoding every decoded message of a full parse, on sessions with edits, pins,
compactions, images, branches and damaged bytes."""

from __future__ import annotations

import json
import random
from pathlib import Path

import msgspec
import pytest

from agent_tui.cli.session_commands import _message_json, write_messages_json
from agent_tui.projection.context import project
from agent_tui.store import sidecar
from agent_tui.store.errors import ConcurrentChangeError
from agent_tui.store.index import SessionIndex
from agent_tui.store.reader import read_file
from tests.support.random_sessions import random_session
from tests.support.session_builder import Builder, assistant, tool_result, user

_encode = msgspec.json.Encoder().encode


class _Out:
    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def write(self, data: bytes) -> int:
        self.parts.append(bytes(data))
        return len(data)

    def value(self) -> bytes:
        return b"".join(self.parts)


def _fast(path: Path, unchecked: bool = False) -> bytes:
    loaded, _ = sidecar.load(path)
    if unchecked:  # as a sidecar written before records said whether a message is valid UTF-8
        for e in loaded.entries:
            e._utf8 = False  # type: ignore[attr-defined]
    out = _Out()
    write_messages_json(project(SessionIndex(loaded, str(path))), out)  # type: ignore[arg-type]
    return out.value()


def _one_by_one(path: Path) -> bytes:
    """The writer before batching: each message read alone and checked alone."""
    loaded, _ = sidecar.load(path)
    messages = project(SessionIndex(loaded, str(path))).messages
    return b"[" + b",".join(bytes(_message_json(m)) for m in messages) + b"]\n"


def _decoded(path: Path) -> object:
    messages = project(SessionIndex(read_file(path), str(path))).messages
    return json.loads(b"[" + b",".join(_encode(m.message) for m in messages) + b"]")


def _check(path: Path) -> bytes:
    sidecar.load(path)  # build the sidecar: the next opens are mapped
    loaded, _ = sidecar.load(path)
    assert all(isinstance(e, sidecar.MappedEntry) for e in loaded.entries)
    fast = _fast(path)
    assert fast == _one_by_one(path) == _fast(path, unchecked=True)
    assert json.loads(fast) == _decoded(path)
    return fast


def _surgery_session(path: Path, bad_utf8: bool) -> Path:
    b = Builder()
    b.add("model_change", provider="anthropic", modelId="claude-sonnet-4-5")
    for i in range(30):
        b.message(user(f'question {i} ünïcode Ω \\ " tab\t'))
        b.message(assistant(f"answer {i}", [(f"c{i}", "read", {"path": "f"})]))
        b.message(tool_result(f"c{i}", "x" * (3000 * i)))
    b.add("pin", targetId="e0002", pinned=True)
    b.add("compaction", summary="the summary", firstKeptEntryId="e0050", tokensBefore=1000)
    b.add(
        "context_edit", targetId="e0060", replacement={"content": [{"type": "text", "text": "replaced text"}]}
    )
    b.add("context_edit", targetId="e0061", replacement=None)  # hidden
    image = {"type": "image", "data": "iVBORw0KGgo" * 2000, "mimeType": "image/png"}
    b.message({"role": "user", "content": [{"type": "text", "text": "see"}, image], "timestamp": 5})
    b.message(user("the last question"))
    path = b.write(path)
    data = path.read_bytes()  # the builder escapes non-ASCII: a message with raw UTF-8 too, as pi writes
    path.write_bytes(data.replace(b"question 0 ", "question 0 \u00fcn\u00efcode \u03a9 ".encode(), 1))
    if bad_utf8:  # a message with a byte that is not UTF-8, as a damaged file holds one
        data = path.read_bytes().replace(b"the last question", b"the last \xff question")
        path.write_bytes(data)
    return path


@pytest.mark.parametrize("bad_utf8", [False, True])
def test_edits_pins_compaction_images(tmp_path: Path, bad_utf8: bool) -> None:
    path = _surgery_session(tmp_path / "s.jsonl", bad_utf8)
    fast = _check(path)
    text = fast.decode()  # always valid UTF-8: a damaged message is repaired
    assert "replaced text" in text and "the summary" in text
    assert ("the last \ufffd question" in text) is bad_utf8
    loaded, _ = sidecar.load(path)
    flags = {e.id: sidecar.copies_unread(e) for e in loaded.entries if e.type == "message"}
    assert "question 0 ünïcode Ω" in text
    assert flags["e0002"]  # that message: its raw UTF-8 was checked when recorded
    assert flags[loaded.entries[-1].id] is not bad_utf8


def test_small_gaps_and_spans_split_the_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _surgery_session(tmp_path / "s.jsonl", False)
    whole = _check(path)
    monkeypatch.setattr(sidecar, "READ_GAP", 0)
    monkeypatch.setattr(sidecar, "READ_SPAN", 1)
    assert _check(path) == whole


@pytest.mark.parametrize("seed", range(25))
def test_random_sessions(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    _check(random_session(seed, rng.randint(5, 80)).write(tmp_path / "r.jsonl"))


@pytest.mark.parametrize("change", ["newline", "truncate"])
def test_a_file_changed_after_opening_is_an_error(tmp_path: Path, change: str) -> None:
    path = _surgery_session(tmp_path / "s.jsonl", False)
    sidecar.load(path)
    loaded, _ = sidecar.load(path)
    projection = project(SessionIndex(loaded, str(path)))
    data = path.read_bytes()
    end = data.index(b"\n", data.index(b"image/png"))  # the image message's line ends here
    if change == "newline":  # same size, but that line no longer ends where it did
        path.write_bytes(data[:end] + b" " + data[end + 1 :])
    else:
        path.write_bytes(data[: end - 10])
    with pytest.raises(ConcurrentChangeError):
        write_messages_json(projection, _Out())  # type: ignore[arg-type]
