"""What a sent prompt carries besides its text: ``@path`` files and pasted images (pi's file processor).

Each ``@path`` (or ``@"path with spaces"``) naming a readable file inside the project adds a text
block ``<file name="ABSOLUTE">\\nCONTENT\\n</file>`` after the typed text, as pi's
``processFileArguments`` writes it, the content cut like ``read`` (2,000 lines / 50 KB, with a note
saying how to read on). An image file adds ``<file name="...">`` with pi's resize notes and an
``image`` block, resized as ``read`` resizes (:mod:`agent_tui.agent.tools.images`). Images pasted
or dropped into the composer (a path, or the clipboard) come as ``images`` and may live anywhere.

A mention that names nothing, a folder, a file outside the project, a binary or unreadable file, a
FIFO, a device or a socket (refused at once, as ``read`` refuses them), or an image file over 64 MB
is left as text and reported in one notice line each; the typed text is never changed. A text file
is read in bounded pieces (8 MB at most, what is kept 50 KB), whatever its size or its lines'.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from agent_tui.agent.tools.base import ToolError
from agent_tui.agent.tools.images import (
    IMAGE_TYPE_SNIFF_BYTES,
    MAX_IMAGE_FILE_BYTES,
    ImageDecodeError,
    detect_image_mime,
    image_file_too_large,
    process_image,
)
from agent_tui.agent.tools.read import NotRegularFile, open_regular, read_lines
from agent_tui.agent.tools.truncate import DEFAULT_MAX_BYTES, format_size, truncate_head
from agent_tui.projection.image_tokens import ImageRule, anthropic_tokens, image_tokens
from agent_tui.projection.tokens import estimate_text
from agent_tui.store.record import JSONObject

#: ``@path`` at the start or after whitespace; ``@"a path"`` for spaces.
MENTION = re.compile(r'(?<!\S)@(?:"([^"\n]+)"|(\S+))')
_TRAILING = ".,;:!?)]}'\""
#: Of a text file, no more than this is read to count its lines (what is kept is 50 KB anyway).
_READ_LIMIT = 8 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Attachment:
    """One attached file, for the chat's line: its name as typed, kind, size and estimated tokens."""

    name: str
    kind: str  # "file" or "image"
    tokens: int
    detail: str = ""  # "cut to 2000 lines", "800x600 (resized)"...


@dataclass(slots=True)
class Composed:
    """The user message's content blocks, what was attached, and what could not be."""

    content: list[JSONObject]
    attachments: list[Attachment] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    #: how the API the message goes to prices an image (``tokens.image_rule``)
    images: ImageRule = anthropic_tokens


def mentions(text: str) -> list[str]:
    """The paths mentioned with ``@`` in ``text``, in order."""
    return [m.group(1) or m.group(2) for m in MENTION.finditer(text)]


def compose(
    text: str,
    cwd: str | Path,
    images: list[Path] | None = None,
    *,
    files: list[Path] | None = None,
    image_rule: ImageRule = anthropic_tokens,
) -> Composed:
    """The content of the user message for ``text`` typed in a session working in ``cwd``;
    ``files`` (``-p @FILE`` arguments) are attached wherever they are, as ``images`` are; an
    image's tokens are counted by ``image_rule`` (the API the message goes to)."""
    root = Path(cwd)
    try:
        real_root = root.resolve()
    except OSError:
        real_root = root
    out = Composed([{"type": "text", "text": text}], images=image_rule)
    done: set[Path] = set()
    for raw in mentions(text):
        found = _find(raw, root)
        if found is None:
            if not raw.strip(_TRAILING):
                continue
            out.notices.append(f"@{raw}: no such file (sent as text)")
            continue
        path, typed = found
        real = path.resolve()
        if real in done:
            continue
        if real != real_root and real_root not in real.parents:
            out.notices.append(f"@{typed}: outside the project ({real_root}), not attached")
            continue
        if real.is_dir():
            continue  # a folder stays a path the model can list
        done.add(real)
        _attach(out, real, typed)
    for image in images or []:
        real = image.resolve()
        if real in done:
            continue
        done.add(real)
        _attach(out, real, image.name, must_be_image=True)
    for named in files or []:
        real = named.resolve()
        if real in done or real.is_dir():
            continue
        done.add(real)
        _attach(out, real, str(named))
    return out


def _find(raw: str, root: Path) -> tuple[Path, str] | None:
    """The file ``raw`` names (as typed, then without trailing punctuation), and that spelling."""
    for candidate in (raw, raw.rstrip(_TRAILING)):
        if not candidate:
            continue
        path = Path(os.path.expanduser(candidate))
        if not path.is_absolute():
            path = root / path
        if path.exists():
            return path, candidate
    return None


