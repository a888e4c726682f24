"""The tool calls of one assistant message: prepare, permit, execute, finalize (pi's executeToolCalls).

Each call in order is *prepared* (its tool looked up, its arguments validated; a truncated
message, an abort, an unknown tool or bad arguments give the call its error result at once),
*permitted* (the ``PreToolUse`` hooks, then the permission policy with the hooks' vote; a refusal
is the call's error result) and *executed* (a task: the started calls run concurrently). Then each
result is *finalized* in call order once it is in: the ``PostToolUse`` hooks of a call that ran,
its ``toolResult`` entry appended, ``ToolFinished``. An abort gives every call still running
:attr:`ToolSetup.grace` seconds to stop by itself, then cancels it; no call is left without a result,
but one a ``PreToolUse`` hook deferred (:mod:`agent_tui.agent.deferred_calls`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from agent_tui.agent import deferred_calls, loop_hooks, sandbox_proxy
from agent_tui.agent.events import ToolFinished, ToolStarted, ToolUpdate
from agent_tui.agent.extensions import Extensions
from agent_tui.agent.permissions import HookVote, Permissions
from agent_tui.agent.tools.base import (
    Tool,
    ToolContext,
    ToolError,
    ToolResult,
    WriteGuard,
    validate_arguments,
)
from agent_tui.agent.turn_io import Aborted, TurnIO
from agent_tui.store.clock import now_ms
from agent_tui.store.record import JSONObject

ABORTED_TEXT = "Operation aborted"
TRUNCATED_CALL_TEXT = (
    'Tool call "{name}" was not executed: the response hit the output token limit, so its arguments may be '
    "truncated. Re-issue the tool call with complete arguments."
)


@dataclass(frozen=True, slots=True)
class ToolSetup:
    """What one message's tool calls run with (the loop's, as it is when the message ends)."""

    tools: Sequence[Tool]  # the tools the model may call (built-in, then the MCP servers')
    cwd: str  # where tools run, and what "inside" means for writes
    permissions: Permissions | None = None  # None: every tool runs, nothing recorded
    extensions: Extensions | None = None  # the hooks (None: no hooks)
    updates: bool = False  # emit ToolUpdate events (a running tool's partial output)
    grace: float = 2.0  # seconds a running tool gets to stop by itself after an abort
    defer: bool = False  # a deferred call is handed back (print mode); else the deferral is ignored


@dataclass(frozen=True, slots=True)
class PreparedCall:
    """A tool call ready to run: its tool, its validated arguments and (once permitted) the guard
    write/edit check the opened file with."""

    tool: Tool
    args: JSONObject
    call_id: str
    guard: WriteGuard | None = None
    context: tuple[str, ...] = ()  # what PreToolUse hooks add to the result the model reads


class Deferred:
    """A call a PreToolUse hook deferred, handed back (:attr:`ToolSetup.defer`, a lone call)."""


DEFERRED = Deferred()


async def run_tool_calls(
    calls: list[JSONObject], stop_reason: str, setup: ToolSetup, io: TurnIO
) -> JSONObject | None:
    """Run the message's ``calls`` (its stop reason ``stop_reason``): one result entry each, in order.
    Returns the call a PreToolUse hook deferred (nothing run, its marker entry appended), else None."""
    by_name = {t.name: t for t in setup.tools}
    started: list[tuple[JSONObject, asyncio.Task[ToolResult] | ToolResult]] = []
    try:
        for call in calls:
            item = await _start(call, stop_reason, by_name, setup, io, alone=len(calls) == 1)
            if isinstance(item, Deferred):
                await io.append(deferred_calls.marker(call))
                loop_hooks.say([deferred_calls.handed_back(call)], io.emit)
                return call
            started.append((call, item))
        for call, item in started:
            result = item if isinstance(item, ToolResult) else await wait_result(item, io, setup.grace)
            await finalize_call(call, result, not isinstance(item, ToolResult), setup, io)
        if setup.extensions is not None:
            loop_hooks.say(setup.extensions.take_notices(), io.emit)
        return None
    finally:  # the calls still running must not outlive the turn
        for _, item in started:
            if isinstance(item, asyncio.Task) and not item.done():
                item.cancel()


async def _start(
    call: JSONObject, stop_reason: str, by_name: dict[str, Tool], setup: ToolSetup, io: TurnIO, *, alone: bool
) -> asyncio.Task[ToolResult] | ToolResult | Deferred:
    """The call prepared and permitted, then started; or its immediate (error) result; or deferred.
    ``ToolStarted`` comes once the ``PreToolUse`` hooks have had their say (before the permission
    question), with the arguments the call runs with."""
    raw = call.get("arguments") if isinstance(call.get("arguments"), dict) else {}

    def started(args: JSONObject | None) -> None:
        io.emit(
            ToolStarted(str(call.get("id")), str(call.get("name")), dict(raw or {}) if args is None else args)
        )

    prepared = prepare_call(call, stop_reason, by_name, io.aborted)
    if isinstance(prepared, ToolResult):
        started(None)
        return prepared
    permitted = await permit(prepared, setup, io, alone=alone, started=started)
    if isinstance(permitted, (ToolResult, Deferred)):
        return permitted
    return asyncio.create_task(execute(permitted, setup, io))


def prepare_call(
    call: JSONObject, stop_reason: str, by_name: dict[str, Tool], aborted: bool
) -> PreparedCall | ToolResult:
    """pi's prepareToolCall: look the tool up and validate its arguments, or the immediate
    (error) result when the call must not run (truncated message, abort, unknown tool, bad args)."""
    if stop_reason == "length":
        return ToolResult.text(TRUNCATED_CALL_TEXT.format(name=call.get("name")), is_error=True)
    if aborted:
        return ToolResult.text(ABORTED_TEXT, is_error=True)
    tool = by_name.get(str(call.get("name")))
    if tool is None:
        return ToolResult.text(f"Tool {call.get('name')} not found", is_error=True)
    args = call.get("arguments") if isinstance(call.get("arguments"), dict) else {}
    try:
        prepared = validate_arguments(tool, tool.prepare_arguments(dict(args or {})))
    except ToolError as e:
        return ToolResult.text(str(e), is_error=True)
    return PreparedCall(tool, prepared, str(call.get("id")))


async def permit(
    prepared: PreparedCall,
    setup: ToolSetup,
    io: TurnIO,
    *,
    alone: bool = True,
    started: Callable[[JSONObject | None], None] = lambda args: None,
) -> PreparedCall | ToolResult | Deferred:
    """The ``PreToolUse`` hooks (a refusal, new arguments, a vote, a deferral), then the permission
    policy with that vote, its decision recorded: the call with the guard it runs with, or its
    refusal. A deferral is handed back when the face can (:attr:`ToolSetup.defer`) and the call
    is ``alone`` in its message; otherwise it is ignored with a warning, as Claude Code does.
    ``started`` is told, once the hooks are done and before the policy asks, the arguments a hook
    replaced (None: the model's stand)."""
    vote: HookVote | None = None
    if setup.extensions is not None:
        gate = await loop_hooks.pre_tool(
            setup.extensions, prepared.tool, prepared.args, prepared.call_id, io.emit
        )
        if gate.refusal is not None:
            started(None)
            return gate.refusal
        if gate.deferred:
            started(None)
            if setup.defer and alone:
                return DEFERRED
            loop_hooks.say([deferred_calls.ignored(prepared.tool.name, interactive=not setup.defer)], io.emit)
        else:
            started(dict(gate.args) if gate.args != prepared.args else None)
        prepared, vote = replace(prepared, args=gate.args, context=gate.context), gate.vote
    else:
        started(None)
    refusal, guard = await _check(prepared, vote, setup, io)
    if refusal is not None:
        return loop_hooks.with_context(ToolResult.text(refusal, is_error=True), prepared.context)
    return replace(prepared, guard=guard)


async def _check(
    prepared: PreparedCall, vote: HookVote | None, setup: ToolSetup, io: TurnIO
) -> tuple[str | None, WriteGuard | None]:
    """Ask the permission policy about one call (with the PreToolUse hooks' ``vote``); record its
    decision. (None: run it, else the refusal; the guard write/edit check the opened file with)."""
    permissions = setup.permissions
    if (
        permissions is not None
        and not prepared.tool.needs_permission
        and (vote is None or vote.decision != "ask")
    ):
        return None, None  # the tool gates itself (a subagent's calls are asked one by one)
    if permissions is None:
        if vote is not None and vote.decision == "ask":  # no one to ask: the hook's ask refuses
            return (
                "Permission denied: a PreToolUse hook asked for the user's confirmation and no one can answer here.",
                None,
            )
        return None, None
    try:
        verdict = await io.abortable(
            permissions.check(
                prepared.tool.name, prepared.args, setup.cwd, prepared.call_id, vote, info=prepared.tool
            )
        )
    except Aborted:
        return ABORTED_TEXT, None
    record = verdict.entry(permissions.mode)
    if record is not None:
        await io.append(record)
    if verdict.notice is not None:  # auto mode: a file that decides what agent-tui runs
        loop_hooks.say([verdict.notice], io.emit)
    if not verdict.allowed:
        return verdict.message or "Permission denied", None
    approved = verdict.request.path if verdict.request is not None else None
    return None, permissions.write_guard(setup.cwd, approved)


async def execute(prepared: PreparedCall, setup: ToolSetup, io: TurnIO) -> ToolResult:
    """Run the permitted call: a tool's failure is the model's to read, not the loop's."""
    ctx = ToolContext(
        setup.cwd, io.abort, prepared.call_id, prepared.guard, _updater(prepared, setup, io), io.emit
    )
    if setup.permissions is not None:
        # where bash's commands run (agent.sandbox), with the network its rules allow
        ctx.sandbox = sandbox_proxy.for_commands(setup.permissions)
    try:
        result = await prepared.tool.execute(prepared.args, ctx)
    except ToolError as e:
        result = ToolResult.text(str(e), is_error=True)
    except asyncio.CancelledError:
        raise
    except Exception as e:
        result = ToolResult.text(f"{type(e).__name__}: {e}" if str(e) else type(e).__name__, is_error=True)
    return loop_hooks.with_context(result, prepared.context)


def _updater(prepared: PreparedCall, setup: ToolSetup, io: TurnIO) -> Callable[[JSONObject], None] | None:
    """The call's ``on_update``, when partial results are asked for (:attr:`ToolSetup.updates`)."""
    if not setup.updates:
        return None
    call_id, name, emit = prepared.call_id, prepared.tool.name, io.emit

    def update(partial: JSONObject) -> None:
        emit(ToolUpdate(call_id, name, dict(partial)))

    return update


async def wait_result(task: asyncio.Task[ToolResult], io: TurnIO, grace: float) -> ToolResult:
    """The running call's result; after an abort, ``grace`` seconds for it to stop by itself (bash
    kills its group), then it is cancelled and its result is the abort's."""
    if not io.aborted:
        stop = asyncio.ensure_future(io.abort.wait())
        try:
            await asyncio.wait({task, stop}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop.cancel()
    if not task.done():
        await asyncio.wait({task}, timeout=grace)
    if not task.done():
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return ToolResult.text(ABORTED_TEXT, is_error=True)
    if task.cancelled():
        return ToolResult.text(ABORTED_TEXT, is_error=True)
    return task.result()


async def finalize_call(
    call: JSONObject, result: ToolResult, executed: bool, setup: ToolSetup, io: TurnIO
) -> None:
    """pi's finalize + emitToolResultMessage: the ``PostToolUse`` hooks of a call that ran, then the
    call's tool result entry appended, then announced."""
    if executed and setup.extensions is not None:
        result = await loop_hooks.post_tool(setup.extensions, call, result, io.emit)
    message: JSONObject = {
        "role": "toolResult",
        "toolCallId": call.get("id"),
        "toolName": call.get("name"),
        "content": result.content,
    }
    if result.details is not None:
        message["details"] = result.details
    message["isError"] = result.is_error
    message["timestamp"] = now_ms()
    entry = await io.append_message(message)
    io.emit(ToolFinished(str(call.get("id")), str(call.get("name")), entry.id, result.is_error))


__all__ = [
    "ABORTED_TEXT",
    "DEFERRED",
    "TRUNCATED_CALL_TEXT",
    "Deferred",
    "PreparedCall",
    "ToolSetup",
    "execute",
    "finalize_call",
    "permit",
    "prepare_call",
    "run_tool_calls",
    "wait_result",
]
