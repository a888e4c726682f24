"""``/reload``: read the user's files again without a restart, as pi's ``/reload`` does.

What changed on disk since the start applies at once: the system prompt's files (the next turn
appends a patch of just the sections that changed), the prompt templates and skills (the
completion, the help screen, the panel), and the MCP servers and hooks of the config file and
Claude Code's and pi's files (a server whose definition did not change keeps running; the others
are stopped, and the new ones start at the next turn). The command line's flags (``--system-prompt``,
``--skill``, ...) stay as given; the folder's trust stays as answered, unless the reload is the
yes to the folder-trust question of the start (``trust_folder``): then the folder's servers and
hooks load too, after the turn running then (a turn may have settled the folder as untrusted).
"""

from __future__ import annotations

import asyncio
from functools import partial
from typing import TYPE_CHECKING

from agent_tui.agent.extensions import Extensions
from agent_tui.agent.prompt_files import PromptFileError
from agent_tui.projection.describe import plural
from agent_tui.terminal_text import visible_line
from agent_tui.tui import folder_trust_offer, prompt_review, user_commands
from agent_tui.tui.agent_bridge import make_extensions

#: Seconds between looks at whether the turn is over (the folder's yes waits for it).
BUSY_POLL = 0.2

if TYPE_CHECKING:
    from agent_tui.agent.resources import Resources
    from agent_tui.tui.agent_bridge import Turns
    from agent_tui.tui.host import Actions


async def reload(actions: Actions, *, trust_folder: bool = False) -> None:
    app = actions.app
    while trust_folder and app.busy:  # the answer came during a turn: it applies after it
        await asyncio.sleep(BUSY_POLL)
    if app.busy:
        actions.notify(
            "/reload waits for the turn: let it finish or stop it (Esc) first.", severity="warning"
        )
        return
    start = app.config.reload
    if start is None:
        actions.notify("Nothing to reload: this app was started without the user's files.")
        return
    try:
        loading = start()  # the prompt files now (a flag's @FILE gone is one line), the rest in a thread
    except PromptFileError as e:
        actions.notify(visible_line(str(e)), title="reload", severity="error", timeout=10, markup=False)
        return
    app.config.resources = loading
    app.config.model.resources = loading  # the agents built from now on
    resources = await asyncio.to_thread(loading.get)
    # completion, help, panel; each loading problem one line; prompt files held back asked about
    user_commands.attach(app, partial(offer_waiting, actions))
    turns = app.turns
    if turns is not None:
        turns.resources = resources  # the running session's agent: its next turn's system prompt
    servers = await _reload_extensions(actions, turns, trust_folder=trust_folder)
    what = resources.summary() or "the default prompt, no templates or skills"
    actions.notify(visible_line(f"Reloaded: {what}{servers}"), title="reload", markup=False)


def offer_waiting(actions: Actions, resources: Resources) -> None:
    """Prompt files new or changed since the user accepted them (agent.prompt_trust): asked in a
    worker (tui.prompt_review); yes reloads, so they load now. An untrusted folder's own prompt
    files, left out, put the folder-trust question first (tui.folder_trust_offer)."""
    if folder_trust_offer.offer_trust(
        actions.app,
        resources,
        partial(reload, actions, trust_folder=True),
        partial(_review_waiting, actions, resources),
    ):
        return
    _review_waiting(actions, resources)


def _review_waiting(actions: Actions, resources: Resources) -> None:
    if not resources.waiting:
        return

    async def run() -> None:
        if await prompt_review.ask_prompt_files(actions.app, resources):
            await reload(actions)

    actions.app.run_worker(run(), group="prompt-review", exclusive=True, exit_on_error=False)


async def _reload_extensions(actions: Actions, turns: Turns | None, *, trust_folder: bool = False) -> str:
    """The agent's MCP servers and hooks read again (nothing started: the next turn does)."""
    old = turns.extensions if turns is not None else None
    if turns is None or old is None:  # no agent yet, or one without MCP servers and hooks
        return ""
    fresh: Extensions = make_extensions(turns.config, actions.app.config.model, old.cwd)
    fresh.session_started = old.session_started  # SessionStart ran for this session already
    fresh.trusted = old.trusted  # the folder's answer stands
    if trust_folder:
        fresh.trust_folder()  # the user's yes just now: the folder's own servers and hooks too
    await fresh.load()
    if old.mcp is not None and old.mcp is not fresh.mcp and not old.shared:
        await old.mcp.close()  # the app's shared one, when it changed, load() replaced and closed
    turns.extensions = fresh
    for line in fresh.take_notices():
        actions.notify(visible_line(line), title="reload", severity="warning", timeout=10, markup=False)
    servers = len(fresh.mcp.servers) if fresh.mcp is not None else 0
    hooks = len(fresh.hooks.commands)
    return f"; {plural(servers, 'MCP server')}, {plural(hooks, 'hook')}"


__all__ = ["offer_waiting", "reload"]
