"""What ``-p`` sends, as pi builds its first message: piped stdin (read when stdin is not a
terminal, pi's rule) before the prompt, and ``@FILE`` arguments attached as pi's file processor
attaches them (a text file as ``<file name="...">`` text, an image as an image block: the app's
``@`` mentions, :mod:`agent_tui.agent.attachments`)."""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from agent_tui.store.record import JSONObject


def piped_stdin(stream: TextIO | None) -> str | None:
    """stdin's text when it is not a terminal (read to its end, trimmed); None when it is one, or
    gives nothing."""
    if stream is None:
        return None
    try:
        if stream.isatty():
            return None
        text = stream.read()
    except (OSError, ValueError):  # closed, or not readable
        return None
    return text.strip() or None


def with_stdin(prompt: str, stdin_text: str | None) -> str:
    """pi's order: what was piped, then the prompt."""
    if stdin_text is None:
        return prompt
    return f"{stdin_text}\n\n{prompt}" if prompt.strip() else stdin_text


def missing_file(files: list[str], cwd: str) -> str | None:
    """The first ``@FILE`` that names no file (one line), or None."""
    for name in files:
        path = Path(name).expanduser()
        path = path if path.is_absolute() else Path(cwd) / path
        if not path.exists():
            return f"@{name}: no such file"
        if path.is_dir():
            return f"@{name}: a folder, not a file"
    return None


def attach_files(prompt: str, files: list[str], cwd: str) -> tuple[str | list[JSONObject], list[str]]:
    """The user message's content: the prompt's ``@path`` mentions attached as the app attaches
    them (files inside the project), then each ``@FILE`` argument (wherever it is: the user named
    it); ``prompt`` itself when nothing was attached. And the notices (what could not be)."""
    if not files and "@" not in prompt:
        return prompt, []
    from agent_tui.agent.attachments import compose

    paths = [Path(cwd) / Path(f).expanduser() for f in files]
    composed = compose(prompt, cwd, files=paths)
    content = composed.content
    if not composed.attachments:
        return prompt, composed.notices
    if not prompt:  # only files (and what was piped): no empty text block first
        content = [b for b in content if not (b.get("type") == "text" and b.get("text") == "")]
    return content, composed.notices


__all__ = ["attach_files", "missing_file", "piped_stdin", "with_stdin"]
