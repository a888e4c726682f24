"""Starting the app from the command line: ``agent-tui [FILE] [-c | -r]`` and ``agent-tui serve``.

Only this module (and what it imports) loads textual, so the session
commands stay lean.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex
import sys
from pathlib import Path

from agent_tui.agent.prompt_files import Places, PromptFileError, PromptFlags, system_prompt_files
from agent_tui.agent.resources import Loading, load_resources
from agent_tui.tui.agent_bridge import ModelChoice
from agent_tui.tui.app import AgentTuiApp, TuiConfig, create_app
from agent_tui.tui.daemon_threads import DaemonThreads
from agent_tui.tui.history import default_history_path
from agent_tui.tui.settings import default_config_path


def config_from_args(args: argparse.Namespace, cwd: Path | None = None) -> TuiConfig:
    from agent_tui.store.paths import session_dir_for

    here = (cwd or Path.cwd()).resolve()
    named = session_argument(args)
    session_file = Path(named).expanduser().resolve() if named else None
    resources = start_loading(args, here, default_config_path())
    return TuiConfig(
        reload=lambda: start_loading(args, here, default_config_path()),
        cwd=here,
        session_dir=session_dir_for(here, getattr(args, "session_dir", None)),
        config_path=default_config_path(),
        # --no-session: the prompt history stays in memory too
        history_file=None if getattr(args, "no_session", False) else default_history_path(),
        session_file=session_file,
        continue_last=bool(getattr(args, "continue_last", False)),
        pick=bool(getattr(args, "resume", False)),
        model=ModelChoice(
            provider=getattr(args, "provider", None),
            model=getattr(args, "model", None),
            base_url=getattr(args, "base_url", None),
            api=getattr(args, "api", None),
            thinking=getattr(args, "thinking", None),
            permissions=getattr(args, "permissions", None),
            resources=resources,
            scoped=tuple(getattr(args, "scoped_models", None) or ()),
            trust_project=bool(getattr(args, "trust_project", False)),
        ),
        resources=resources,
        no_session=bool(getattr(args, "no_session", False)),  # --no-session: nothing is written
        session_name=getattr(args, "session_name", None),  # -n/--name
    )


def session_argument(args: argparse.Namespace) -> str | None:
    """The session file the command line names: ``agent-tui FILE`` or, as pi's, ``--session FILE``."""
    return getattr(args, "file", None) or getattr(args, "session", None)


def start_loading(args: argparse.Namespace, cwd: Path, config_path: Path) -> Loading:
    """The system prompt's files and flags, read now (a flag's missing file stops the start:
    PromptFileError), then the templates and skills in a thread while the app starts."""
    from agent_tui.tui.commands import NAMES

    places = Places.here(cwd, config_path.parent)
    flags = PromptFlags.of(args)
    prompt = system_prompt_files(places, flags)
    return Loading(
        lambda: load_resources(
            cwd,
            config_path.parent,
            flags=flags,
            reserved=NAMES,
            prompt=prompt,
            trust_project=bool(getattr(args, "trust_project", False)),
        )
    )


def run_app(args: argparse.Namespace) -> int:
    named = session_argument(args)
    if named and not Path(named).expanduser().is_file():
        print(f"agent-tui: {named}: no such session file", file=sys.stderr)
        return 1
    if sys.stdout.isatty():
        # Textual sizes itself with shutil.get_terminal_size(), which prefers an exported
        # COLUMNS/LINES to the terminal's real size and would freeze the layout at it.
        os.environ.pop("COLUMNS", None)
        os.environ.pop("LINES", None)
    from agent_tui.tui import signals
    from agent_tui.tui.terminal_keys import key_driver

    try:
        config = config_from_args(args)
    except PromptFileError as e:
        print(str(e), file=sys.stderr)
        return 1
    app = create_app(config)
    # a hangup ends the app rather than crashing it (signals.TerminalDriver); ESC CR is Alt+Enter
    app.driver_class = key_driver(app.driver_class)
    signals.install(app)
    asyncio.run(_run(app))
    status = exit_status(app)
    if signals.hung_up():
        # the terminal is gone and the session closed (its lock released): nothing is left to do,
        # and the interpreter's finalization alone takes 0.6-1.3 s with the SDKs loaded
        os._exit(status)
    return status


async def _run(app: AgentTuiApp) -> None:
    """``app.run()``, on a loop whose default executor's threads nobody waits for at exit."""
    asyncio.get_running_loop().set_default_executor(DaemonThreads())
    await app.run_async()


def exit_status(app: AgentTuiApp) -> int:
    """The process's exit status once ``app`` has stopped: 0, or 1 after a crash (its one line
    printed on stderr; the traceback is in the file it names)."""
    if app.crash_message is not None:
        print(app.crash_message, file=sys.stderr)
    return app.return_code or (1 if app.crash_message else 0)


def serve(argv: list[str]) -> int:
    """``agent-tui serve [--host H] [--port P] [ARGS...]``: the same app in a browser (textual-serve),
    for this machine only unless ``--host`` says otherwise, behind an Origin check and a secret token
    (``agent_tui.tui.serve``)."""
    parser = argparse.ArgumentParser(prog="agent-tui serve", description="Run agent-tui in a browser.")
    parser.add_argument("--host", default="localhost", help="the address to listen on (default: localhost)")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("app_args", nargs=argparse.REMAINDER, help="arguments for agent-tui itself")
    args = parser.parse_args(argv)
    if args.app_args[:1] == ["--"]:
        args.app_args = args.app_args[1:]
    try:
        from agent_tui.tui.serve import serve as serve_guarded
    except ImportError:
        print("agent-tui: serve needs textual-serve: pip install 'agent-tui[serve]'", file=sys.stderr)
        return 1
    command = " ".join(shlex.quote(part) for part in [sys.executable, "-m", "agent_tui", *args.app_args])
    os.environ.setdefault("AGENT_TUI_SERVED", "1")
    return serve_guarded(command, args.host, args.port)
