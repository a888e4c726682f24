"""Edit the composer's text in ``$VISUAL`` / ``$EDITOR`` (pi's ``app.editor.external``).

The text goes to a private temp file (0600, ``.md`` so editors highlight it), the editor runs
on the terminal while the app is suspended, and what the file holds afterwards comes back (one
trailing newline dropped, as editors add it). An editor that fails or is not found leaves the
text as it was and says why.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Mapping

FALLBACKS = ("nano", "vi")


class EditorError(Exception):
    """The editor could not run or failed; the message says which and why."""


def editor_command(env: Mapping[str, str] | None = None) -> list[str]:
    """``$VISUAL``, else ``$EDITOR``, else nano or vi when installed (as pi)."""
    env = os.environ if env is None else env
    for name in ("VISUAL", "EDITOR"):
        value = env.get(name, "").strip()
        if value:
            return shlex.split(value)
    for fallback in FALLBACKS:
        found = shutil.which(fallback)
        if found:
            return [found]
    raise EditorError("no editor: set $VISUAL or $EDITOR")


def edit_text(text: str, command: list[str]) -> str:
    """Run ``command FILE`` on a temp file holding ``text``; return the file's text afterwards."""
    fd, path = tempfile.mkstemp(prefix="agent-tui-prompt-", suffix=".md")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        try:
            result = subprocess.run([*command, path], check=False)
        except OSError as e:
            raise EditorError(f"{command[0]}: {e.strerror or e}") from None
        if result.returncode != 0:
            raise EditorError(
                f"{shlex.join(command)} exited with code {result.returncode}; the text is unchanged"
            )
        with open(path, encoding="utf-8", errors="replace") as f:
            edited = f.read()
    finally:
        os.unlink(path)
    return edited[:-1] if edited.endswith("\n") else edited


__all__ = ["EditorError", "edit_text", "editor_command"]
