"""``@path`` mentions and pasted images become content blocks of the user message, as pi's file processor."""

from __future__ import annotations

from pathlib import Path

from agent_tui.agent.attachments import attachment_line, compose, mentions
from tests.support.images import png


def test_mentions() -> None:
    assert mentions('see @src/a.py and @"my file.txt", not me@example.com') == ["src/a.py", "my file.txt"]


def test_a_text_file_is_attached_after_the_typed_text(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("\ufeffprint('hi')\n")
    out = compose("explain @src/a.py.", tmp_path)
    assert out.notices == []
    assert out.content[0] == {"type": "text", "text": "explain @src/a.py."}
    assert out.content[1]["text"] == f"<file name=\"{tmp_path / 'src' / 'a.py'}\">\nprint('hi')\n\n</file>"
    assert [a.name for a in out.attachments] == ["src/a.py"]
    assert attachment_line(out.attachments).startswith("attached src/a.py (")


def test_a_long_file_is_cut_like_read(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("".join(f"line {i}\n" for i in range(5000)))
    out = compose("@big.txt", tmp_path)
    block = out.content[1]["text"]
    assert "line 1999" in block and "line 2000\n" not in block
    assert "Use the read tool with offset=2001 to continue." in block
    assert out.attachments[0].detail == "cut to 2000 lines"


def test_missing_outside_binary_and_folders_stay_text_with_one_notice_each(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (tmp_path / "secret.txt").write_text("outside")
    (project / "blob.bin").write_bytes(b"\x00\x01\x02")
    (project / "pkg").mkdir()
    (project / "link.txt").symlink_to(tmp_path / "secret.txt")
    out = compose("@nope.py @../secret.txt @link.txt @blob.bin @pkg @", project)
    assert len(out.content) == 1
    assert len(out.notices) == 4, out.notices
    assert "no such file" in out.notices[0]
    assert "outside the project" in out.notices[1] and "outside the project" in out.notices[2]
    assert "binary" in out.notices[3]
    assert "outside" not in str(out.content)


def test_images_become_image_blocks_resized_as_read_does(tmp_path: Path) -> None:
    png(tmp_path / "shot.png", (3000, 1000))
    out = compose("what is this @shot.png", tmp_path)
    assert [b["type"] for b in out.content] == ["text", "text", "image"]
    assert out.content[2]["mimeType"] in ("image/png", "image/jpeg")
    assert "resized" in out.attachments[0].detail and "2000x667" in out.attachments[0].detail
    assert "3000x1000" in out.content[1]["text"]  # pi's note about the original size


def test_pasted_images_may_live_anywhere(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    shot = png(tmp_path / "Screenshot 1.png")
    out = compose("[image #1 Screenshot 1.png] look", project, images=[shot])
    assert [b["type"] for b in out.content] == ["text", "text", "image"]
    (tmp_path / "notes.txt").write_text("x")
    out = compose("x", project, images=[tmp_path / "notes.txt"])
    assert len(out.content) == 1 and "not an image" in out.notices[0]
