"""Importing Claude Code transcripts and Codex CLI rollouts (hand-written samples in tests/fixtures)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent_tui.library.importers import ImportFormatError, convert, detect, import_session, read_lines
from agent_tui.projection.context import project
from agent_tui.projection.request import prepare
from agent_tui.projection.wire.anthropic_messages import anthropic_request
from agent_tui.projection.wire.openai_completions import openai_request
from agent_tui.store.entries import validate_entry
from agent_tui.store.index import SessionIndex
from agent_tui.store.reader import read_file
from agent_tui.store.session import Session
from tests.support.request_validity import anthropic_problems, openai_problems

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CLAUDE = FIXTURES / "claude-code" / "8d2f4b6a-0c1e-4a3b-9d5f-7b9c1e3a5f60.jsonl"
CODEX = FIXTURES / "codex" / "rollout-2025-09-14T10-02-00-0199a4c2-7e3b-7d41-9f0e-3b8c2d1a6e57.jsonl"
CODEX_OLD = FIXTURES / "codex" / "rollout-2025-05-07T14-20-31-5b1e9a2c-44f0-4d8e-9a6b-2c7d1e0f3a45.jsonl"
ROOT = Path(__file__).resolve().parents[2]


def imported(source: Path, tmp_path: Path) -> SessionIndex:
    before = source.read_bytes()
    out = import_session(source, out=tmp_path / f"{source.stem}.imported.jsonl").path
    assert source.read_bytes() == before  # the source is only read
    index = SessionIndex(read_file(out), str(out))
    assert not index.warnings and not index.tree_warnings()
    for entry in index.entries:
        validate_entry(entry.data)  # every entry is one the store itself would write
    return index


def text_of(message: dict[str, object]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return (
        "\n".join(
            str(b.get("text") or b.get("thinking") or b.get("name") or "")
            for b in content
            if isinstance(b, dict)
        )
        if isinstance(content, list)
        else ""
    )


def requests_are_valid(index: SessionIndex) -> None:
    prepared = prepare(project(index).messages)
    assert anthropic_problems(anthropic_request(prepared, "claude-sonnet-4-5")) == []
    assert openai_problems(openai_request(prepared, "gpt-4.1")) == []


# -- Claude Code --------------------------------------------------------------------------------


def test_claude_code_transcript(tmp_path: Path) -> None:
    index = imported(CLAUDE, tmp_path)
    source = [json.loads(line) for line in CLAUDE.read_text().splitlines()]
    by_uuid = {o["uuid"]: o for o in source if "uuid" in o}
    assert index.header["cwd"] == "/home/dev/calc" and index.header["timestamp"] == "2025-08-14T09:12:10.259Z"
    assert index.name == "Fix parser tokenization of negative numbers"
    record = index.entries[0]
    assert record.data["customType"] == "agent-tui.import" and record.data["data"]["format"] == "claude-code"
    assert record.data["data"]["sourceSessionId"] == "8d2f4b6a-0c1e-4a3b-9d5f-7b9c1e3a5f60"
    assert record.data["data"]["dropped"]["file-history-snapshot lines"] == 1

    projection = project(index)
    roles = [m.role for m in projection.messages]
    texts = [text_of(m.message) for m in projection.messages]
    # resumes where Claude Code would: the last main-conversation line, after the compaction
    assert texts[-1].startswith("Added `tests/test_regression.py::test_subtract_negative`")
    assert projection.compaction_id is not None
    assert roles[0] == "user" and "Primary Request and Intent" in texts[0] and "<summary>" in texts[0]
    assert not texts[0].count("This session is being continued")  # Claude's preamble is not doubled
    compaction = index.by_id[projection.compaction_id]
    assert compaction.data["tokensBefore"] == 18734 and compaction.data["firstKeptEntryId"] == compaction.id
    # the compaction hangs under the message before the boundary (logicalParentUuid): the tree stays whole
    parent = index.by_id[compaction.parent_id or ""]
    assert "<command-name>/compact</command-name>" in text_of(parent.message or {})
    summarized = set(projection.summarized_ids)
    assert {e.id for e in index.active_path()[:5] if e.type == "message"} <= summarized
    # after the compaction: the image survived
    user_with_image = next(m for m in projection.messages if "CI screenshot" in text_of(m.message))
    assert [b["type"] for b in user_with_image.message["content"]] == ["text", "image"]
    requests_are_valid(index)

    # one assistant message per reply: thinking + text + tool call of msg_01Xg... merged
    first_reply = next(e for e in index.entries if e.role == "assistant")
    blocks = first_reply.message["content"]  # type: ignore[index]
    assert [b["type"] for b in blocks] == ["thinking", "text", "toolCall"]
    assert blocks[0]["thinkingSignature"].startswith("EqQB")
    assert blocks[2] == {
        "type": "toolCall",
        "id": "toolu_01Ab3Read9xYzQ",
        "name": "Read",
        "arguments": {"file_path": "/home/dev/calc/calc/parser.py"},
    }
    assert first_reply.message["stopReason"] == "toolUse"  # type: ignore[index]
    assert first_reply.message["usage"]["output"] == 142  # type: ignore[index]
    # tool results: name from the call, errors kept
    results = [e.message for e in index.entries if e.role == "toolResult"]
    assert all(r and r["toolName"] for r in results)
    failing = next(r for r in results if r and "1 failed, 3 passed" in text_of(r))
    assert failing["isError"] is True and failing["toolName"] == "Bash"

    # the tree: the two branches from the answer a9, each with its summary as a label
    a9 = by_uuid["c52d4f51-3749-4a6b-8628-4a6be6082924"]
    a9_id = next(
        e.id
        for e in index.entries
        if e.role == "assistant" and "All 4 tests pass" in text_of(e.message or {})
    )
    assert a9["uuid"].startswith(a9_id)
    kids = [e for e in index.children[a9_id] if e.type == "message"]
    assert [text_of(k.message or {}) for k in kids] == [
        "Also handle unary plus while you're at it.",
        "Actually, first add a regression test for `2 - -3`.",
    ]
    assert set(index.labels.values()) == {"Fix parser tokenization of negative numbers", "Unary plus support"}
    unary_leaf = next(k for k, v in index.labels.items() if v == "Unary plus support")
    unary = project(index, unary_leaf)
    assert text_of(unary.messages[-1].message).startswith("Unary plus is now accepted")
    api_error = next(
        e
        for e in index.path_to(unary_leaf)
        if e.role == "assistant" and "API Error" in text_of(e.message or {})
    )
    assert api_error.message["stopReason"] == "error"  # type: ignore[index]
    assert all("API Error" not in text_of(m.message) for m in prepare(unary.messages).messages)

    # the sub-agent's sidechain: its own branch under the import record, never in the main view
    sidechain = next(
        e for e in index.entries if "Find every caller of tokenize()" in text_of(e.message or {})
    )
    assert sidechain.parent_id == record.id
    before = project(index, compaction.parent_id)
    seen = [text_of(m.message) for m in before.messages]
    assert sum("Two callers" in t for t in seen) == 1  # the Task tool's result, not the sub-agent's reply
    assert not any("Grep" in t for t in seen)
    main_ids = {e.id for e in index.active_path()}
    assert sidechain.id not in main_ids
    # the system line (model fallback) is kept as state, not context
    state = [
        e for e in index.entries if e.type == "custom" and e.data.get("customType") == "claude-code.system"
    ]
    assert len(state) == 1 and state[0].data["data"]["subtype"] == "informational"
    # ids come from the uuids (the colliding prefix got another)
    ids = [e.id for e in index.entries]
    assert len(ids) == len(set(ids)) and "6f1d2c3a" in ids and "4da5c7d9" in ids


def test_claude_code_without_summaries_resumes_at_the_last_main_line(tmp_path: Path) -> None:
    lines = [line for line in CLAUDE.read_text().splitlines() if '"type":"summary"' not in line]
    # a sub-agent line written last must not become the leaf
    side = json.loads(next(line for line in lines if '"isSidechain":true' in line))
    side.update(uuid="99999999-0000-4000-8000-000000000001", timestamp="2025-08-14T10:00:00.000Z")
    source = tmp_path / "cc.jsonl"
    source.write_text("\n".join([*lines, json.dumps(side)]) + "\n")
    index = imported(source, tmp_path)
    assert index.name is None and not index.labels
    assert text_of(project(index).messages[-1].message).startswith("Added `tests/test_regression.py")


# -- Codex CLI ---------------------------------------------------------------------------------------


def test_codex_rollout(tmp_path: Path) -> None:
    index = imported(CODEX, tmp_path)
    assert index.header["cwd"] == "/home/dev/calc" and index.header["timestamp"] == "2025-09-14T10:02:00.412Z"
    record = index.entries[0].data["data"]
    assert record["format"] == "codex" and record["cli_version"] == "0.36.0"
    assert record["instructions"].startswith("Always run the test suite")
    assert record["dropped"]["encrypted reasoning"] == 3 and record["dropped"]["ghost_snapshot items"] == 1
    # linear: one chain
    assert len(index.roots()) == 1 and all(len(v) == 1 for k, v in index.children.items() if k is not None)
    path = index.active_path()
    types = [e.type for e in path]
    assert types.count("model_change") == 2 and types.count("thinking_level_change") == 2
    projection = project(index)
    assert projection.model == {"provider": "openai", "modelId": "gpt-5-codex"}
    assert projection.thinking_level == "high"
    # compaction: the summary, then what came after
    assert projection.compaction_id is not None
    texts = [text_of(m.message) for m in projection.messages]
    assert "calc/__main__.py builds its own parser" in texts[0]
    assert texts[1] == "Go on with __main__.py." and texts[-1].startswith("Both entry points accept")
    # before the compaction: replies merged (reasoning + call), results with names, exit codes as errors
    before_compaction = next(e for e in path if e.type == "compaction").parent_id
    full = project(index, before_compaction)
    replies = [e.message for e in path if e.role == "assistant"]
    first = replies[0]
    assert first is not None
    assert [b["type"] for b in first["content"]] == ["thinking", "toolCall"]
    assert first["content"][1]["arguments"]["command"] == ["bash", "-lc", "sed -n '1,80p' calc/main.py"]
    assert first["usage"]["input"] == 8123 - 3072 and first["usage"]["cacheRead"] == 3072
    patch = next(r for r in replies if r and any(b.get("name") == "apply_patch" for b in r["content"]))
    assert patch["content"][-1]["arguments"]["input"].startswith("*** Begin Patch")
    results = [e.message for e in path if e.role == "toolResult"]
    assert [r["toolName"] for r in results if r] == ["shell", "apply_patch", "shell", "shell", "shell"]
    failed = [r for r in results if r and r["isError"]]
    assert len(failed) == 1 and "1 failed, 4 passed" in text_of(failed[0])
    assert text_of(results[0] or {}).startswith("import argparse")  # the JSON wrapper is unwrapped
    assert "Fix __main__.py too, then compact." in [text_of(m.message) for m in full.messages]
    requests_are_valid(index)


def test_codex_early_rollout(tmp_path: Path) -> None:
    result = convert(CODEX_OLD)
    assert result.format == "codex" and result.source_session_id == "5b1e9a2c-44f0-4d8e-9a6b-2c7d1e0f3a45"
    assert result.dropped["state records"] == 3 and result.warnings
    index = imported(CODEX_OLD, tmp_path)
    texts = [text_of(m.message) for m in project(index).messages]
    assert texts[0] == "What does calc/ops.py export?" and texts[-1] == "It exports one function, `add`."
    requests_are_valid(index)


# -- detection, the command, and appending to an imported session ------------------------------------


def test_detection(tmp_path: Path) -> None:
    assert detect(CLAUDE) == "claude-code" and detect(CODEX) == "codex" and detect(CODEX_OLD) == "codex"
    with pytest.raises(ImportFormatError, match="open it directly"):
        detect(ROOT / "sessions.example" / "branches.jsonl")
    other = tmp_path / "other.jsonl"
    other.write_text('{"hello": 1}\nnot json\n')
    with pytest.raises(ImportFormatError, match="not a Claude Code transcript"):
        detect(other)
    assert read_lines(other)[1] == (2, None)


@pytest.mark.slow  # agent-tui (or Python) as a process: integration by nature
def test_import_command(tmp_path: Path) -> None:
    env = {**os.environ, "AGENT_TUI_HOME": str(tmp_path / "home"), "AGENT_TUI_FSYNC": "never"}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "agent_tui", *args], capture_output=True, text=True, env=env
        )

    out = run("import", str(CLAUDE))
    assert out.returncode == 0, out.stderr
    made = Path(out.stdout.strip())
    assert made.is_relative_to(tmp_path / "home" / "sessions") and made.parent.name == "--home-dev-calc--"
    assert "claude-code transcript" in out.stderr and "dropped" in out.stderr
    folder = run("import", str(FIXTURES / "codex"), "--session-dir", str(tmp_path / "dir"))
    assert folder.returncode == 0 and len(folder.stdout.split()) == 2
    assert len(list((tmp_path / "dir").glob("*.jsonl"))) == 2
    listed = run("sessions", "--session-dir", str(tmp_path / "dir"), "--search", "precision")
    assert listed.returncode == 0 and "--precision" in listed.stdout
    bad = run("import", str(ROOT / "sessions.example" / "branches.jsonl"))
    assert bad.returncode == 1 and "no import needed" in bad.stderr
    target = tmp_path / "x.jsonl"
    assert run("import", str(CODEX), "-o", str(target)).returncode == 0
    again = run("import", str(CODEX), "-o", str(target))
    assert again.returncode == 1 and "already exists" in again.stderr


def test_an_imported_session_can_be_continued(tmp_path: Path) -> None:
    out = import_session(CLAUDE, out=tmp_path / "cc.jsonl").path
    with Session.open(out) as session:
        leaf = session.leaf_id
        session.append_message({"role": "user", "content": "and now?", "timestamp": 1})
        assert session.index.by_id[session.leaf_id or ""].parent_id == leaf
    index = SessionIndex(read_file(out))
    assert text_of(project(index).messages[-1].message) == "and now?"


# -- shapes real third-party transcripts have (hand-written samples in fixtures/import-shapes) --

SHAPES = FIXTURES / "import-shapes"
PROJECT = SHAPES / "claude-project"
PARALLEL = PROJECT / "5c3e7a10-2b4d-4f6e-8a9c-1d2e3f4a5b6c.jsonl"
SUBAGENT = PROJECT / "5c3e7a10-2b4d-4f6e-8a9c-1d2e3f4a5b6c" / "subagents" / "agent-7a1b2c3d.jsonl"
STRING_MESSAGE = SHAPES / "claude-code-string-message.jsonl"
CODEX_COMPACTED = SHAPES / "rollout-2025-10-02T08-00-00-0199b0c1-1111-7222-8333-444455556666.jsonl"


def test_claude_code_line_whose_message_is_a_string(tmp_path: Path) -> None:
    index = imported(STRING_MESSAGE, tmp_path)
    texts = [text_of(e.message or {}) for e in index.active_path() if e.type == "message"]
    assert texts == ["Run the migrations.", "error", "retry please", "Migrations applied."]
    error = next(e for e in index.entries if e.role == "assistant" and text_of(e.message or {}) == "error")
    assert error.message["stopReason"] == "error"  # type: ignore[index]
    requests_are_valid(index)


def test_claude_code_parallel_tool_calls_are_one_reply(tmp_path: Path) -> None:
    """Several assistant lines of one ``message.id`` (text, then a call per line), each result under
    its own call's line: one assistant message with both calls, both results after it, one branch."""
    index = imported(PARALLEL, tmp_path)
    path = [e for e in index.active_path() if e.type == "message"]
    assert [e.role for e in path] == ["user", "assistant", "toolResult", "toolResult", "user", "assistant"]
    reply = path[1].message or {}
    assert [b["type"] for b in reply["content"]] == ["text", "toolCall", "toolCall"]
    assert [b["id"] for b in reply["content"][1:]] == ["toolu_01CartRead", "toolu_01PricesRead"]
    assert {e.message["toolCallId"] for e in path[2:4]} == {"toolu_01CartRead", "toolu_01PricesRead"}  # type: ignore[index]
    assert all(len(kids) == 1 for kids in index.children.values())  # no branch left behind
    # the prompt typed while Claude Code worked is the user's; the task notification stays state
    assert text_of(path[4].message or {}) == "Also check the discount code path."
    notes = [
        e for e in index.entries if e.type == "custom" and e.data["customType"] == "claude-code.attachment"
    ]
    assert len(notes) == 1
    prepared = prepare(project(index).messages)
    assert not prepared.repairs
    requests_are_valid(index)
    body = anthropic_request(prepared, "claude-sonnet-4-5")
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user", "assistant"]


