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
from collections.abc import Callable
from typing import TYPE_CHECKING

from textual.css.query import NoMatches

from agent_tui.agent.resources import Resources
from agent_tui.agent.skills import SkillError
from agent_tui.agent.system_prompt import context_files
from agent_tui.terminal_text import visible_line

if TYPE_CHECKING:
    from agent_tui.tui.host import Host

#: Loading problems shown as notifications at the start; the rest are counted (``/session`` lists all).
SHOWN_WARNINGS = 3


def resources_of(app: Host) -> Resources | None:
    """The app's loaded resources (waiting for the loading thread), or None when it has none."""
    loading = app.config.resources
    return loading.get() if loading is not None else None


def ready_resources(app: Host) -> Resources | None:
    """The resources if they are loaded already (never waits)."""
    loading = app.config.resources
    return loading.ready() if loading is not None else None


def command_rows(resources: Resources | None) -> list[tuple[str, str, str]]:
    """(name, usage, help) of every template, then every skill, for the completion and the help."""
    if resources is None:
        return []
    rows = [(t.name, t.usage, t.description or "prompt template") for t in resources.templates.values()]
    rows += [(f"skill:{s.name}", f"/skill:{s.name} [ARGS]", s.description) for s in resources.skills.values()]
    return [(visible_line(n), visible_line(u), visible_line(h)) for n, u, h in rows]


def expand_typed(app: Host, text: str) -> str | None:
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


def session_text(app: Host) -> str:
    """``/session``: the session file, its figures (the session core's
    :class:`~agent_tui.agent.session_stats.SessionStats`, the lines print mode's ``/session``
    shows, RPC's ``get_session_stats`` sends), then what shapes the system prompt."""
    from agent_tui.agent.session_stats import session_stats, stats_lines

    session = app.session
    lines: list[str] = []
    if session is not None:
        lines.append(f"session: {session.path}")
        lines.append(f"id: {session.index.header.get('id', '?')}")
        lines.append(f"entries: {len(session.index.entries):,}")
        lines.append(f"folder: {session.cwd}")
        figures = app.status_figures()  # the next request's context, as the status line has it
        stats = session_stats(session.index.entries, app.projection.path, figures.context, figures.window)
        lines += stats_lines(stats)
    else:
        lines.append("session: none yet (the file appears when you first send or act)")
    config = app.config
    resources = ready_resources(app)
    lines.append("")
    if config.resources is not None and resources is None:
        lines.append("the prompt files, templates and skills are still loading")
        return "\n".join(visible_line(line) for line in lines)
    resources = resources or Resources()
    lines += resources.describe()
    if resources.prompt.context_files:
        files = context_files(config.cwd, config.config_path.parent, project=resources.project_context)
        lines.append("context files: " + (", ".join(f.path for f in files) if files else "none"))
    return "\n".join(visible_line(line) for line in lines)


def agents_text(app: Host) -> str:
    """``/agents``: the subagent types, the folder's own only when it is trusted (as the agent
    loads them: ``--trust-project`` or the remembered answer)."""
    import os

    from agent_tui.agent import agent_types
    from agent_tui.agent.trust import TrustStore

    config = app.config
    cwd = str(config.cwd)
    choice = config.model
    trusted = choice.trust_project
    if not trusted:
        with contextlib.suppress(Exception):
            trusted = TrustStore(choice.trust_file).decision(cwd) is True
    home = choice.home or os.environ.get("HOME") or "~"
    types, warnings = agent_types.load_agent_types(cwd, home, config.config_path.parent, trusted=trusted)
    text = agent_types.agents_text(types, warnings, trusted=trusted)
    return "\n".join(visible_line(line) for line in text.splitlines())


def _apply(app: Host, resources: Resources, on_loaded: Callable[[Resources], object] | None = None) -> None:
    with contextlib.suppress(NoMatches):  # no panel mounted: nothing to say there
        app.panel.sources = resources.summary()
        app.panel.redraw()
    warnings = list(resources.warnings)
    for warning in warnings[:SHOWN_WARNINGS]:
        app.notify(visible_line(warning), severity="warning", timeout=10)
    if len(warnings) > SHOWN_WARNINGS:
        app.notify(f"{len(warnings) - SHOWN_WARNINGS} more loading problems: /session lists them", timeout=10)
    if on_loaded is not None:
        on_loaded(resources)  # tui.reload.offer_waiting: the prompt files held back, asked about


def attach(app: Host, on_loaded: Callable[[Resources], object] | None = None) -> None:
    """Wire the resources in once loaded (now, if they are); the completion reads them as it opens
    (``commands.slash_rows``); then ``on_loaded`` with them."""
    loading = app.config.resources
    if loading is None:
        return
    done = loading.ready()
    if done is not None:
        _apply(app, done, on_loaded)
        return

    def wait() -> None:
        resources = loading.get()
        with contextlib.suppress(RuntimeError):  # the app has stopped meanwhile
            app.call_from_thread(_apply, app, resources, on_loaded)

    threading.Thread(target=wait, name="agent-tui-resources-wait", daemon=True).start()


__all__ = [
    "attach",
    "command_rows",
    "expand_typed",
    "ready_resources",
    "resources_of",
    "session_text",
]
