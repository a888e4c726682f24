"""``@path`` attachments get the read tool's checks: a FIFO or a device is refused at once in one
notice line (``@fifo`` froze the app for over 30 s), an image file is refused by its size before it
is read (a 300 MB sparse file with a png header was read whole: 712 MB), and a large text file is cut
like ``read`` with bounded memory."""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest

from agent_tui.agent.attachments import Composed, compose
from agent_tui.agent.tools.base import ToolContext
from agent_tui.agent.tools.images import MAX_IMAGE_FILE_BYTES
from agent_tui.agent.tools.read import ReadTool

pytestmark = pytest.mark.timeout(60)

#: a png signature and the start of an IHDR chunk: enough for the sniffer to call it a png
PNG_HEAD = b"\x89PNG\r\n\x1a\n" + (13).to_bytes(4, "big") + b"IHDR" + b"\0\0\x10\0\0\0\x10\0\x08\x02\0\0\0"


def compose_soon(text: str, cwd: Path, images: list[Path] | None = None, *, seconds: float = 5) -> Composed:
    """``compose`` in a thread, which must answer within ``seconds`` (a FIFO's open used to block)."""
    pool = concurrent.futures.ThreadPoolExecutor(1)
    try:
        return pool.submit(compose, text, cwd, images).result(timeout=seconds)
    finally:
        pool.shutdown(wait=False)


def peak_of(work: Callable[[], object]) -> tuple[object, int]:
    tracemalloc.start()
    try:
        result = work()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, peak


def test_a_fifo_is_refused_in_one_line_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    try:
        out = compose_soon("what is @pipe", tmp_path)
    except concurrent.futures.TimeoutError:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))  # let the blocked open go
        raise AssertionError("@pipe blocked the compose") from None
    assert out.content == [{"type": "text", "text": "what is @pipe"}]  # the typed text, unchanged
    assert out.notices == ["@pipe: a FIFO (named pipe), not a regular file: not attached"]
    # pasted as an image: the same refusal
    out = compose_soon("look", tmp_path, images=[fifo])
    assert len(out.content) == 1 and out.notices == [
        "@pipe: a FIFO (named pipe), not a regular file: not attached"
    ]


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_a_device_that_never_ends_is_refused_as_a_device(tmp_path: Path) -> None:
    out = compose_soon("@zero @null", Path("/dev"))
    assert len(out.content) == 1
    assert out.notices == [
        "@zero: a character device, not a regular file: not attached",
        "@null: a character device, not a regular file: not attached",
    ]
    out = compose_soon("x", tmp_path, images=[Path("/dev/zero")])
    assert out.notices == ["@zero: a character device, not a regular file: not attached"]


def test_a_huge_file_with_a_png_header_is_refused_before_it_is_read(tmp_path: Path) -> None:
    big = tmp_path / "shot.png"
    with big.open("wb") as f:
        f.write(PNG_HEAD)
        f.truncate(300 * 1024 * 1024)  # sparse: no disk
    out, peak = peak_of(lambda: compose("@shot.png", tmp_path))
    assert isinstance(out, Composed)
    assert peak < 4 * 1024 * 1024, f"peak {peak:,} bytes"
    assert len(out.content) == 1
    assert out.notices == [
        "shot.png: [Image omitted: the file is 300.0MB, over the 64.0MB limit for images.]"
    ]
    # read: the same cap, the same note
    ctx = ToolContext(str(tmp_path), asyncio.Event())
    result, peak = peak_of(lambda: asyncio.run(ReadTool().execute({"path": "shot.png"}, ctx)))
    assert peak < 4 * 1024 * 1024, f"peak {peak:,} bytes"
    assert result.content[0]["text"] == (  # type: ignore[attr-defined]
        "Read image file [image/png]\n[Image omitted: the file is 300.0MB, over the 64.0MB limit for images.]"
    )


def test_an_image_just_under_the_cap_is_still_decoded(tmp_path: Path) -> None:
    from tests.support.images import png

    shot = png(tmp_path / "shot.png")
    with shot.open("ab") as f:
        f.truncate(MAX_IMAGE_FILE_BYTES)  # trailing bytes after IEND: Pillow ignores them
    out = compose("@shot.png", tmp_path)
    assert out.notices == [] and [b["type"] for b in out.content] == ["text", "text", "image"]


def test_a_large_text_file_is_cut_like_read_with_bounded_memory(tmp_path: Path) -> None:
    big = tmp_path / "big.log"
    line = b"a log line of some length, as logs have them, with a number: %08d\n"
    with big.open("wb") as f:
        for start in range(0, 150_000, 10_000):
            f.write(b"".join(line % i for i in range(start, start + 10_000)))  # 10 MB: 2.5 times the bound
    out, peak = peak_of(lambda: compose("@big.log", tmp_path))
    assert isinstance(out, Composed)
    assert peak < 4 * 1024 * 1024, f"peak {peak:,} bytes"
    block = out.content[1]["text"]
    assert isinstance(block, str)
    body = block.removeprefix(f'<file name="{big}">\n').removesuffix("\n</file>")
    shown, note = body.split("\n\n[Showing lines ")
    # what read shows of it, line for line
    ctx = ToolContext(str(tmp_path), asyncio.Event())
    read = asyncio.run(ReadTool().execute({"path": "big.log"}, ctx)).content[0]["text"]
    assert shown == read.split("\n\n[Showing lines ")[0]
    assert note.startswith("1-") and "of more than " in note and "Use the read tool with offset=" in note
    assert out.attachments[0].detail.startswith("cut to ")


def test_one_line_without_end_costs_what_is_shown_of_it(tmp_path: Path) -> None:
    (tmp_path / "one.txt").write_bytes(b"x" * (20 * 1024 * 1024))
    out, peak = peak_of(lambda: compose("@one.txt", tmp_path))
    assert isinstance(out, Composed)
    assert peak < 4 * 1024 * 1024, f"peak {peak:,} bytes"
    assert "[Line 1 exceeds the 50.0KB limit." in out.content[1]["text"]
    assert out.attachments[0].detail == "first line too long"
