"""What the agent loop does with its hooks' answers, one function per event.

:mod:`agent_tui.agent.hooks` runs the commands and merges what they say; :mod:`agent_tui.agent.extensions`
gives each event Claude Code's fields. Here each answer becomes what the turn does: notices for the
user (one :class:`~agent_tui.agent.events.Notice` each), context for the model (the fields of one
``custom_message`` entry, which the loop appends), a call's refusal or new arguments and its
permission vote, a Stop hook's reason to go on, a PreCompact hook's reason to block a compaction.
Nothing here appends: the loop does, so every entry goes through its one ``TurnIO.append``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agent_tui.agent import sandbox_proxy
from agent_tui.agent.events import Emit, Notice
from agent_tui.agent.extensions import Extensions
from agent_tui.agent.hooks import HookOutcome
from agent_tui.agent.permissions import HookVote, Permissions
from agent_tui.agent.tools.base import Tool, ToolError, ToolResult, validate_arguments
from agent_tui.store.record import JSONObject
from agent_tui.store.session import Session

CUSTOM_TYPE = "agent-tui.hook"


def say(lines: Sequence[str], emit: Emit) -> None:
    for line in lines:
        emit(Notice(line))


def bind(ext: Extensions, session: Session, permissions: Permissions | None) -> None:
    """The fields every hook event carries (the session's id and file, the permission mode), and
    the tools ask mode trusts (the MCP servers' read-only ones, when so configured)."""
    if permissions is not None:
        permissions.trusted_tools = ext.auto_allowed()
        ext.hooks.set_permission_mode(permissions.mode.value)
        ext.hooks.sandbox = sandbox_proxy.for_commands(permissions)  # where the model's commands run
    ext.hooks.common.update(session_id=session.id, transcript_path=str(session.path))


def context_entry(texts: Sequence[str], event: str) -> JSONObject | None:
    """What hooks added for the model: the fields of one ``custom_message`` entry (a user message
    to the model), or None when they added nothing."""
    if not texts:
        return None
    return {
        "type": "custom_message",
        "customType": CUSTOM_TYPE,
        "content": "\n\n".join(texts),
        "display": True,
        "details": {"event": event},
    }


async def session_start(ext: Extensions, spoken: bool, emit: Emit) -> list[str]:
    """``SessionStart`` (``resume`` when the session has a conversation, else ``startup``), once per
    loop: the context its hooks add."""
    if not ext.hooks.has("SessionStart") or ext.session_started:
        return []
    outcome = await ext.session_start("resume" if spoken else "startup")
    say(outcome.notices, emit)
    return outcome.context


async def prompt_submit(
    ext: Extensions, content: Sequence[JSONObject], emit: Emit
) -> tuple[str | None, list[str]]:
    """``UserPromptSubmit``: (why the prompt must not be sent, or None; the context hooks add)."""
    if not ext.hooks.has("UserPromptSubmit"):
        return None, []
    text = "\n".join(str(b.get("text", "")) for b in content if b.get("type") == "text")
    outcome = await ext.user_prompt(text)
    say(outcome.notices, emit)
    if outcome.blocked:
        return outcome.reason, []
    return None, outcome.context


@dataclass(frozen=True, slots=True)
class ToolGate:
    """A tool call after its ``PreToolUse`` hooks: the arguments it runs with and the hooks' vote
    for the permission check, or the error result that replaces it; ``deferred`` when a hook
    deferred it (:mod:`agent_tui.agent.deferred_calls`: the arguments unchanged, no vote)."""

    args: JSONObject
    vote: HookVote | None = None
    refusal: ToolResult | None = None
    deferred: bool = False
    context: tuple[str, ...] = ()  # additionalContext: added to the result the model reads


def _vote(outcome: HookOutcome) -> HookVote | None:
    if outcome.decision == "ask":
        return HookVote("ask", outcome.decision_reason)
    if outcome.decision == "allow":  # hooks.py keeps only the allow of hooks the user trusts
        return HookVote("allow", outcome.decision_reason)
    return None


async def pre_tool(ext: Extensions, tool: Tool, args: JSONObject, call_id: str, emit: Emit) -> ToolGate:
    """``PreToolUse``: exit 2 (its stderr) and ``permissionDecision: "deny"`` (its reason) refuse the
    call, the reason going to the model; ``updatedInput`` replaces the arguments (validated again);
    ``ask`` / ``allow`` are the vote :meth:`Permissions.check` weighs; ``defer`` marks the call
    deferred (what comes of it is the tool pipeline's to say); ``additionalContext`` goes with the
    call's result (:func:`with_context`), but for a deferred call."""
    if not ext.hooks.has("PreToolUse"):
        return ToolGate(args)
    outcome = await ext.pre_tool(tool.name, args, call_id)
    say(outcome.notices, emit)
    context = tuple(outcome.context)
    if outcome.blocked:
        refusal = ToolResult.text(f"Blocked by a PreToolUse hook: {outcome.reason}", is_error=True)
        return ToolGate(args, refusal=with_context(refusal, context))
    if outcome.decision == "defer":
        return ToolGate(args, deferred=True)
    if outcome.updated_input is not None:
        try:
            args = validate_arguments(tool, outcome.updated_input)
        except ToolError as e:
            refusal = ToolResult.text(f"A PreToolUse hook changed the arguments: {e}", is_error=True)
            return ToolGate(args, refusal=with_context(refusal, context))
    return ToolGate(args, _vote(outcome), context=context)


def with_context(result: ToolResult, texts: Sequence[str]) -> ToolResult:
    """``result`` with what hooks add for the model after its content (one text block)."""
    if not texts:
        return result
    return ToolResult(
        [*result.content, {"type": "text", "text": "\n\n".join(texts)}], result.details, result.is_error
    )


async def post_tool(ext: Extensions, call: Mapping[str, Any], result: ToolResult, emit: Emit) -> ToolResult:
    """``PostToolUse``: what a hook says back (exit 2's stderr, a ``block`` reason, context) is added
    to the result the model reads."""
    if not ext.hooks.has("PostToolUse"):
        return result
    args = call.get("arguments") if isinstance(call.get("arguments"), dict) else {}
    outcome = await ext.post_tool(
        str(call.get("name")), args or {}, str(call.get("id")), result.content, result.is_error
    )
    say(outcome.notices, emit)
    extra = ([f"PostToolUse hook: {outcome.reason}"] if outcome.blocked else []) + outcome.context
    return with_context(result, extra)


async def stop(ext: Extensions, continued: int, emit: Emit) -> str | None:
    """``Stop``: the text the model reads when a hook blocks the stop (the turn goes on), else None."""
    if not ext.hooks.has("Stop"):
        return None
    outcome = await ext.stop(continued > 0)
    say(outcome.notices, emit)
    return f"Stop hook: {outcome.reason}" if outcome.blocked else None


async def pre_compact(ext: Extensions, trigger: str, focus: str | None, emit: Emit) -> str | None:
    """``PreCompact`` (``trigger`` ``manual`` or ``auto``): why a hook blocks the compaction (exit 2's
    stderr, ``decision: "block"``'s reason), or None. The hooks are read first if no turn has run
    yet (a ``/compact`` before the first prompt)."""
    await ext.load()
    if not ext.hooks.has("PreCompact"):
        say(ext.take_notices(), emit)
        return None
    outcome = await ext.pre_compact(trigger, focus)
    say(outcome.notices, emit)
    if not outcome.blocked:
        return None
    return outcome.reason or "a PreCompact hook blocked it"


async def compaction_blocked(
    ext: Extensions,
    session: Session,
    permissions: Permissions | None,
    trigger: str,
    focus: str | None,
    emit: Emit,
) -> str | None:
    """:func:`pre_compact` for a compaction of ``session``, whoever makes it (the loop, the face's
    reviewed one, a range's, the command line's): the hooks read (trust settled as the extensions
    settle it), the fields every event carries bound, then why they block it, or None."""
    await ext.load()
    bind(ext, session, permissions)
    return await pre_compact(ext, trigger, focus, emit)


__all__ = [
    "CUSTOM_TYPE",
    "ToolGate",
    "bind",
    "compaction_blocked",
    "context_entry",
    "post_tool",
    "pre_compact",
    "pre_tool",
    "prompt_submit",
    "say",
    "session_start",
    "stop",
    "with_context",
]
