"""read{path, offset?, limit?}: a text file (or an image), as pi's read tool."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from agent_tui.agent.tools.base import (
    JSONObject,
    Tool,
    ToolContext,
    ToolError,
    ToolResult,
    in_thread,
    number_arg,
    resolve_read_path,
)
from agent_tui.agent.tools.images import (
    IMAGE_TYPE_SNIFF_BYTES,
    ImageDecodeError,
    ResizeOptions,
    detect_image_mime,
    image_file_too_large,
    process_image,
)
from agent_tui.agent.tools.truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, format_size, truncate_head

MAX_READ_BYTES = 1024 * 1024 * 1024  # read never reads more of one file than this
GROWTH_ALLOWANCE = 1024 * 1024  # past the size the file had when it was opened
LINE_PIECE = 64 * 1024  # a line is read this much at a time (its memory is bounded, not its length)


class NotRegularFile(ToolError):
    """A FIFO, a device, a socket: never read. ``kind`` says which ("a FIFO (named pipe)")."""

    def __init__(self, path: Path, kind: str) -> None:
        super().__init__(f"Not a regular file: {path} is {kind}; read only reads files")
        self.kind = kind


def open_regular(path: Path) -> tuple[int, int]:
    """(a descriptor, the size) of the regular file at ``path``; one ToolError line for anything else.

    Opened with ``O_NONBLOCK`` so a FIFO cannot block the open, then checked with ``fstat``:
    devices (``/dev/zero`` never ends), FIFOs and sockets (they may never answer) are refused.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except IsADirectoryError:
        raise ToolError(f"EISDIR: illegal operation on a directory, read '{path}'") from None
    except OSError as e:
        raise ToolError(f"Could not read {path}: {e.strerror}") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise NotRegularFile(path, _kind(st.st_mode))
    os.set_blocking(fd, True)
    return fd, st.st_size


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


class _Capped:
    """A binary file read up to ``cap`` bytes."""

    def __init__(self, f: BinaryIO, cap: int) -> None:
        self.f, self.left = f, cap

    def read(self) -> bytes:
        data = self.f.read(self.left)
        self.left -= len(data)
        return data

    def lines(self, keep: int, check: Callable[[], None] = lambda: None) -> Iterator[tuple[bytes, int, bool]]:
        """Each line as (its first ``keep`` bytes, its length without the newline, whether a newline
        ended it). A line is read in pieces of :data:`LINE_PIECE`, so however long it is (a 3 GB file
        without a newline), it costs ``keep`` bytes of memory, not its length; ``check`` (the
        abort's) is called every 16 pieces of a line."""
        head = b""
        length = 0
        pieces = 0
        while self.left > 0:
            piece = self.f.readline(min(self.left, LINE_PIECE))
            if not piece:
                break
            pieces += 1
            if pieces % 16 == 0:
                check()
            self.left -= len(piece)
            ended = piece.endswith(b"\n")
            body = piece[:-1] if ended else piece
            if len(head) < keep:
                head += body[: keep - len(head)]
            length += len(body)
            if ended:
                yield head, length, True
                head, length, pieces = b"", 0, 0
        if length or head:
            yield head, length, False


@dataclass(slots=True)
class TextLines:
    """What a read keeps of a text file's lines ``start`` to ``end``: the lines up to one past the
    caps (2,000 lines / 50 KB, each line cut to 50 KB + 1 byte), how many lines the file has (as
    far as ``cap`` let it be read), and how long the first kept line was."""

    stored: list[str]
    total: int
    first_line_bytes: int


def read_lines(
    f: BinaryIO, cap: int, start: int = 0, end: int | None = None, check: Callable[[], None] = lambda: None
) -> TextLines:
    """The lines of ``f`` (read from where it stands, at most ``cap`` bytes) as :class:`TextLines`:
    its memory is what is kept, never the file's size or a line's length; ``check`` (the abort's)
    is called as it goes."""
    stored: list[str] = []
    stored_bytes = 0
    past_caps = False
    first_line_bytes = 0
    line_no = 0
    selected = 0
    ends_with_newline = True  # an empty file is one empty line, as JavaScript's split sees it

    keep = DEFAULT_MAX_BYTES + 1  # of a line, no more is ever shown

    def take(head: bytes, length: int) -> None:
        nonlocal stored_bytes, past_caps, first_line_bytes, selected
        if selected == 0:
            first_line_bytes = length
        if not past_caps:
            if len(stored) > DEFAULT_MAX_LINES or stored_bytes > DEFAULT_MAX_BYTES:
                past_caps = True  # one line past the caps is kept so truncation is detected
            stored.append(head.decode("utf-8", "replace"))
            stored_bytes += min(length, keep) + 1
        selected += 1

    for number, (head, length, ended) in enumerate(_Capped(f, cap).lines(keep, check)):
        if number % 4096 == 0:
            check()
        ends_with_newline = ended
        if line_no >= start and (end is None or line_no < end):
            take(head, length)
        line_no += 1
    if ends_with_newline:
        if line_no >= start and (end is None or line_no < end):
            take(b"", 0)
        line_no += 1
    return TextLines(stored, line_no, first_line_bytes)


