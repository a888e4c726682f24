"""The permission modes as the user switches them: their order, their names, what is recorded.

The decisions of each mode are :class:`~agent_tui.agent.permissions.Permissions`'; this module has
what switching adds. Shift+Tab in the app goes ask -> accept-edits -> plan -> auto -> read-only
(:func:`next_mode`). Every change is one ``custom`` entry (pi's state entry, never in context):
``{"type":"custom","customType":"agent-tui.permission-mode","data":{"mode","previous"}}``, a record,
never a grant: a session file does not set the mode it is resumed in.

Plan mode is told to the model as Claude Code tells it, in its context: entering it appends a
``custom_message`` (``agent-tui.plan-mode``, a user message in context, shown in the chat) that
says what plan mode is; leaving it appends one that says it is over and which mode follows. When
the model has presented its plan, the face asks the user to approve it and pick the mode the
work goes on in (:data:`CONTINUE_MODES`); approving switches to it and sends
:func:`plan_approved_text` as the next user message.
"""

from __future__ import annotations

from agent_tui.agent.permissions import PermissionMode
from agent_tui.store.record import JSONObject

RECORD_TYPE = "agent-tui.permission-mode"
PLAN_NOTE_TYPE = "agent-tui.plan-mode"
#: The order Shift+Tab cycles through.
CYCLE: tuple[PermissionMode, ...] = tuple(PermissionMode)
#: The modes an approved plan may go on in.
CONTINUE_MODES = (PermissionMode.ACCEPT_EDITS, PermissionMode.ASK, PermissionMode.AUTO)
#: How the status line names each mode.
LABELS = {
    PermissionMode.ASK: "ask",
    PermissionMode.ACCEPT_EDITS: "accept edits",
    PermissionMode.PLAN: "plan",
    PermissionMode.AUTO: "auto",
    PermissionMode.READ_ONLY: "read-only",
}
#: One line each: what the mode lets run without asking.
DESCRIPTIONS = {
    PermissionMode.ASK: "ask before commands and file edits",
    PermissionMode.ACCEPT_EDITS: "file edits inside the project pass; commands ask",
    PermissionMode.PLAN: "nothing changes files or runs commands: the model plans",
    PermissionMode.AUTO: "run every tool without asking",
    PermissionMode.READ_ONLY: "refuse writes, edits and commands",
}

PLAN_ON = (
    "Plan mode is on. Do not change any file and do not run commands: the tools that write, edit "
    "or run programs are refused. Investigate with the tools that only read (read, ls, grep, find), "
    "then present a plan for the task: the steps, the files each one changes, how to check the "
    "result. End your reply with the plan and wait: the user approves it and chooses how the work "
    "goes on."
)


def next_mode(mode: PermissionMode) -> PermissionMode:
    """The mode after ``mode`` in :data:`CYCLE` (after read-only, ask again)."""
    return CYCLE[(CYCLE.index(mode) + 1) % len(CYCLE)]


def mode_entry(mode: PermissionMode, previous: PermissionMode) -> JSONObject:
    """The ``custom`` entry recording a change of mode."""
    return {
        "type": "custom",
        "customType": RECORD_TYPE,
        "data": {"mode": mode.value, "previous": previous.value},
    }


def plan_off_text(mode: PermissionMode) -> str:
    return (
        f"Plan mode is off: the permission mode is now {mode.value} ({DESCRIPTIONS[mode]}). "
        "Tools that change files or run commands may be used again as that mode allows."
    )


def plan_note(mode: PermissionMode, previous: PermissionMode) -> JSONObject | None:
    """The ``custom_message`` telling the model that plan mode began or ended (None: neither)."""
    if mode is PermissionMode.PLAN and previous is not PermissionMode.PLAN:
        text = PLAN_ON
    elif previous is PermissionMode.PLAN and mode is not PermissionMode.PLAN:
        text = plan_off_text(mode)
    else:
        return None
    return {
        "type": "custom_message",
        "customType": PLAN_NOTE_TYPE,
        "content": text,
        "display": True,
        "details": {"mode": mode.value, "previous": previous.value},
    }


def started_in_plan() -> JSONObject:
    """What the model is told when an agent starts in plan mode (``--permissions plan``)."""
    return {
        "type": "custom_message",
        "customType": PLAN_NOTE_TYPE,
        "content": PLAN_ON,
        "display": True,
        "details": {"mode": PermissionMode.PLAN.value},
    }


def plan_approved_text(mode: PermissionMode) -> str:
    """The user message that starts the work of an approved plan in ``mode``."""
    return (
        f"I approve the plan. Carry it out now, step by step (permission mode: {mode.value}, "
        f"{DESCRIPTIONS[mode]})."
    )


def is_mode(entry_type: str, custom_type: str | None) -> bool:
    """Whether an entry records a change of mode."""
    return entry_type == "custom" and custom_type == RECORD_TYPE


__all__ = [
    "CONTINUE_MODES",
    "CYCLE",
    "DESCRIPTIONS",
    "LABELS",
    "PLAN_NOTE_TYPE",
    "PLAN_ON",
    "RECORD_TYPE",
    "is_mode",
    "mode_entry",
    "next_mode",
    "plan_approved_text",
    "plan_note",
    "plan_off_text",
    "started_in_plan",
]