def _attach(out: Composed, path: Path, typed: str, *, must_be_image: bool = False) -> None:
    # read's checks: a FIFO, a device or a socket is refused at once (never waited on, never read
    # without end); an image is refused by its size before it is read; text is read in bounded pieces
    try:
        fd, size = open_regular(path)
    except NotRegularFile as e:
        out.notices.append(f"@{typed}: {e.kind}, not a regular file: not attached")
        return
    except ToolError as e:  # "Could not read PATH: Permission denied"
        out.notices.append(f"@{typed}: cannot be read ({str(e).rsplit(': ', 1)[-1]}), not attached")
        return
    try:
        with os.fdopen(fd, "rb") as f:
            head = f.read(IMAGE_TYPE_SNIFF_BYTES)
            mime = detect_image_mime(head)
            if mime is None and must_be_image:
                out.notices.append(f"{typed}: not an image (png, jpeg, gif, webp, bmp), not attached")
                return
            if mime is not None:
                too_large = image_file_too_large(size)
                if too_large is not None:
                    out.notices.append(f"{typed}: {too_large}")
                    return
                f.seek(0)
                data = f.read(MAX_IMAGE_FILE_BYTES + 1)
                if len(data) > MAX_IMAGE_FILE_BYTES:  # it grew meanwhile
                    out.notices.append(f"{typed}: {image_file_too_large(len(data))}")
                    return
                _attach_image(out, path, typed, data, mime)
                return
            if b"\0" in head:
                out.notices.append(f"@{typed}: a binary file, not attached")
                return
            f.seek(0)
            lines = read_lines(f, _READ_LIMIT)
            more = f.read(1) != b""  # the limit stopped the read before the end
    except OSError as e:
        out.notices.append(f"@{typed}: cannot be read ({e.strerror or e}), not attached")
        return
    if lines.stored:
        lines.stored[0] = lines.stored[0].removeprefix("\ufeff")
    cut = truncate_head("\n".join(lines.stored))
    body = cut.content
    detail = ""
    if cut.first_line_exceeds_limit:
        body = (
            f"[Line 1 exceeds the {format_size(DEFAULT_MAX_BYTES)} limit. "
            f"Use bash: sed -n '1p' {path} | head -c {DEFAULT_MAX_BYTES}]"
        )
        detail = "first line too long"
    elif cut.truncated or more:
        shown = cut.output_lines
        body += (
            f"\n\n[Showing lines 1-{shown} of {'more than ' if more else ''}{lines.total} "
            f"({format_size(DEFAULT_MAX_BYTES)} limit). Use the read tool with offset={shown + 1} to continue.]"
        )
        detail = f"cut to {shown} lines"
    block = f'<file name="{path}">\n{body}\n</file>'
    out.content.append({"type": "text", "text": block})
    out.attachments.append(Attachment(typed, "file", estimate_text(block), detail))


def _attach_image(out: Composed, path: Path, typed: str, data: bytes, mime: str) -> None:
    try:
        processed = process_image(data, mime)
    except ImageDecodeError:
        out.notices.append(f"{typed}: the image is corrupt or truncated, not attached")
        return
    if not processed.ok:
        out.notices.append(f"{typed}: {processed.message}")
        return
    hints = "\n".join(processed.hints)
    out.content.append({"type": "text", "text": f'<file name="{path}">{hints}</file>'})
    image = {"type": "image", "data": processed.data, "mimeType": processed.mime_type}
    out.content.append(image)
    detail = processed.mime_type.removeprefix("image/") + _size(processed.data)
    if processed.hints:
        detail += ", resized"
    out.attachments.append(Attachment(typed, "image", image_tokens(image, out.images), detail))


def _size(data: str) -> str:
    """ " 800x600": the attached image's size in pixels (empty when it cannot be read)."""
    size = image_size(data)
    return f" {size[0]}x{size[1]}" if size else ""


def image_size(data: object) -> tuple[int, int] | None:
    """The width and height of a base64 image block's ``data`` (None when it cannot be read)."""
    import base64
    import binascii
    import io

    from PIL import Image

    if not isinstance(data, str):
        return None
    try:
        with Image.open(io.BytesIO(base64.b64decode(data))) as image:
            return image.width, image.height
    except (OSError, ValueError, binascii.Error, Image.DecompressionBombError):
        return None


def image_line(block: JSONObject, name: str | None, tokens: int) -> str:
    """One chat line for an ``image`` block: "[image] shot.png · PNG 1280x720 · ~1,229 tokens".

    pi's block has no name, so ``name`` comes from the ``<file name="...">`` block before it; the
    size is read from the data, the format from ``mimeType``.
    """
    mime = block.get("mimeType")
    fmt = mime.removeprefix("image/").upper()[:20] if isinstance(mime, str) and mime else "image"
    size = image_size(block.get("data"))
    facts = f"{fmt} {size[0]}x{size[1]}" if size else fmt
    return "[image] " + " · ".join(p for p in (name, facts, f"~{tokens:,} tokens") if p)


def attachment_line(attachments: list[Attachment]) -> str:
    """One line for the chat: "attached src/a.py (1,234 tokens) · shot.png (image png, ~1,229 tokens)"."""
    parts = []
    for a in attachments:
        if a.kind == "image":
            parts.append(f"{a.name} (image {a.detail}, ~{a.tokens:,} tokens)")
        else:
            parts.append(f"{a.name} ({a.tokens:,} tokens{', ' + a.detail if a.detail else ''})")
    return "attached " + " · ".join(parts) if parts else ""


__all__ = [
    "MENTION",
    "Attachment",
    "Composed",
    "attachment_line",
    "compose",
    "image_line",
    "image_size",
    "mentions",
]