class ReadTool(Tool):
    name = "read"
    snippet = "Read file contents"
    guidelines = ("Use read to examine files instead of cat or sed.",)
    description = (
        "Read the contents of a file. Supports text files and images (jpg, png, gif, webp, bmp). Images are sent "
        f"as attachments. For text files, output is truncated to {DEFAULT_MAX_LINES} lines or "
        f"{DEFAULT_MAX_BYTES // 1024}KB (whichever is hit first). Use offset/limit for large files. When you "
        "need the full file, continue with offset until complete."
    )
    parameters: JSONObject = {  # noqa: RUF012
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Path to the file to read (relative or absolute)"},
            "offset": {"type": "number", "description": "Line number to start reading from (1-indexed)"},
            "limit": {"type": "number", "description": "Maximum number of lines to read"},
        },
        "required": ["path"],
    }

    def __init__(
        self, *, auto_resize_images: bool = True, resize_options: ResizeOptions | None = None
    ) -> None:
        self.auto_resize_images = auto_resize_images  # pi's images.autoResize setting, on by default
        self.resize_options = resize_options

    async def execute(self, args: JSONObject, ctx: ToolContext) -> ToolResult:
        return await in_thread(self._read, args, ctx)

    def _read(self, args: JSONObject, ctx: ToolContext) -> ToolResult:
        path = str(args["path"])
        offset = number_arg(args, "offset")
        limit = number_arg(args, "limit")
        absolute = resolve_read_path(path, ctx.cwd)
        if not absolute.exists():
            raise ToolError(f"ENOENT: no such file or directory, access '{absolute}'")
        if absolute.is_dir():
            raise ToolError(f"EISDIR: illegal operation on a directory, read '{absolute}'")
        if not os.access(absolute, os.R_OK):
            raise ToolError(f"EACCES: permission denied, access '{absolute}'")
        fd, size = open_regular(absolute)
        # What was there when it was opened (a file growing meanwhile, /proc's size-0 files: a little more).
        cap = min(size + GROWTH_ALLOWANCE, MAX_READ_BYTES)
        with os.fdopen(fd, "rb") as f:
            head = f.read(IMAGE_TYPE_SNIFF_BYTES)
            mime = detect_image_mime(head)
            f.seek(0)
            if mime is not None:
                too_large = image_file_too_large(size)
                if too_large is not None:  # refused before a byte of it is decoded
                    return ToolResult.text(f"Read image file [{mime}]\n{too_large}")
                return self._image(absolute, _Capped(f, cap).read(), mime, ctx)
            return self._text(f, cap, path, offset, limit, ctx)

    def _image(self, absolute: Path, data: bytes, mime: str, ctx: ToolContext) -> ToolResult:
        """pi's image read: converted, oriented and resized to fit, with pi's notes for the model."""
        try:
            processed = process_image(
                data,
                mime,
                auto_resize=self.auto_resize_images,
                resize_options=self.resize_options,
                check=ctx.check,
            )
        except ImageDecodeError as e:
            detail = " ".join(str(e).split())  # Pillow's words, on one line
            raise ToolError(
                f"Could not read image {absolute} [{mime}]: the image data is corrupt or truncated ({detail})"
            ) from None
        if not processed.ok:
            return ToolResult.text(f"Read image file [{mime}]\n{processed.message}")
        note = "\n".join([f"Read image file [{processed.mime_type}]", *processed.hints])
        return ToolResult(
            [
                {"type": "text", "text": note},
                {"type": "image", "data": processed.data, "mimeType": processed.mime_type},
            ]
        )

    def _text(
        self, f: BinaryIO, cap: int, path: str, offset: int | None, limit: int | None, ctx: ToolContext
    ) -> ToolResult:
        start = max(0, offset - 1) if offset else 0
        end = start + limit if limit is not None and limit >= 0 else None
        lines = read_lines(f, cap, start, end, ctx.check)
        stored, total, first_line_bytes = lines.stored, lines.total, lines.first_line_bytes
        if start >= total:
            raise ToolError(f"Offset {offset} is beyond end of file ({total} lines total)")
        truncation = truncate_head("\n".join(stored))
        shown_from = start + 1
        details: JSONObject | None = None
        if truncation.first_line_exceeds_limit:
            text = (
                f"[Line {shown_from} is {format_size(first_line_bytes)}, exceeds {format_size(DEFAULT_MAX_BYTES)} "
                f"limit. Use bash: sed -n '{shown_from}p' {path} | head -c {DEFAULT_MAX_BYTES}]"
            )
            details = {"truncation": truncation.to_json()}
        elif truncation.truncated:
            last = shown_from + truncation.output_lines - 1
            text = truncation.content
            if truncation.truncated_by == "lines":
                text += (
                    f"\n\n[Showing lines {shown_from}-{last} of {total}. Use offset={last + 1} to continue.]"
                )
            else:
                text += (
                    f"\n\n[Showing lines {shown_from}-{last} of {total} ({format_size(DEFAULT_MAX_BYTES)} limit). "
                    f"Use offset={last + 1} to continue.]"
                )
            details = {"truncation": truncation.to_json()}
        elif end is not None and min(end, total) < total:
            remaining = total - min(end, total)
            text = (
                f"{truncation.content}\n\n[{remaining} more lines in file. Use offset={end + 1} to continue.]"
            )
        else:
            text = truncation.content
        return ToolResult.text(text, details)
