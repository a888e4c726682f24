"""The actions as slash commands and command-palette entries (one table for both)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SlashCommand:
    name: str
    usage: str
    title: str
    help: str


COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand(
        "branch",
        "/branch ID",
        "Branch: continue from the selected entry",
        "The next message continues from it",
    ),
    SlashCommand("compact", "/compact [FOCUS]", "Compact the context", "Fold older history into a summary"),
    SlashCommand(
        "uncompact", "/uncompact", "Undo the latest compaction", "Continue from the entry before it"
    ),
    SlashCommand("hide", "/hide [ID]", "Hide the selected entry", "Remove it from the model's view"),
    SlashCommand(
        "replace", "/replace [ID] [TEXT]", "Replace the selected entry", "Edit what the model sees of it"
    ),
    SlashCommand("restore", "/restore [ID]", "Restore the selected entry", "Undo a hide or replace"),
    SlashCommand("pin", "/pin [ID]", "Pin the selected entry", "Keep it verbatim through compaction"),
    SlashCommand("unpin", "/unpin [ID]", "Unpin the selected entry", "Let compaction summarize it again"),
    SlashCommand("label", "/label [ID] [NAME]", "Label the selected entry", "An empty label clears it"),
    SlashCommand("rename", "/rename NAME", "Rename the session", "Name shown in the picker"),
    SlashCommand(
        "fork", "/fork [ID]", "Fork into a new session file", "A new file with the path to the entry"
    ),
    SlashCommand("export", "/export [PATH]", "Export the active branch", "As a standalone JSONL session"),
    SlashCommand("resume", "/resume", "Resume a session", "Pick a session of this folder"),
    SlashCommand("new", "/new", "New session", "Start an empty session"),
    SlashCommand("model", "/model [PROVIDER/MODEL]", "Switch model", "Appends a model_change entry"),
    SlashCommand("thinking", "/thinking [LEVEL]", "Thinking level", "off, minimal, low, medium, high, xhigh"),
    SlashCommand("theme", "/theme [NAME]", "Switch theme", "Saved in the config file"),
    SlashCommand(
        "help", "/help", "Help: list the slash commands", "Every action is also a key and a command"
    ),
)

NAMES = frozenset(c.name for c in COMMANDS) | {"quit"}


def parse_slash(text: str) -> tuple[str, str] | None:
    """``/name args`` -> (name, args); None for plain text (``//text`` sends ``/text``)."""
    stripped = text.strip()
    if not stripped.startswith("/") or stripped.startswith("//"):
        return None
    name, _, arg = stripped[1:].partition(" ")
    if not name or "/" in name:
        return None  # a path such as /etc/hosts is a message, not a command
    return name, arg
