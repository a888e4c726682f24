"""``agent-tui acp`` driven over real stdio by the ``agent-client-protocol`` package's own client
classes, against the fake model server: prompts, tool calls with a permission request, cancel,
loading a session, the editor's file methods and the slash commands."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block
from acp.schema import (
    AvailableCommandsUpdate,
    ConfigOptionUpdate,
    ContentToolCallContent,
    FileEditToolCallContent,
    SessionInfoUpdate,
    ToolCallStart,
    UserMessageChunk,
)

from tests.support.acp_editor import AcpEnv, EditorClient
from tests.support.fake_model_server import (
    FakeModelServer,
    anthropic_error,
    anthropic_stream,
    text,
    thinking,
    tool_use,
)
from tests.support.print_env import KEY

# A subprocess per test: slow for make test-fast, and slower still on a loaded machine.
pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]


@pytest.fixture
def env(tmp_path: Path, server: FakeModelServer) -> AcpEnv:
    return AcpEnv(tmp_path, server)


def permission_records(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        e["data"] for e in entries if e["type"] == "custom" and e.get("customType") == "agent-tui.permission"
    ]


async def test_a_prompt_streams_thinking_text_and_a_tool_call_the_editor_approved(
    env: AcpEnv, server: FakeModelServer
) -> None:
    server.push(
        anthropic_stream(
            thinking("Let me look at the folder."),
            text("I will run a command. "),
            tool_use("toolu_1", "bash", {"command": "echo acp-says-hello"}),
        ),
        anthropic_stream(text("The command printed acp-says-hello.")),
    )
    client = EditorClient(answers=["allow-once"])
    async with env.agent(client) as conn:
        session = await conn.new_session(cwd=str(env.work), mcp_servers=[])
        response = await conn.prompt(session_id=session.session_id, prompt=[text_block("run it")])
        assert response.stop_reason == "end_turn"
        await client.wait_for(lambda: bool(client.of(AvailableCommandsUpdate)), "the slash commands")

    assert client.thought_text() == "Let me look at the folder."
    assert client.message_text() == "I will run a command. The command printed acp-says-hello."
    (command_update,) = client.of(AvailableCommandsUpdate)
    assert [c.name for c in command_update.available_commands] == [
        "compact",
        "rename",
        "session",
        "model",
        "thinking",
        "agents",
        "permissions",
        "restore",
    ]

    # The call: announced while it streams, running with its arguments, completed with its output.
    calls = client.tool_updates("toolu_1")
    assert isinstance(calls[0], ToolCallStart) and calls[0].status == "pending" and calls[0].kind == "execute"
    statuses = [u.status for u in calls]
    assert statuses[-1] == "completed" and "in_progress" in statuses
    running = next(u for u in calls if u.status == "in_progress")
    assert running.title == "bash echo acp-says-hello" and running.raw_input == {
        "command": "echo acp-says-hello"
    }
    finished = calls[-1]
    assert finished.content is not None
    outputs = [c.content.text for c in finished.content if isinstance(c, ContentToolCallContent)]
    assert any("acp-says-hello" in t for t in outputs if isinstance(t, str))

    # The editor was asked (bash is gated in ask mode), about that call, with our three answers.
    ((asked, options),) = client.permission_requests
    assert asked.tool_call_id == "toolu_1" and "echo acp-says-hello" in (asked.title or "")
    assert [o.option_id for o in options] == ["allow-once", "allow-always", "allow-session", "deny"]
    assert [o.kind for o in options] == ["allow_once", "allow_always", "allow_always", "reject_once"]
    assert options[1].name == "Always allow Bash(echo:*)"

    # The answer is recorded in the session as the app records it; the file is the ACP session.
    (path,) = env.sessions()
    assert session.session_id in path.name
    entries = env.entries(path)
    (record,) = permission_records(entries)
    assert (
        record["decision"] == "allow-once" and record["toolCallId"] == "toolu_1" and record["tool"] == "bash"
    )
    results = [
        e["message"] for e in entries if e["type"] == "message" and e["message"]["role"] == "toolResult"
    ]
    assert "acp-says-hello" in results[0]["content"][0]["text"] and not results[0]["isError"]
    # The second request carried the tool result: one loop, one writer.
    assert server.requests[1].body["messages"][-1]["content"][0]["type"] == "tool_result"


async def test_always_allow_keeps_the_rule_shown_and_the_next_call_is_not_asked(
    env: AcpEnv, server: FakeModelServer
) -> None:
    server.push(
        anthropic_stream(tool_use("toolu_k", "bash", {"command": "echo kept"})),
        anthropic_stream(tool_use("toolu_n", "bash", {"command": "echo again"})),
        anthropic_stream(text("Both ran.")),
    )
    client = EditorClient(answers=["allow-always"])
    async with env.agent(client) as conn:
        session = await conn.new_session(cwd=str(env.work), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("run them")])
    ((asked, options),) = client.permission_requests  # the second echo: allowed by the kept rule
    assert asked.tool_call_id == "toolu_k" and options[1].name == "Always allow Bash(echo:*)"
    local = json.loads((env.work / ".claude" / "settings.local.json").read_text())
    assert local["permissions"]["allow"] == ["Bash(echo:*)"]
    records = permission_records(env.entries(env.sessions()[0]))
    assert [(r["toolCallId"], r["decision"]) for r in records] == [
        ("toolu_k", "allow-always"),
        ("toolu_n", "rule-allow"),
    ]


async def test_a_denied_call_fails_and_the_denial_is_recorded(env: AcpEnv, server: FakeModelServer) -> None:
    marker = env.work / "should-not-exist"
    server.push(
        anthropic_stream(tool_use("toolu_9", "bash", {"command": f"touch {marker}"})),
        anthropic_stream(text("Understood, I will not.")),
    )
    client = EditorClient(answers=["deny"])
    async with env.agent(client) as conn:
        session = await conn.new_session(cwd=str(env.work), mcp_servers=[])
        response = await conn.prompt(session_id=session.session_id, prompt=[text_block("make a file")])
    assert response.stop_reason == "end_turn"
    assert not marker.exists()
    assert client.tool_updates("toolu_9")[-1].status == "failed"
    (record,) = permission_records(env.entries(env.sessions()[0]))
    assert record["decision"] == "deny"


async def test_cancel_stops_the_turn_and_keeps_the_partial_reply_marked_aborted(
    env: AcpEnv, server: FakeModelServer
) -> None:
    gate = threading.Event()
    # The reply streams a line at a time (held back until no secret can straddle the cut, as print
    # mode's is): the first line arrives, then the stream stalls.
    stream = anthropic_stream(text("a partial line\nthen more words that never arrive", chunks=8))
    stream.gate, stream.gate_at = gate, 7
    server.push(stream)
    client = EditorClient()
    try:
        async with env.agent(client) as conn:
            session = await conn.new_session(cwd=str(env.work), mcp_servers=[])
            turn = asyncio.create_task(
                conn.prompt(session_id=session.session_id, prompt=[text_block("say a lot")])
            )
            await client.wait_for(lambda: "partial" in client.message_text(), "the first words")
            await conn.cancel(session_id=session.session_id)
            response = await asyncio.wait_for(turn, 30)
            assert response.stop_reason == "cancelled"
    finally:
        gate.set()
    messages = [e["message"] for e in env.entries(env.sessions()[0]) if e["type"] == "message"]
    assert messages[-1]["role"] == "assistant" and messages[-1]["stopReason"] == "aborted"
    assert "partial" in messages[-1]["content"][0]["text"]


async def test_load_session_by_id_and_by_file_replays_it_and_continues(
    env: AcpEnv, server: FakeModelServer
) -> None:
    server.push(
        anthropic_stream(text("Reading it."), tool_use("toolu_r", "read", {"path": "notes.txt"})),
        anthropic_stream(text("The notes say: remember the milk.")),
    )
    (env.work / "notes.txt").write_text("remember the milk\n")
    first = EditorClient()
    async with env.agent(first) as conn:
        created = await conn.new_session(cwd=str(env.work), mcp_servers=[])
        await conn.prompt(session_id=created.session_id, prompt=[text_block("what do my notes say?")])
    assert not first.permission_requests  # reading inside the project is not gated

    server.push(anthropic_stream(text("You asked about your notes.")))
    second = EditorClient()
    async with env.agent(second) as conn:
        await conn.load_session(cwd=str(env.work), session_id=created.session_id, mcp_servers=[])
        users = [u.content.text for u in second.of(UserMessageChunk)]
        assert users == ["what do my notes say?"]
        assert second.message_text() == "Reading it.The notes say: remember the milk."
        replayed = second.tool_updates("toolu_r")
        assert replayed[0].kind == "read" and replayed[-1].status == "completed"
        response = await conn.prompt(session_id=created.session_id, prompt=[text_block("what did I ask?")])
        assert response.stop_reason == "end_turn"
    sent = server.requests[-1].body["messages"]
    assert sent[0]["content"][0]["text"] == "what do my notes say?" and len(sent) == 5

    (path,) = env.sessions()
    third = EditorClient()
    async with env.agent(third) as conn:
        await conn.load_session(cwd=str(env.work), session_id=str(path), mcp_servers=[])
        assert [u.content.text for u in third.of(UserMessageChunk)] == [
            "what do my notes say?",
            "what did I ask?",
        ]
        # the editor reopens the thread in the same process: the file is opened afresh, not refused as locked
        await conn.load_session(cwd=str(env.work), session_id=str(path), mcp_servers=[])
        assert len(third.of(UserMessageChunk)) == 4
        with pytest.raises(RequestError):
            await conn.load_session(cwd=str(env.work), session_id="no-such-session", mcp_servers=[])


async def test_read_and_write_go_through_the_editor_when_it_offers_fs(
    env: AcpEnv, server: FakeModelServer
) -> None:
    target = str(env.work / "draft.md")
    new = str(env.work / "new.md")
    server.push(
        anthropic_stream(tool_use("toolu_a", "read", {"path": "draft.md"})),
        anthropic_stream(
            tool_use(
                "toolu_b", "edit", {"path": "draft.md", "edits": [{"oldText": "unsaved", "newText": "saved"}]}
            )
        ),
        anthropic_stream(tool_use("toolu_c", "write", {"path": "new.md", "content": "# new\n"})),
        anthropic_stream(text("Done.")),
    )
    # ask mode asks about the edit and the write (inside the project too): the editor allows both
    client = EditorClient(answers=["allow-once", "allow-once"], buffers={target: "an unsaved buffer\n"})
    async with env.agent(client, fs=True) as conn:
        session = await conn.new_session(cwd=str(env.work), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("tidy up")])
    # Nothing touched the disk: the editor served the read and took the writes.
    assert not (env.work / "draft.md").exists() and not (env.work / "new.md").exists()
    assert client.writes == {target: "an saved buffer\n", new: "# new\n"}
    assert [call.title for call, _ in client.permission_requests] == ["edit draft.md", "write new.md"]
    read_result = client.tool_updates("toolu_a")[-1]
    assert read_result.status == "completed" and read_result.content is not None
    assert any(
        isinstance(c, ContentToolCallContent) and "an unsaved buffer" in getattr(c.content, "text", "")
        for c in read_result.content
    )
    edit_result = client.tool_updates("toolu_b")[-1]
    assert edit_result.content is not None
    (diff,) = [c for c in edit_result.content if isinstance(c, FileEditToolCallContent)]
    assert diff.path == target and diff.old_text == "unsaved" and diff.new_text == "saved"


async def test_slash_commands_name_and_describe_the_session(env: AcpEnv, server: FakeModelServer) -> None:
    client = EditorClient()
    async with env.agent(client) as conn:
        session = await conn.new_session(cwd=str(env.work), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("/rename release notes")])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("/session")])
    assert "Session named release notes" in client.message_text()
    assert session.session_id in client.message_text() and "File: " in client.message_text()
    assert not server.requests  # no model call for a command
    infos = [e for e in env.entries(env.sessions()[0]) if e["type"] == "session_info"]
    assert infos[-1]["name"] == "release notes"


async def test_prompt_templates_are_offered_and_expanded(env: AcpEnv, server: FakeModelServer) -> None:
    prompts = env.work / ".agent-tui" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "review.md").write_text(
        "---\ndescription: Review a file for bugs\nargument-hint: FILE\n---\nReview $1 for bugs, briefly.\n"
    )
    (prompts / "model.md").write_text("A template that would hide /model.\n")
    server.push(anthropic_stream(text("Looks fine.")))
    client = EditorClient()
    async with env.agent(client, args=("--trust-project",)) as conn:  # the folder's own templates load
        session = await conn.new_session(cwd=str(env.work), mcp_servers=[])
        await client.wait_for(lambda: bool(client.of(AvailableCommandsUpdate)), "the slash commands")
        await conn.prompt(session_id=session.session_id, prompt=[text_block("/review app.py")])
    (update,) = client.of(AvailableCommandsUpdate)
    review = next(c for c in update.available_commands if c.name == "review")
    assert review.description == "Review a file for bugs"
    assert review.input is not None and review.input.root.hint == "FILE"
    # The app's command names win over a template's, as in every face: no /model template.
    assert [c.name for c in update.available_commands].count("model") == 1
    assert server.requests[0].body["messages"][-1]["content"][0]["text"] == "Review app.py for bugs, briefly."


async def test_cancel_while_the_editor_asks_aborts_the_call_and_runs_nothing(
    env: AcpEnv, server: FakeModelServer
) -> None:
    marker = env.work / "ran"
    server.push(anthropic_stream(tool_use("toolu_w", "bash", {"command": f"touch {marker}"})))
    client = EditorClient(answers=["wait"])
    async with env.agent(client) as conn:
        session = await conn.new_session(cwd=str(env.work), mcp_servers=[])
        turn = asyncio.create_task(conn.prompt(session_id=session.session_id, prompt=[text_block("go")]))
        await client.wait_for(lambda: bool(client.permission_requests), "the permission question")
        await conn.cancel(session_id=session.session_id)
        client.released.set()  # the editor answers "cancelled" to the question it had open
        response = await asyncio.wait_for(turn, 30)
    assert response.stop_reason == "cancelled"
    assert not marker.exists()
    assert client.tool_updates("toolu_w")[-1].status == "failed"
    messages = [e["message"] for e in env.entries(env.sessions()[0]) if e["type"] == "message"]
    (result,) = [m for m in messages if m["role"] == "toolResult"]
    # The editor's "cancelled" may reach the loop before or after the cancel: aborted, or refused.
    assert result["isError"]
    assert result["content"][0]["text"] == "Operation aborted" or result["content"][0]["text"].startswith(
        "Permission denied"
    )


async def test_stdin_closed_mid_turn_ends_the_process_with_the_partial_reply_written(
    env: AcpEnv, server: FakeModelServer
) -> None:
    gate = threading.Event()
    stream = anthropic_stream(text("the first line\nthen the rest, which never comes", chunks=8))
    stream.gate, stream.gate_at = gate, 6
    server.push(stream)
    client = EditorClient()
    try:
        async with env.agent(client) as conn:  # leaving it closes stdin and expects exit status 0
            session = await conn.new_session(cwd=str(env.work), mcp_servers=[])
            turn = asyncio.create_task(
                conn.prompt(session_id=session.session_id, prompt=[text_block("talk")])
            )
            await client.wait_for(lambda: "the first line" in client.message_text(), "the first line")
    finally:
        gate.set()
    with pytest.raises(ConnectionError):  # the agent is gone: the prompt has no answer
        await turn
    messages = [e["message"] for e in env.entries(env.sessions()[0]) if e["type"] == "message"]
    assert messages[-1]["role"] == "assistant" and messages[-1]["stopReason"] == "aborted"
    assert messages[-1]["content"][0]["text"].startswith("the first line")


async def test_secrets_in_the_reply_and_the_tool_call_never_reach_the_editor(
    env: AcpEnv, server: FakeModelServer
) -> None:
    secret = "ghp_" + "Z" * 36
    server.push(
        anthropic_stream(
            text(f"Your token is {secret} as you asked.\n"),
            tool_use("toolu_s", "bash", {"command": f"echo {secret}"}),
        ),
        anthropic_stream(text("Done.")),
    )
    client = EditorClient(answers=["allow-once"])
    async with env.agent(client) as conn:
        session = await conn.new_session(cwd=str(env.work), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("show my token")])
    assert "Your token is [REDACTED" in client.message_text()
    seen = repr(client.updates) + repr(client.permission_requests)
    assert secret not in seen and KEY not in seen


async def test_without_a_key_a_new_session_says_what_to_set(env: AcpEnv) -> None:
    del env.env["ANTHROPIC_API_KEY"]
    client = EditorClient()
    async with env.agent(client) as conn:
        with pytest.raises(RequestError) as failure:
            await conn.new_session(cwd=str(env.work), mcp_servers=[])
    assert "ANTHROPIC_API_KEY" in json.dumps(failure.value.data)


async def test_modes_switch_the_permission_policy_and_list_shows_the_sessions(
    env: AcpEnv, server: FakeModelServer
) -> None:
    marker = env.work / "made"
    server.push(
        anthropic_stream(tool_use("toolu_m", "bash", {"command": f"touch {marker}"})),
        anthropic_stream(text("I could not.")),
    )
    client = EditorClient()
    async with env.agent(client) as conn:
        session = await conn.new_session(cwd=str(env.work), mcp_servers=[])
        assert session.modes is not None and session.modes.current_mode_id == "ask"
        assert [m.id for m in session.modes.available_modes] == [
            "ask",
            "accept-edits",
            "plan",
            "auto",
            "read-only",
        ]
        await conn.set_session_mode(session_id=session.session_id, mode_id="read-only")
        await conn.prompt(session_id=session.session_id, prompt=[text_block("make a file please")])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("/rename file attempt")])
        listed = await conn.list_sessions(cwd=str(env.work))
        with pytest.raises(RequestError):
            await conn.set_session_mode(session_id=session.session_id, mode_id="yolo")
    assert not client.permission_requests and not marker.exists()  # refused without asking
    (record,) = permission_records(env.entries(env.sessions()[0]))
    assert record["decision"] == "read-only-refused"
    assert [i.title for i in client.of(SessionInfoUpdate)] == ["file attempt"]
    (info,) = listed.sessions
    assert info.session_id == session.session_id and info.title == "file attempt"
    assert info.cwd == str(env.work.resolve())


async def test_model_and_system_prompt_flags_apply_as_in_print_mode(
    env: AcpEnv, server: FakeModelServer
) -> None:
    server.push(anthropic_stream(text("Hi.")))
    client = EditorClient()
    flags = ("--model", "anthropic/claude-opus-4-5:high", "--append-system-prompt", "Answer in haiku.")
    async with env.agent(client, args=flags) as conn:
        session = await conn.new_session(cwd=str(env.work), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("hello")])
    body = server.requests[0].body
    assert body["model"] == "claude-opus-4-5"
    assert "thinking" in body  # ":high" set the thinking level
    assert "Answer in haiku." in json.dumps(body["system"])


async def test_a_rejected_key_fails_the_prompt_with_the_reason_and_the_retry_is_a_thought(
    env: AcpEnv, server: FakeModelServer
) -> None:
    server.push(
        anthropic_error(529, "overloaded_error", "Overloaded"),
        anthropic_error(401, "authentication_error", "invalid x-api-key"),
    )
    client = EditorClient()
    async with env.agent(client) as conn:
        session = await conn.new_session(cwd=str(env.work), mcp_servers=[])
        with pytest.raises(RequestError) as failure:
            await conn.prompt(session_id=session.session_id, prompt=[text_block("hello")])
        assert "retrying in" in client.thought_text() and "Overloaded" in client.thought_text()
        # the session stays usable: the next prompt runs
        server.push(anthropic_stream(text("Back again.")))
        response = await conn.prompt(session_id=session.session_id, prompt=[text_block("again")])
        assert response.stop_reason == "end_turn"
    assert "the API key was rejected" in json.dumps(failure.value.data)
    assert KEY not in json.dumps(failure.value.data)


async def test_a_permission_question_answered_with_an_error_is_a_refusal_and_the_turn_goes_on(
    env: AcpEnv, server: FakeModelServer
) -> None:
    marker = env.work / "should-not-exist"
    server.push(
        anthropic_stream(tool_use("toolu_e", "bash", {"command": f"touch {marker}"})),
        anthropic_stream(text("I could not run it.")),
    )
    client = EditorClient(answers=["error"])
    async with env.agent(client) as conn:
        session = await conn.new_session(cwd=str(env.work), mcp_servers=[])
        response = await conn.prompt(session_id=session.session_id, prompt=[text_block("make a file")])
    assert response.stop_reason == "end_turn"
    assert not marker.exists() and len(client.permission_requests) == 1
    # The editor was told the call was refused, and the reply after it arrived.
    finished = client.tool_updates("toolu_e")[-1]
    assert finished.status == "failed" and finished.content is not None
    (said,) = [c.content.text for c in finished.content if isinstance(c, ContentToolCallContent)]
    assert said.startswith("Permission denied") and "could not be put" in said
    assert client.message_text() == "I could not run it."
    # The session holds the refusal, as every refusal is recorded, and the call's error result.
    entries = env.entries(env.sessions()[0])
    (record,) = permission_records(entries)
    assert record["decision"] == "deny" and record["toolCallId"] == "toolu_e"
    (result,) = [
        e["message"] for e in entries if e["type"] == "message" and e["message"]["role"] == "toolResult"
    ]
    assert result["isError"] and result["toolCallId"] == "toolu_e"
    assert result["content"][0]["text"] == said
    assert server.requests[1].body["messages"][-1]["content"][0]["tool_use_id"] == "toolu_e"


def option(options: Any, option_id: str) -> Any:
    (found,) = [o for o in options if o.id == option_id]
    return found


async def test_the_model_and_thinking_level_are_chosen_with_the_sessions_config_options(
    env: AcpEnv, server: FakeModelServer
) -> None:
    server.push(anthropic_stream(text("From opus.")), anthropic_stream(text("From haiku.")))
    client = EditorClient()
    async with env.agent(client) as conn:
        session = await conn.new_session(cwd=str(env.work), mcp_servers=[])
        sid = session.session_id
        assert session.config_options is not None
        model = option(session.config_options, "model")
        assert model.category == "model" and model.current_value.startswith("anthropic/")
        assert "anthropic/claude-opus-4-5" in {o.value for o in model.options}
        assert option(session.config_options, "thinking").category == "thought_level"

        chosen = await conn.set_config_option(
            config_id="model", session_id=sid, value="anthropic/claude-opus-4-5"
        )
        assert option(chosen.config_options, "model").current_value == "anthropic/claude-opus-4-5"
        high = await conn.set_config_option(config_id="thinking", session_id=sid, value="high")
        thinking = option(high.config_options, "thinking")
        assert thinking.current_value == "high" and "high" in {o.value for o in thinking.options}
        await conn.prompt(session_id=sid, prompt=[text_block("hello")])

        # A model without reasoning: the level is clamped by the core, on the switch and when set.
        plain = await conn.set_config_option(
            config_id="model", session_id=sid, value="anthropic/claude-3-5-haiku-latest"
        )
        assert option(plain.config_options, "thinking").current_value == "off"
        clamped = await conn.set_config_option(config_id="thinking", session_id=sid, value="high")
        assert option(clamped.config_options, "thinking").current_value == "off"
        assert [o.value for o in option(clamped.config_options, "thinking").options] == ["off"]
        await conn.prompt(session_id=sid, prompt=[text_block("again")])
        for bad in (("model", "no-slash"), ("model", "nosuch/x"), ("thinking", "huge"), ("colour", "red")):
            with pytest.raises(RequestError):
                await conn.set_config_option(config_id=bad[0], session_id=sid, value=bad[1])

    first, second = (r.body for r in server.requests)
    assert first["model"] == "claude-opus-4-5" and first["thinking"]["type"] in ("enabled", "adaptive")
    assert second["model"] == "claude-3-5-haiku-latest" and "thinking" not in second
    changes = [e for e in env.entries(env.sessions()[0]) if e["type"] == "model_change"]
    assert [c["modelId"] for c in changes][-2:] == ["claude-opus-4-5", "claude-3-5-haiku-latest"]


async def test_model_and_thinking_commands_work_as_in_the_app(env: AcpEnv, server: FakeModelServer) -> None:
    server.push(anthropic_stream(text("From opus.")))
    client = EditorClient()
    async with env.agent(client) as conn:
        session = await conn.new_session(cwd=str(env.work), mcp_servers=[])
        sid = session.session_id
        await conn.prompt(session_id=sid, prompt=[text_block("/model anthropic/claude-opus-4-5")])
        await conn.prompt(session_id=sid, prompt=[text_block("/thinking high")])
        await conn.prompt(session_id=sid, prompt=[text_block("/session")])
        await conn.prompt(session_id=sid, prompt=[text_block("hello")])
    said = client.message_text()
    assert "Model: anthropic/claude-opus-4-5" in said and "Thinking: high" in said
    assert "Model: anthropic/claude-opus-4-5 (thinking high)" in said  # /session
    (request,) = server.requests  # the commands made no model call
    assert request.body["model"] == "claude-opus-4-5" and "thinking" in request.body
    # The editor's pickers followed the commands.
    updates = client.of(ConfigOptionUpdate)
    assert updates and option(updates[-1].config_options, "thinking").current_value == "high"


async def test_set_mode_plan_refuses_a_write_and_is_recorded(env: AcpEnv, server: FakeModelServer) -> None:
    target = env.work / "plan.txt"
    server.push(
        anthropic_stream(tool_use("toolu_p", "write", {"path": "plan.txt", "content": "x"})),
        anthropic_stream(text("Plan: write plan.txt.")),
    )
    client = EditorClient()
    async with env.agent(client) as conn:
        session = await conn.new_session(cwd=str(env.work), mcp_servers=[])
        await conn.set_session_mode(session_id=session.session_id, mode_id="plan")
        await conn.prompt(session_id=session.session_id, prompt=[text_block("add plan.txt")])
        await conn.set_session_mode(session_id=session.session_id, mode_id="accept-edits")
    assert not target.exists() and not client.permission_requests
    assert "Plan mode is on" in json.dumps(server.requests[0].body)
    assert "agent-tui is in plan mode" in json.dumps(server.requests[1].body)
    entries = env.entries(env.sessions()[0])
    (record,) = permission_records(entries)
    assert record["decision"] == "plan-refused"
    modes = [e["data"] for e in entries if e.get("customType") == "agent-tui.permission-mode"]
    assert modes == [{"mode": "plan", "previous": "ask"}, {"mode": "accept-edits", "previous": "plan"}]
