"""The trust question at the start for a folder whose own prompt files did not load.

An untrusted folder's own ``SYSTEM.md``, ``APPEND_SYSTEM.md``, templates and skills never load
(:mod:`agent_tui.agent.prompt_trust`); every face says so in one line. The app, where the user can
answer, also asks once: a folder never asked about gets the folder-trust question
(:func:`agent_tui.tui.screens.trust.ask_trust`, guarded, "Yes" deliberate) listing those files and
whatever else of its own would start programs (``.mcp.json``, hooks, rules), so one answer covers
all of it, as Claude Code's one question before it loads anything of a project's. Yes remembers
the folder as trusted and reloads (its files load now, accepted as they are, and its MCP servers
and hooks too, even when a turn had already settled the folder as untrusted); No is remembered;
Escape leaves it for the next start. A folder answered before is not asked again (``agent-tui
trust`` changes the answer).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from agent_tui.agent.extensions import Extensions
from agent_tui.agent.resources import Resources
from agent_tui.agent.trust import TrustStore
from agent_tui.terminal_text import visible_line
from agent_tui.tui.screens.trust import ask_trust

if TYPE_CHECKING:
    from agent_tui.tui.host import Host

INTRO = "This folder has its own prompt files (not loaded: it is not trusted):"


def offer_trust(
    app: Host,
    resources: Resources,
    on_yes: Callable[[], Awaitable[object]],
    otherwise: Callable[[], object] = lambda: None,
) -> bool:
    """Ask (in a worker) when ``resources`` left out the folder's own files and the folder was
    never asked about; True when the question was put. ``on_yes`` once the folder is remembered
    as trusted (the app reloads, the folder's servers and hooks too:
    :func:`agent_tui.tui.reload.reload`'s ``trust_folder``); ``otherwise`` after any other answer."""
    if not resources.untrusted or resources.trust_path is None:
        return False
    cwd = str(app.config.cwd)
    store = TrustStore(resources.trust_path)
    if store.decision(cwd) is not None:
        return False
    lines = [f"{label}: prompt file" for label in resources.untrusted]
    lines += Extensions(cwd, {}).project_resources()

    async def run() -> None:
        reply = await ask_trust(app, cwd, lines, intro=INTRO)
        if reply is not None:
            try:
                store.remember(cwd, reply)
            except OSError as e:
                app.notify(
                    visible_line(f"could not remember the answer: {e.strerror}"),
                    severity="error",
                    markup=False,
                )
                reply = None
        if reply:
            await on_yes()
        else:
            otherwise()

    app.run_worker(run(), group="folder-trust", exclusive=True, exit_on_error=False)
    return True


__all__ = ["INTRO", "offer_trust"]
