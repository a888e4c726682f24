"""A typed ``/name args`` outside the app: the one mechanism of the faces without a screen.

What a message starting with ``/`` is, in this order (:func:`parse`):

1. one of the app's own commands that need no screen, with the app's names and meaning
   (:data:`BUILTIN`: ``/compact [FOCUS]``, ``/rename NAME``, ``/session``, ``/agents``,
   ``/permissions [remove RULE]``,
   ``/model [PROVIDER/MODEL]``, ``/thinking [LEVEL]``), run on the session core by :func:`run`;
2. a prompt template or ``/skill:NAME``, expanded by :meth:`Resources.expand` (loaded with the
   app's command names reserved, :data:`agent_tui.agent.app_commands.NAMES`, as every face loads
   them: a template never takes a command's name);
3. anything else (another app command, ``//text``, a path such as ``/etc/hosts``): plain text.

:func:`listed` is what a face advertises (ACP's ``available_commands``; the templates and skills
are what RPC's ``get_commands`` lists). The ACP agent runs these; print and RPC mode expand the
same templates and skills.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agent_tui.agent.app_commands import NAMES as APP_COMMANDS
from agent_tui.agent.events import AgentEvent
from agent_tui.agent.resources import Resources
from agent_tui.config import PROVIDERS, ConfigError
from agent_tui.projection.models import THINKING_LEVELS

if TYPE_CHECKING:
    from agent_tui.agent.agent_session import AgentSession


@dataclass(frozen=True, slots=True)
class CommandInfo:
    """One command as a face lists it: ``source`` is ``builtin``, ``prompt`` or ``skill``."""

    name: str
    description: str
    hint: str | None = None
    source: str = "builtin"


BUILTIN: tuple[CommandInfo, ...] = (
    CommandInfo("compact", "Compact the context: fold older history into a summary", "optional focus"),
    CommandInfo("rename", "Rename the session", "the name"),
    CommandInfo("session", "Session info: its file, model, context use and what was loaded"),
    CommandInfo("model", "Switch model (without one: the models with a key)", "PROVIDER/MODEL"),
    CommandInfo("thinking", "Thinking level (without one: the model's levels)", ", ".join(THINKING_LEVELS)),
    CommandInfo("agents", "The subagent types the task tool can start"),
    CommandInfo("permissions", "The permission rules in force and their files", "remove RULE"),
    CommandInfo(
        "restore",
        "File checkpoints: list them, or the files as ENTRY left them (a list first; yes writes)",
        "ENTRY [yes|force]",
    ),
)
BUILTIN_NAMES = frozenset(c.name for c in BUILTIN)
assert BUILTIN_NAMES <= APP_COMMANDS  # the app's commands, by the app's names


@dataclass(frozen=True, slots=True)
class Command:
    """A built-in command and its argument (stripped)."""

    name: str
    argument: str


@dataclass(frozen=True, slots=True)
class Said:
    """A command's answer, for the user (untrusted parts made inert by the face); ``renamed``: the
    session's new name after ``/rename``."""

    text: str
    renamed: str | None = None


def split(text: str) -> tuple[str, str] | None:
    """``/name args`` -> (name, args), as the app splits it; None for plain text (``//text`` sends
    ``/text``, a path such as ``/etc/hosts`` is a message)."""
    stripped = text.strip()
    if not stripped.startswith("/") or stripped.startswith("//"):
        return None
    name, _, argument = stripped[1:].partition(" ")
    if not name or "/" in name:
        return None
    return name, argument.strip()


def parse(text: str, resources: Resources | None) -> Command | str | None:
    """A built-in :class:`Command`, a template's or skill's expansion (the text to send), or None
    (send ``text`` as it is). Raises :class:`agent_tui.agent.skills.SkillError` when a skill's
    file went away."""
    parts = split(text)
    if parts is None:
        return None
    if parts[0] in BUILTIN_NAMES:
        return Command(*parts)
    return resources.expand(text) if resources is not None else None


def listed(resources: Resources | None) -> list[CommandInfo]:
    """The built-in commands, then the user's prompt templates and skills."""
    found = list(BUILTIN)
    if resources is not None:
        found += [
            CommandInfo(t.name, t.description, t.argument_hint, "prompt")
            for t in resources.templates.values()
        ]
        found += [
            CommandInfo(f"skill:{k.name}", k.description, None, "skill") for k in resources.skills.values()
        ]
    return found