def test_codex_compacted_with_only_a_replacement_history(tmp_path: Path) -> None:
    index = imported(CODEX_COMPACTED, tmp_path)
    compaction = next(e for e in index.entries if e.type == "compaction")
    summary = compaction.data["summary"]
    assert summary == (
        "user: Make total() use the prices table.\n\n"
        "assistant: total() now looks each item up in PRICES; tests pass."
    )
    raw = next(tmp_path.glob("*.imported.jsonl")).read_text()
    assert "gAAAA" not in raw and "encrypted_content" not in raw and "replacement_history" not in summary
    dropped = index.entries[0].data["data"]["dropped"]
    assert dropped["encrypted replacement_history items"] == 2
    texts = [text_of(m.message) for m in project(index).messages]
    assert summary in texts[0] and texts[-1] == "Now add a discount parameter."
    requests_are_valid(index)


def test_imports_never_write_cwd_slash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A transcript without a cwd (early Codex rollouts), or with ``/``, gets the importing
    process's cwd, with a note: ``/`` would make the whole disk the session's folder."""
    monkeypatch.chdir(tmp_path)
    index = imported(CODEX_OLD, tmp_path)
    assert index.header["cwd"] == str(tmp_path)
    note = index.entries[0].data["data"]["cwd"]
    assert note["recorded"] is None and note["used"] == str(tmp_path)
    slash = tmp_path / "slash.jsonl"
    slash.write_text(STRING_MESSAGE.read_text().replace('"cwd":"/home/dev/shop"', '"cwd":"/"'))
    result = convert(slash)
    assert result.cwd == str(tmp_path) and any("'/'" in w for w in result.warnings)
    assert convert(STRING_MESSAGE).cwd == "/home/dev/shop"  # a real cwd is kept


@pytest.mark.slow  # agent-tui (or Python) as a process: integration by nature
def test_folder_import_goes_on_past_a_bad_transcript_and_imports_subagents_as_forks(tmp_path: Path) -> None:
    import shutil

    folder = tmp_path / "project"
    shutil.copytree(PROJECT, folder)
    shutil.copy(STRING_MESSAGE, folder)
    (folder / "0-notes.jsonl").write_text('{"hello": "not a transcript"}\n')
    env = {**os.environ, "AGENT_TUI_HOME": str(tmp_path / "home"), "AGENT_TUI_FSYNC": "never"}
    out = subprocess.run(
        [sys.executable, "-m", "agent_tui", "import", str(folder), "--session-dir", str(tmp_path / "dir")],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert out.returncode == 1 and "Traceback" not in out.stderr
    bad = [line for line in out.stderr.splitlines() if "0-notes.jsonl" in line]
    assert len(bad) == 1 and "not a Claude Code transcript" in bad[0]
    made = [Path(p) for p in out.stdout.split()]
    assert len(made) == 3  # the session, its sub-agent, the string-message transcript
    headers = {p: json.loads(p.read_text().splitlines()[0]) for p in made}
    forks = [p for p, h in headers.items() if "parentSession" in h]
    assert len(forks) == 1
    parent = Path(headers[forks[0]]["parentSession"])
    assert parent in made and "Read cart.py" in parent.read_text()
    assert "Find every caller of total()" in forks[0].read_text()


def test_a_lone_surrogate_or_a_deep_line_loses_nothing(tmp_path: Path) -> None:
    """A line holding an escaped lone surrogate (JavaScript writes one when it cuts a string inside
    an emoji) was a malformed line to the importer, and everything before it fell off the active
    path (a 5-message transcript came out as 2); a valid line nested 3,000 deep crashed it."""
    whole = [e.message for e in imported(CLAUDE, tmp_path).active_path() if e.type == "message"]
    lines = CLAUDE.read_bytes().split(b"\n")
    first_user = next(i for i, line in enumerate(lines) if b'"content":"tests/test_parser.py' in line)
    lines[first_user] = lines[first_user].replace(b'Can you take a look?"', b'Can you take a look? \\ud83d"')
    deep = b'{"type":"progress","data":' + b"[" * 3000 + b"]" * 3000 + b"}"
    lines.insert(first_user + 1, deep)
    cut = tmp_path / CLAUDE.name
    cut.write_bytes(b"\n".join(lines))
    out = tmp_path / "out"
    out.mkdir()
    messages = [e.message for e in imported(cut, out).active_path() if e.type == "message"]
    assert len(messages) == len(whole)
    assert text_of(messages[0] or {}).endswith("Can you take a look? \ufffd")
    assert [text_of(m or {}) for m in messages[1:]] == [text_of(m or {}) for m in whole[1:]]
