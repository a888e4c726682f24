"""Permission questions in ``agent-tui --mode rpc``: asked of the RPC client the way pi asks one.

pi's RPC mode puts a question to its client as an ``extension_ui_request`` (pi's
``docs/rpc-extension-ui.md``): here a ``select`` whose ``options`` are ``"Allow once"``,
``"Always allow RULE"`` when a rule can say the call (the app's "don't ask again": the rule is
kept in ``.claude/settings.local.json``), ``"Allow for this session"`` (both left out for a file
that decides what agent-tui runs, which is asked every time) and ``"Deny"``, with its ``timeout``
in milliseconds. The client answers with
``{"type": "extension_ui_response", "id", "value"}`` (or ``"cancelled": true``), which gets no
response of its own, as in pi. agent-tui adds to pi's fields: ``message`` (the whole call,
redacted: ``summary`` in the title is one cut line), ``toolName`` and ``toolCallId``.

A cancelled question, an answer that is none of the options, or no answer within the timeout
(``AGENT_TUI_RPC_ASK_TIMEOUT`` seconds, default :data:`DEFAULT_TIMEOUT`) is a refusal, recorded
as ``deny``; the turn goes on with the refusal as the call's result. An abort withdraws the
question (a late answer is ignored).
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Callable

from agent_tui.agent.permissions import Decision, PermissionRequest
from agent_tui.store.record import JSONObject

#: Seconds the client has to answer a permission question when AGENT_TUI_RPC_ASK_TIMEOUT says nothing.
DEFAULT_TIMEOUT = 120.0
TIMEOUT_ENV = "AGENT_TUI_RPC_ASK_TIMEOUT"

ALLOW_ONCE = "Allow once"
ALLOW_SESSION = "Allow for this session"
DENY = "Deny"
_DECISIONS = {ALLOW_ONCE: Decision.ALLOW_ONCE, ALLOW_SESSION: Decision.ALLOW_SESSION, DENY: Decision.DENY}


def always_option(request: PermissionRequest) -> str | None:
    """``"Always allow RULE"`` for a call a rule can say (``request.rule``; None: no such choice,
    as in the app)."""
    return f"Always allow {request.rule}" if request.rule else None


class NoAnswer(Exception):
    """The client did not answer in time: the approver's failure, which the policy records as ``deny``."""


def ask_timeout(env: dict[str, str] | None = None) -> float:
    """AGENT_TUI_RPC_ASK_TIMEOUT (seconds, > 0), else :data:`DEFAULT_TIMEOUT`."""
    raw = (os.environ if env is None else env).get(TIMEOUT_ENV, "").strip()
    try:
        value = float(raw)
    except ValueError:
        return DEFAULT_TIMEOUT
    return value if value > 0 else DEFAULT_TIMEOUT


class ClientQuestions:
    """The questions put to the RPC client and not answered yet; :meth:`approve` is the agent's
    :data:`~agent_tui.agent.permissions.Approver`, :meth:`answer` takes the client's response."""

    def __init__(self, write: Callable[[JSONObject], None], timeout: float | None = None) -> None:
        self._write = write
        self.timeout = ask_timeout() if timeout is None else timeout
        self._pending: dict[str, asyncio.Future[JSONObject]] = {}

    @property
    def pending(self) -> int:
        return len(self._pending)

    async def approve(self, request: PermissionRequest) -> Decision:
        always = always_option(request)
        session = [ALLOW_SESSION] if request.config_file is None else []
        options = [ALLOW_ONCE, *([always] if always else []), *session, DENY]
        question_id = str(uuid.uuid4())
        answered: asyncio.Future[JSONObject] = asyncio.get_running_loop().create_future()
        self._pending[question_id] = answered
        self._write(
            {
                "type": "extension_ui_request",
                "id": question_id,
                "method": "select",
                "title": f"Allow {request.prompt()}?",
                "options": options,
                "timeout": round(self.timeout * 1000),
                "message": request.details(),
                "toolName": request.tool,
                "toolCallId": request.call_id,
            }
        )
        try:
            response = await asyncio.wait_for(answered, self.timeout)
        except TimeoutError:
            raise NoAnswer(f"the RPC client did not answer within {self.timeout:g} s") from None
        finally:
            self._pending.pop(question_id, None)
        if response.get("cancelled") is True:
            return Decision.DENY
        value = response.get("value")
        if always is not None and value == always:
            return Decision.ALLOW_ALWAYS
        decision = _DECISIONS.get(value) if isinstance(value, str) and value in options else None
        return decision or Decision.DENY

    def answer(self, response: JSONObject) -> None:
        """An ``extension_ui_response``: the question with its ``id`` gets it (one no longer asked,
        or never asked, is ignored, as pi ignores it)."""
        question_id = response.get("id")
        answered = self._pending.pop(question_id, None) if isinstance(question_id, str) else None
        if answered is not None and not answered.done():
            answered.set_result(response)


__all__ = ["DEFAULT_TIMEOUT", "TIMEOUT_ENV", "ClientQuestions", "NoAnswer", "always_option", "ask_timeout"]
