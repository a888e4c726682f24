"""pi's "Summarize branch?" on a move in the tree that leaves messages behind (issue 26).

Enter on a tree entry, ``/branch ID`` (and so Esc Esc, which opens the tree) move the leaf; when
that leaves messages behind, pi 1.6 asks first, with the same three answers in the same order and
"No summary" highlighted: "No summary" moves, "Summarize" has the model write a ``branch_summary``
entry of the branch left (the agent layer's ``branch_with_summary``, pi's format), "Summarize with
custom prompt" asks what the summary should keep first (Escape there comes back to the question,
as in pi). Escape on the question moves nothing. The question appears unasked, right after the
Enter that branched, so it is guarded (``screens.dialog.Question``): a key typed before it has been
on screen a moment answers nothing.

``[branch_summary] skip_prompt = true`` (pi's ``branchSummary.skipPrompt``) moves without asking,
as the default answer would; ``[compaction] summarize_branches = true`` makes that default
"Summarize". The tree's ``s`` / ``S`` keep summarizing without the question.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from agent_tui.projection.describe import plural
from agent_tui.tui import checkpoint_offer
from agent_tui.tui.agent_bridge import AgentUnavailable
from agent_tui.tui.checkpoint_offer import Actions
from agent_tui.tui.host import Host
from agent_tui.tui.screens.choice import ChoiceScreen
from agent_tui.tui.screens.prompt import PromptScreen

NO_SUMMARY, SUMMARIZE, CUSTOM = "no-summary", "summarize", "custom"
#: pi's answers, in pi's order (``interactive-mode.js``, ``showTreeSelector``).
CHOICES = [
    (NO_SUMMARY, "No summary"),
    (SUMMARIZE, "Summarize"),
    (CUSTOM, "Summarize with custom prompt"),
]

Summarizer = Callable[..., AsyncIterator[Any]]


def title(left: int) -> str:
    """``Summarize branch? (3 messages left behind)``: pi's question and what it is about."""
    return f"Summarize branch? ({plural(left, 'message')} left behind)"


def preferences(app: Host) -> tuple[bool, str]:
    """(skip the question, its default answer) from the app's config and the config file."""
    from agent_tui.tui.settings import read_config

    settings = read_config(app.config.config_path)
    wanted = app.config.summarize_branches
    if wanted is None:
        wanted = settings.compaction.summarize_branches
    return settings.branch_summary.skip_prompt, SUMMARIZE if wanted else NO_SUMMARY


def summarize(actions: Actions, target: str, summarizer: Summarizer, focus: str | None = None) -> None:
    """Run the branch summary (the model's call moves the leaf to ``target`` at its end), then offer
    the node's files."""
    app = actions.app
    try:
        events = summarizer(target, focus) if focus else summarizer(target)
    except AgentUnavailable as e:  # the model went away since the question (the config file)
        actions.notify(str(e), severity="error")
        return
    app.busy = True
    app.run_events(checkpoint_offer.offer_after(actions, events, target))
    app.focus_composer()


def offer(
    actions: Actions,
    target: str,
    left: int,
    summarizer: Summarizer,
    move: Callable[[str], Awaitable[None]],
) -> Awaitable[None] | None:
    """Ask pi's question about the ``left`` messages a move to ``target`` leaves behind, then move
    (``move``) or summarize. With ``skip_prompt``, do what the default answer does, unasked (the
    awaitable to await: the move)."""
    app = actions.app
    skip, default = preferences(app)
    if skip:
        if default == SUMMARIZE:
            summarize(actions, target, summarizer)
            return None
        return move(target)

    def ask_focus() -> None:
        async def focused(value: str | None) -> None:
            if value is None:  # Escape: back to the question, as in pi
                ask(CUSTOM)
                return
            summarize(actions, target, summarizer, value.strip() or None)

        app.push_screen(
            PromptScreen(
                "Custom summarization instructions: what should the summary keep?",
                placeholder="e.g. the decisions and the files changed",
                hint="Enter summarizes (empty: the usual summary) · Escape goes back",
            ),
            focused,
        )

    def ask(current: str) -> None:
        async def chosen(value: str | None) -> None:
            if value == NO_SUMMARY:
                await move(target)
            elif value == SUMMARIZE:
                summarize(actions, target, summarizer)
            elif value == CUSTOM:
                ask_focus()
            # Escape: nothing moves, the focus goes back where it was (the tree), as in pi

        composer = app.composer
        app.push_screen(
            ChoiceScreen(
                title(left),
                CHOICES,
                current,
                # the Enter that branched, pressed twice, must not answer it: guarded
                guarded=True,
                typed_at=composer.typed_at,
                on_text=composer.insert,
            ),
            chosen,
        )

    ask(default)
    return None


__all__ = ["CHOICES", "CUSTOM", "NO_SUMMARY", "SUMMARIZE", "offer", "preferences", "summarize", "title"]
