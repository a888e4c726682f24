"""The slash commands: one table for the composer's ``/name``, the command palette and the help screen.

Each :class:`SlashCommand` carries its handler, so running ``/name args`` is a
lookup in :data:`BY_NAME` and the help screen lists the same rows.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agent_tui.projection.models import THINKING_LEVELS
from agent_tui.tui import checkpoint_offer, surgery_actions

if TYPE_CHECKING:
    from agent_tui.store.index import SessionIndex
    from agent_tui.tui.host import Host
    from agent_tui.tui.session_actions import SessionActions


@dataclass(frozen=True, slots=True)
class SlashArgs:
    """A command's argument: the whole text, and split as ``[ID] REST`` when it starts with an entry id."""

    text: str
    entry: str | None  # the first word, if it is an entry id of the session
    rest: str  # what follows the entry id (the whole text when there is none)

    @classmethod
    def parse(cls, arg: str, index: SessionIndex) -> SlashArgs:
        text = arg.strip()
        first, _, rest = text.partition(" ")
        entry = first if first and first in index else None
        return cls(text, entry, rest.strip() if entry else text)


Handler = Callable[["SessionActions", SlashArgs], "Awaitable[None] | None"]


@dataclass(frozen=True, slots=True)
class SlashCommand:
    name: str
    usage: str
    title: str
    help: str
    run: Handler


async def _branch(actions: SessionActions, args: SlashArgs) -> None:
    target = actions.target(args.text.partition(" ")[0] or None)
    if target is not None:
        await actions.branch_to(target)


def _session(actions: SessionActions, args: SlashArgs) -> None:
    from agent_tui.tui.screens.text_view import TextViewScreen
    from agent_tui.tui.user_commands import session_text

    actions.app.push_screen(TextViewScreen("Session", session_text(actions.app)))


def _agents(actions: SessionActions, args: SlashArgs) -> None:
    from agent_tui.tui.screens.text_view import TextViewScreen
    from agent_tui.tui.user_commands import agents_text

    actions.app.push_screen(TextViewScreen("Subagent types", agents_text(actions.app)))


def _theme(actions: SessionActions, args: SlashArgs) -> None:
    app = actions.app
    if not args.text:
        app.action_change_theme()
    elif args.text in app.available_themes:
        app.theme = args.text
    else:
        actions.notify(f"no theme {args.text!r}: {', '.join(sorted(app.available_themes))}", severity="error")


def _mcp(actions: SessionActions, args: SlashArgs) -> None:
    from agent_tui.tui.agent_bridge import configured_mcp_servers
    from agent_tui.tui.screens.mcp import McpScreen

    manager = configured_mcp_servers(actions.app.config.model)  # before the first turn: "not started"
    if manager is None:
        actions.notify("No MCP servers: no model is configured yet.")
        return
    actions.app.push_screen(McpScreen(manager))


def _sandbox(actions: SessionActions, args: SlashArgs) -> None:
    from agent_tui.tui import sandbox_state
    from agent_tui.tui.agent_bridge import agent_permissions
    from agent_tui.tui.screens.text_view import TextViewScreen

    app = actions.app
    if args.text:
        try:
            changed = sandbox_state.switch(agent_permissions(app.turns), args.text)
        except ValueError as e:
            actions.notify(str(e), severity="error", markup=False)
            return
        actions.notify(changed.describe(), markup=False)
        return
    # the app's, with the agent's network rules
    sandbox = sandbox_state.command_sandbox(agent_permissions(app.turns))
    text = sandbox_state.describe(sandbox, str(app.config.cwd))
    app.push_screen(TextViewScreen("Sandbox", text))


def _permissions(actions: SessionActions, args: SlashArgs) -> None:
    from agent_tui.tui.permission_rules_view import permissions_text
    from agent_tui.tui.screens.text_view import TextViewScreen

    text = permissions_text(actions.app, args.text)
    if args.text:
        actions.notify(text, markup=False)
    else:
        actions.app.push_screen(TextViewScreen("Permission rules", text))


async def _reload(actions: SessionActions) -> None:
    from agent_tui.tui.reload import reload  # print mode reads these names: it loads none of this

    # in a worker: a hook or MCP server changed since it was accepted puts the trust question,
    # which a message handler could not wait for (the screen would never get its keys)
    actions.app.run_worker(reload(actions), group="reload", exclusive=True, exit_on_error=False)


COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand(
        "branch",
        "/branch ID",
        "Branch: continue from the selected entry",
        "The next message continues from it",
        _branch,
    ),
    SlashCommand(
        "compact",
        "/compact [FOCUS]",
        "Compact the context",
        "Fold older history into a summary",
        lambda a, x: a.compact(x.text or None),
    ),
    SlashCommand(
        "uncompact",
        "/uncompact",
        "Undo the latest compaction",
        "Continue from the entry before it",
        lambda a, x: a.uncompact(),
    ),
    SlashCommand(
        "prune",
        "/prune [preview] [KEEP_LAST [MIN_TOKENS]]",
        "Prune old tool output",
        "Stub all but the last 3 results over 1,000 tokens; no model call",
        lambda a, x: surgery_actions.prune(a, x.text),
    ),
    SlashCommand(
        "undo",
        "/undo [ID]",
        "Undo the latest surgery",
        "A span hidden, a prune or a range compacted, in one go",
        lambda a, x: surgery_actions.undo(a, x.entry),
    ),
    SlashCommand(
        "hide",
        "/hide [ID]",
        "Hide the selected entry",
        "Remove it from the model's view",
        lambda a, x: a.hide(x.entry),
    ),
    SlashCommand(
        "replace",
        "/replace [ID] [TEXT]",
        "Replace the selected entry",
        "Edit what the model sees of it",
        lambda a, x: a.replace(x.entry, x.rest or None),
    ),
    SlashCommand(
        "unhide",
        "/unhide [ID]",
        "Unhide the selected entry",
        "Undo a hide or replace",
        lambda a, x: a.restore(x.entry),
    ),
    SlashCommand(
        "restore",
        "/restore [ID]",
        "Restore the files as the entry left them",
        "Its file checkpoint (a list first)",
        lambda a, x: checkpoint_offer.restore_command(a, x.entry),
    ),
    SlashCommand(
        "pin",
        "/pin [ID]",
        "Pin the selected entry",
        "Keep it verbatim through compaction",
        lambda a, x: a.pin(x.entry, True),
    ),
    SlashCommand(
        "unpin",
        "/unpin [ID]",
        "Unpin the selected entry",
        "Let compaction summarize it again",
        lambda a, x: a.pin(x.entry, False),
    ),
    SlashCommand(
        "label",
        "/label [ID] [NAME]",
        "Label the selected entry",
        "An empty label clears it",
        lambda a, x: a.label(x.entry, x.rest if x.text else None),
    ),
    SlashCommand(
        "rename",
        "/rename NAME",
        "Rename the session",
        "Name shown in the picker",
        lambda a, x: a.rename(x.text or None),
    ),
    SlashCommand(
        "fork",
        "/fork [ID]",
        "Fork into a new session file",
        "A new file with the path to the entry",
        lambda a, x: a.fork(x.entry),
    ),
    SlashCommand(
        "export",
        "/export [PATH]",
        "Export the active branch",
        "As HTML, Markdown or JSONL, by the extension",
        lambda a, x: a.export(x.text or None),
    ),
    SlashCommand(
        "resume", "/resume", "Resume a session", "Pick a session of this folder", lambda a, x: a.resume()
    ),
    SlashCommand("new", "/new", "New session", "Start an empty session", lambda a, x: a.new_session()),
    SlashCommand(
        "session",
        "/session",
        "Session info",
        "Its file, and the prompt files, templates and skills loaded",
        _session,
    ),
    SlashCommand(
        "model",
        "/model [PROVIDER/MODEL]",
        "Switch model",
        "Appends a model_change entry",
        lambda a, x: a.model(x.text or None),
    ),
    SlashCommand(
        "thinking",
        "/thinking [LEVEL]",
        "Thinking level",
        ", ".join(THINKING_LEVELS),
        lambda a, x: a.thinking(x.text or None),
    ),
    SlashCommand(
        "copy",
        "/copy [N]",
        "Copy the last reply",
        "To the clipboard; /copy 2 the one before",
        lambda a, x: a.copy_reply(x.text),
    ),
    SlashCommand("theme", "/theme [NAME]", "Switch theme", "Saved in the config file", _theme),
    SlashCommand(
        "sandbox",
        "/sandbox [MODE | network on|off]",
        "Command sandbox",
        "Where bash, !cmd and hooks run; switch it",
        _sandbox,
    ),
    SlashCommand(
        "mcp",
        "/mcp",
        "MCP servers",
        "Each server's state and tools; r restarts one, d disables it",
        _mcp,
    ),
    SlashCommand(
        "permissions",
        "/permissions [remove RULE]",
        "Permission rules",
        "The allow, ask and deny rules in force and their files; remove RULE takes one out",
        _permissions,
    ),
    SlashCommand(
        "agents",
        "/agents",
        "Subagent types",
        "The types the task tool can start, and where each came from",
        _agents,
    ),
    SlashCommand(
        "reload",
        "/reload",
        "Reload your files",
        "Prompt files, templates, skills, MCP servers and hooks, read again",
        lambda a, x: _reload(a),
    ),
    SlashCommand(
        "help",
        "/help",
        "Help: every key and command",
        "Also ? on an empty composer",
        lambda a, x: a.app.show_help(),
    ),
    SlashCommand(
        "quit", "/quit", "Quit", "Leave agent-tui (the session is already saved)", lambda a, x: a.app.exit()
    ),
)

BY_NAME: dict[str, SlashCommand] = {c.name: c for c in COMMANDS}
NAMES = frozenset(BY_NAME)


def slash_rows(app: Host) -> list[tuple[str, str, str]]:
    """(name, usage, help) of every ``/`` command: this table, then the user's templates and skills
    once they are loaded (the composer's completion, as it opens)."""
    from agent_tui.tui.user_commands import command_rows, ready_resources

    return [(c.name, c.usage, c.help) for c in COMMANDS] + command_rows(ready_resources(app))


def parse_slash(text: str) -> tuple[str, str] | None:
    """``/name args`` -> (name, args); None for plain text (``//text`` sends ``/text``)."""
    stripped = text.strip()
    if not stripped.startswith("/") or stripped.startswith("//"):
        return None
    name, _, arg = stripped[1:].partition(" ")
    if not name or "/" in name:
        return None  # a path such as /etc/hosts is a message, not a command
    return name, arg
