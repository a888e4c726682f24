"""What the app is started with (:class:`TuiConfig`): its own module, so that the app's
controllers (typed against :class:`agent_tui.tui.host.Host`) name it without importing the app."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from agent_tui.agent.resources import Loading
from agent_tui.tui.agent_bridge import AgentFactory, ModelChoice
from agent_tui.tui.themes import DEFAULT_THEMES_DIR


@dataclass(slots=True)
class TuiConfig:
    """Everything the app reads: where sessions are, what to open, the config file, the themes."""

    cwd: Path
    session_dir: Path  # where new sessions of ``cwd`` go (and where -c / -r look)
    config_path: Path
    session_file: Path | None = None
    continue_last: bool = False
    pick: bool = False
    model: ModelChoice = field(default_factory=ModelChoice)
    themes_dir: Path = DEFAULT_THEMES_DIR
    theme: str | None = None  # overrides the config file's theme (tests)
    agent_factory: AgentFactory | None = None
    history: list[str] = field(default_factory=list)
    history_file: Path | None = None  # the global prompt history (None: in memory only)
    summarize_branches: bool | None = None  # None: the config file's [compaction] summarize_branches
    no_session: bool = False  # --no-session: the session is kept in memory, nothing is written
    session_name: str | None = None  # -n/--name: the session's name (a session_info entry)
    search_index: Path | None = None  # the session library's index (None: the user data dir's)
    exports_dir: Path | None = None  # where exports go by default (None: the data dir's exports/)
    #: The user's prompt files, templates and skills, loading in a thread (None: none, as in tests).
    resources: Loading | None = None
    #: Starts loading them again, with the same flags (``/reload``; None: nothing to reload).
    reload: Callable[[], Loading] | None = None


__all__ = ["TuiConfig"]
