"""The app's permission mode: Shift+Tab cycles it, the status line names it, plan mode's approval.

The mode lives in the session core (``AgentSession.set_permission_mode``: the entry, the model's
plan-mode note); the app only keeps the user's choice (``ModelChoice.switched_mode``) so that an
agent not built yet, or a session switched to, starts in it. When a turn ends normally in plan
mode with a reply, the app asks whether to approve the plan and in which mode the work goes on
(``permission_modes.CONTINUE_MODES``); approving switches to it and sends
``permission_modes.plan_approved_text`` as the next message. Escape keeps planning.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_tui.agent.permission_modes import (
    CONTINUE_MODES,
    DESCRIPTIONS,
    LABELS,
    next_mode,
    plan_approved_text,
)
from agent_tui.agent.permissions import PermissionMode, PermissionModeError, parse_mode

if TYPE_CHECKING:
    from agent_tui.agent.agent_session import AgentSession
    from agent_tui.tui.host import Host

PLAN_QUESTION = "Approve the plan above and start the work? Go on in:"
KEEP_PLANNING = "keep"


class PermissionModes:
    """The app's side of the permission modes (``app``: the ``AgentTuiApp``)."""

    def __init__(self, app: Host) -> None:
        self.app = app
        self._default: PermissionMode | None = None  # the config's (read once)

    def _agent(self) -> AgentSession | None:
        """The session core when it is built (None: not yet, or a test's scripted turns)."""
        from agent_tui.tui.agent_bridge import session_core

        return session_core(self.app.turns)

    @property
    def mode(self) -> PermissionMode:
        """The mode the next tool call is judged in."""
        agent = self._agent()
        if agent is not None:
            mode = agent.permission_mode
            if isinstance(mode, PermissionMode):
                return mode
        choice = self.app.config.model
        for value in (choice.switched_mode, choice.permissions):
            try:
                parsed = parse_mode(value)
            except PermissionModeError:
                parsed = None
            if parsed is not None:
                return parsed
        return self._configured()

    def _configured(self) -> PermissionMode:
        """``AGENT_TUI_PERMISSIONS`` or the config file's ``permissions`` (read once), else ask."""
        if self._default is None:
            from agent_tui.agent.permissions import mode_from_config
            from agent_tui.tui.agent_bridge import AgentUnavailable, load_agent_config

            try:
                config = load_agent_config(self.app.config.model)
                self._default = mode_from_config(None, config, default=PermissionMode.ASK)
            except (AgentUnavailable, PermissionModeError):
                self._default = PermissionMode.ASK
        return self._default

    @property
    def label(self) -> str:
        """How the status line names the mode: nothing for ask (the default, as Claude Code)."""
        mode = self.mode
        return "" if mode is PermissionMode.ASK else LABELS[mode]

    def set(self, mode: PermissionMode) -> None:
        """Switch to ``mode``: in the core when the agent is built (recorded at once, or when the
        running turn ends), and for every agent built after."""
        self.app.config.model.switched_mode = mode.value
        agent = self._agent()
        if agent is not None:
            agent.set_permission_mode(mode, record_later=self.app.busy)
        self.app.update_status()
        self.app.notify(f"permission mode: {mode.value} ({DESCRIPTIONS[mode]})")

    def cycle(self) -> PermissionMode:
        mode = next_mode(self.mode)
        self.set(mode)
        return mode

    async def turn_ended(self, stop_reason: str | None) -> None:
        """In plan mode, after a reply that ended normally: the plan's approval."""
        if stop_reason != "stop" or self.mode is not PermissionMode.PLAN or not self._replied():
            return
        from agent_tui.tui.screens.choice import ChoiceScreen
        from agent_tui.tui.screens.dialog import ask

        composer = self.app.composer
        options = [(mode.value, f"Yes, in {mode.value}: {DESCRIPTIONS[mode]}") for mode in CONTINUE_MODES]
        options.append((KEEP_PLANNING, "No, keep planning (Esc)"))
        screen = ChoiceScreen(
            PLAN_QUESTION,
            options,
            KEEP_PLANNING,
            guarded=True,
            typed_at=composer.typed_at,
            on_text=composer.insert,
            deliberate={PermissionMode.AUTO.value},
        )
        value = await ask(self.app, screen)
        if value is None or value == KEEP_PLANNING:
            return
        mode = PermissionMode(value)
        self.set(mode)
        await self.app.send(plan_approved_text(mode))

    def _replied(self) -> bool:
        """Whether the last message is the model's reply with some text (a plan to approve)."""
        messages = self.app.projection.messages
        if not messages or messages[-1].role != "assistant":
            return False
        content = (messages[-1].message or {}).get("content") or []
        return any(
            isinstance(b, dict) and b.get("type") == "text" and str(b.get("text", "")).strip()
            for b in content
        )


__all__ = ["KEEP_PLANNING", "PLAN_QUESTION", "PermissionModes"]