def run(agent: AgentSession, command: Command) -> Said | AsyncIterator[AgentEvent]:
    """Run a built-in command on the session core: ``/compact`` is a run (its events), the others
    answer at once. Not while a run is in progress (the face refuses first)."""
    name, argument = command.name, command.argument
    if name == "compact":
        return agent.compact(argument or None)
    if name == "rename":
        if not argument:
            return Said("Usage: /rename NAME")
        agent.store.rename(argument)
        shown = " ".join(argument.split())
        return Said(f"Session named {shown}", renamed=shown)
    if name == "session":
        return Said(session_text(agent))
    if name == "model":
        return _model(agent, argument)
    if name == "agents":
        from agent_tui.agent.subagents import SubagentRunner

        return Said(SubagentRunner(agent.loop).agents_text())
    if name == "permissions":
        from agent_tui.agent.permission_rules import command_text

        permissions = agent.loop.permissions
        return Said(command_text(permissions.rules if permissions is not None else None, argument))
    if name == "restore":
        return _restore(agent, argument)
    return _thinking(agent, argument)


def _restore(agent: AgentSession, argument: str) -> Said:
    """``/restore``: the checkpoints; ``/restore ENTRY``: what restoring it writes; ``yes`` writes
    it (``force``: conflicts too). Outside the app ``/restore`` restores files, not an entry's
    model content."""
    from agent_tui.agent.checkpointing import RestoreConflict
    from agent_tui.agent.checkpoints import CheckpointError
    from agent_tui.store.errors import StoreError

    entry_id, _, word = argument.partition(" ")
    word = word.strip().lower()
    if not entry_id:
        rows = [
            f"  {c['entryId']}  {c['when']:<7} "
            + ", ".join(f"{len(c['files'][k])} {k}" for k in ("added", "changed", "deleted") if c["files"][k])
            for c in agent.checkpoints()
        ]
        if not rows:
            return Said("No file checkpoints on this branch.")
        return Said(
            "File checkpoints (oldest first):\n" + "\n".join(rows) + "\n/restore ENTRY lists what it writes."
        )
    try:
        plan = agent.plan_restore(entry_id)
        if plan.mark is None:
            return Said(f"No file checkpoint at or before entry {entry_id}.")
        if plan.empty:
            return Said("Nothing to restore: the files are as that entry left them.")
        listing = "\n".join(f"  {line}" for line in plan.lines())
        if word not in ("yes", "force"):
            conflicts = (
                " Files changed outside the agent need /restore ENTRY force." if plan.conflicts else ""
            )
            return Said(
                f"Restoring {entry_id} would:\n{listing}\nSend /restore {entry_id} yes to do it.{conflicts}"
            )
        done = agent.restore_files(entry_id, force=word == "force", expected=plan)
    except RestoreConflict as e:
        return Said(f"{e}. Nothing was written; /restore {entry_id} force writes them.")
    except (CheckpointError, StoreError, RuntimeError) as e:
        return Said(str(e))
    refused = "".join(f"\n  not written: {p} ({why})" for p, why in done.refused)
    undo = f"\nUndo: /restore {done.undo_id} yes" if done.undo_id else ""
    return Said(f"Restored the files as {entry_id} left them:\n{listing}{refused}{undo}")


def _model(agent: AgentSession, argument: str) -> Said:
    if not argument:
        models = "\n".join(f"  {p}/{m}" for p, m in agent.available_models())
        return Said(f"Model: {agent.provider}/{agent.model}\nWith a key:\n{models}")
    provider, _, model = argument.partition("/")
    if not model or provider not in PROVIDERS:  # an id of the current provider (it may hold a "/")
        provider, model = agent.provider, argument
    try:
        agent.set_model(model, provider)
    except (ValueError, ConfigError, RuntimeError) as e:
        return Said(str(e))
    return Said(f"Model: {agent.provider}/{agent.model} (thinking {agent.thinking_level})")


def _thinking(agent: AgentSession, argument: str) -> Said:
    levels = ", ".join(agent.thinking_levels())
    if not argument:
        return Said(f"Thinking: {agent.thinking_level} ({agent.model} has {levels})")
    try:
        level = agent.set_thinking_level(argument)
    except ValueError as e:
        return Said(str(e))
    clamped = "" if level == argument else f" ({agent.model} has {levels})"
    return Said(f"Thinking: {level}{clamped}")


def session_text(agent: AgentSession) -> str:
    """``/session`` without the app: the file, the model, the context use, what was loaded."""
    from agent_tui.agent.session_stats import stats_lines

    store = agent.store
    lines = [
        f"Session {store.id}",
        f"File: {store.path}",
        f"Model: {agent.provider}/{agent.model} (thinking {agent.thinking_level})",
        f"Entries: {len(store.index.entries):,}",
        *stats_lines(agent.stats()),  # the figures every face shows (the app's, RPC's, the SDK's)
    ]
    if agent.resources is not None:
        lines += ["", *agent.resources.describe()]
    return "\n".join(lines)


__all__ = [
    "BUILTIN",
    "BUILTIN_NAMES",
    "Command",
    "CommandInfo",
    "Said",
    "listed",
    "parse",
    "run",
    "session_text",
    "split",
]
