"""An image on the system clipboard, for Ctrl+V (pi's ``app.clipboard.pasteImage``).

Asks the clipboard tools the platform has: ``wl-paste`` (Wayland), ``xclip`` (X11), ``pngpaste``
or ``osascript`` (macOS). The image is saved to a private temp file the composer attaches. When
no tool is installed, or the clipboard holds no image, :class:`ClipboardError` says which.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from agent_tui.agent.tools.images import detect_image_mime

TIMEOUT = 5.0
_EXT = {
    "image/png": ".png",
    "image/jpeg": ".jpg",
    "image/gif": ".gif",
    "image/webp": ".webp",
    "image/bmp": ".bmp",
}


class ClipboardError(Exception):
    """No image could be read from the clipboard; the message says what is missing."""


def _run(argv: list[str]) -> bytes | None:
    try:
        done = subprocess.run(argv, capture_output=True, timeout=TIMEOUT, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 and done.stdout else None


def _commands() -> list[list[str]]:
    found: list[list[str]] = []
    if os.environ.get("WAYLAND_DISPLAY") and shutil.which("wl-paste"):
        found.append(["wl-paste", "--no-newline", "--type", "image/png"])
    if shutil.which("xclip"):
        found.append(["xclip", "-selection", "clipboard", "-target", "image/png", "-out"])
    if sys.platform == "darwin" and shutil.which("pngpaste"):
        found.append(["pngpaste", "-"])
    return found


def clipboard_image(folder: Path | None = None) -> Path:
    """Save the clipboard's image to a new 0600 file and return its path."""
    commands = _commands()
    data: bytes | None = None
    for argv in commands:
        data = _run(argv)
        if data:
            break
    if data is None and sys.platform == "darwin" and shutil.which("osascript"):
        commands.append(["osascript"])
        data = _osascript_png()
    if not commands:
        raise ClipboardError(
            "no clipboard tool for images: install wl-clipboard (Wayland) or xclip (X11), or paste the image's path"
        )
    mime = detect_image_mime(data[:4100]) if data else None
    if data is None or mime is None:
        raise ClipboardError("the clipboard holds no image")
    fd, name = tempfile.mkstemp(prefix="agent-tui-clipboard-", suffix=_EXT.get(mime, ".png"), dir=folder)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    return Path(name)


def _osascript_png() -> bytes | None:
    fd, name = tempfile.mkstemp(suffix=".png")
    os.close(fd)
    script = (
        f'set f to open for access POSIX file "{name}" with write permission\n'
        "write (the clipboard as «class PNGf») to f\nclose access f"
    )
    try:
        if _run(["osascript", "-e", script]) is None and not os.path.getsize(name):
            return None
        with open(name, "rb") as f:
            return f.read() or None
    finally:
        os.unlink(name)


__all__ = ["ClipboardError", "clipboard_image"]
