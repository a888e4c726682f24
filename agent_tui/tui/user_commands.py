"""The user's prompt templates and skills in the app: the ``/`` completion and the help screen list
them, a submitted ``/template ARGS`` or ``/skill:name ARGS`` is expanded before it becomes the
user message, and ``/session`` and the panel say which files were loaded.

They are loaded in a thread started before the app (:class:`agent_tui.agent.resources.Loading`),
so the first paint never waits for them; :func:`attach` wires them in once they are there and
shows each loading problem (a broken frontmatter, a name taken) as one line. Every text from
these files is shown as plain text, never markup.
"""

from __future__ import annotations

import contextlib
import threading
from typing import TYPE_CHECKING, Any

from textual.css.query import NoMatches

from agent_tui.agent.resources import Resources
from agent_tui.agent.skills import SkillError
from agent_tui.agent.system_prompt import context_files
from agent_tui.terminal_text import visible_line

if TYPE_CHECKING:
    from agent_tui.tui.app import AgentTuiApp

#: Loading problems shown as notifications at the start; the rest are counted (``/session`` lists all).
SHOWN_WARNINGS = 3


def resources_of(app: Any) -> Resources | None:
    """The app's loaded resources (waiting for the loading thread), or None when it has none."""
    loading = getattr(getattr(app, "config", None), "resources", None)
    return loading.get() if loading is not None else None


def ready_resources(app: Any) -> Resources | None:
    """The resources if they are loaded already (never waits)."""
    loading = getattr(getattr(app, "config", None), "resources", None)
    return loading.ready() if loading is not None else None


def command_rows(resources: Resources | None) -> list[tuple[str, str, str]]:
    """(name, usage, help) of every template, then every skill, for the completion and the help."""
    if resources is None:
        return []
    rows = [(t.name, t.usage, t.description or "prompt template") for t in resources.templates.values()]
    rows += [(f"skill:{s.name}", f"/skill:{s.name} [ARGS]", s.description) for s in resources.skills.values()]
    return [(visible_line(n), visible_line(u), visible_line(h)) for n, u, h in rows]


def expand_typed(app: Any, text: str) -> str | None:
    """``text`` expanded when it is a template or skill command (None otherwise, or when the
    skill's file cannot be read: then the user is told, in one line)."""
    resources = resources_of(app)
    if resources is None:
        return None
    try:
        return resources.expand(text)
    except SkillError as e:
        app.notify(visible_line(str(e)), severity="error")
        return None


def session_text(app: Any) -> str:
    """``/session``: the session file and its size, then what shapes the system prompt."""
    session = getattr(app, "session", None)
    lines: list[str] = []
    if session is not None:
        lines.append(f"session: {session.path}")
        lines.append(f"id: {session.index.header.get('id', '?')}")
        lines.append(f"entries: {len(session.index.entries):,}")
        lines.append(f"folder: {session.cwd}")
        from agent_tui.projection.figures import usage_lines
        from agent_tui.projection.pricing import session_usage

        path = app.projection.path if getattr(app, "projection", None) is not None else []
        lines += usage_lines(session_usage(session.index.entries), session_usage(path))
    else:
        lines.append("session: none yet (the file appears when you first send or act)")
    loading = getattr(getattr(app, "config", None), "resources", None)
    resources = ready_resources(app)
    lines.append("")
    if loading is not None and resources is None:
        lines.append("the prompt files, templates and skills are still loading")
        return "\n".join(visible_line(line) for line in lines)
    resources = resources or Resources()
    lines += resources.describe()
    config = getattr(app, "config", None)
    if resources.prompt.context_files and config is not None:
        files = context_files(config.cwd, config.config_path.parent)
        lines.append("context files: " + (", ".join(f.path for f in files) if files else "none"))
    return "\n".join(visible_line(line) for line in lines)


def agents_text(app: Any) -> str:
    """``/agents``: the subagent types, the folder's own only when it is trusted (as the agent
    loads them: ``--trust-project`` or the remembered answer)."""
    import os

    from agent_tui.agent import agent_types
    from agent_tui.agent.trust import TrustStore

    config = getattr(app, "config", None)
    cwd = str(getattr(config, "cwd", None) or os.getcwd())
    choice = getattr(config, "model", None)
    trusted = bool(getattr(choice, "trust_project", False))
    if not trusted:
        with contextlib.suppress(Exception):
            trusted = TrustStore(getattr(choice, "trust_file", None)).decision(cwd) is True
    config_path = getattr(config, "config_path", None)
    home = getattr(choice, "home", None) or os.environ.get("HOME") or "~"
    types, warnings = agent_types.load_agent_types(
        cwd, home, config_path.parent if config_path is not None else None, trusted=trusted
    )
    text = agent_types.agents_text(types, warnings, trusted=trusted)
    return "\n".join(visible_line(line) for line in text.splitlines())


def slash_rows(resources: Resources | None) -> list[tuple[str, str, str]]:
    """(name, usage, help) of every ``/`` command: the app's table, then the user's (the completion)."""
    from agent_tui.tui.commands import COMMANDS

    return [(c.name, c.usage, c.help) for c in COMMANDS] + command_rows(resources)


def _apply(app: AgentTuiApp, resources: Resources) -> None:
    app.composer.commands_source = lambda: slash_rows(resources)
    with contextlib.suppress(NoMatches):  # no panel mounted: nothing to say there
        app.panel.sources = resources.summary()
        app.panel.redraw()
    warnings = list(resources.warnings)
    for warning in warnings[:SHOWN_WARNINGS]:
        app.notify(visible_line(warning), severity="warning", timeout=10)
    if len(warnings) > SHOWN_WARNINGS:
        app.notify(f"{len(warnings) - SHOWN_WARNINGS} more loading problems: /session lists them", timeout=10)


def attach(app: AgentTuiApp) -> None:
    """Wire the resources in once loaded (now, if they are)."""
    app.composer.commands_source = lambda: slash_rows(None)  # the app's own until the user's load
    loading = app.config.resources
    if loading is None:
        return
    done = loading.ready()
    if done is not None:
        _apply(app, done)
        return

    def wait() -> None:
        resources = loading.get()
        with contextlib.suppress(RuntimeError):  # the app has stopped meanwhile
            app.call_from_thread(_apply, app, resources)

    threading.Thread(target=wait, name="agent-tui-resources-wait", daemon=True).start()


__all__ = [
    "attach",
    "command_rows",
    "expand_typed",
    "ready_resources",
    "resources_of",
    "session_text",
    "slash_rows",
]
