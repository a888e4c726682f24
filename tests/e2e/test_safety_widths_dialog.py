"""The permission question itself, drawn by the real program in tmux at 80x24, with a command made
of every class of character (ASCII, Latin, CJK, U+3164, U+FFA0, ZWJ and VS16 emoji, zero-width,
tag characters, combining marks, and the rest of ``ESCAPED_CLASSES``): every row of the dialog is
exactly as wide as Rich laid it out. tmux itself measures each row it drew (the cursor after
printing it, ``ESC[6n``, as :mod:`tests.support.cell_probe` does): its right border is at the
same cell on every row as on its top border. A character tmux drew at another width than Rich measured (U+3164: Rich 0,
tmux 2) would push the border of its row out or pull it in; here each such character is an
escape, the rest are themselves, and the command's end is on screen. (Issue 24, "How it is
checked": the width property in a real terminal.)"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.e2e.test_safety_widths import CLUSTERS, terminal_widths
from tests.e2e.test_tui_e2e import app_command
from tests.support.fake_model_server import FakeModelServer, call, openai_stream
from tests.support.tmux import Tmux
from tests.unit.test_terminal_widths import ESCAPED_CLASSES, KEPT_CLASSES

pytestmark = [pytest.mark.timeout(240), pytest.mark.slow]

END = "END-OF-COMMAND"
BORDERS = "│╮╯"


def command() -> str:
    escaped = [c for chars in ESCAPED_CLASSES.values() for c in chars]
    kept = [c for pairs in KEPT_CLASSES.values() for c, _ in pairs if c != " "]
    return "echo " + " ".join([*escaped, *kept, *CLUSTERS]) + f" {END}"


def dialog_rows(screen: str) -> list[str]:
    """The rows of the permission dialog's box: from its top border to its bottom one."""
    lines = screen.split("\n")
    top = next(
        i for i, line in enumerate(lines) if "╭" in line and "Allow bash?" in "".join(lines[i : i + 3])
    )
    bottom = next(i for i in range(top + 1, len(lines)) if lines[i].lstrip().startswith("╰"))
    return lines[top : bottom + 1]


def test_every_row_of_the_question_is_as_wide_as_rich_laid_it_out(
    tmp_path: Path, server: FakeModelServer
) -> None:
    shown_command = command()
    app, work, _sessions = app_command(tmp_path, server)
    server.push(openai_stream(None, tool_calls=[call("b1", "bash", {"command": shown_command})]))
    server.push(openai_stream("Done."))
    tmux = Tmux(f"agent-tui-dialog-widths-{os.getpid()}", 80, 24)
    tmux.start(app, work)
    try:
        tmux.wait(lambda s: "new session" in s and "Send" in s, "the app, ready to type")
        tmux.type("run it")
        tmux.wait_text("run it")
        tmux.keys("Enter")
        screen = tmux.wait(lambda s: "Allow bash?" in s and END in s.replace("\n", ""), "the whole question")
        tmux.keys("Escape")
        tmux.wait_text("Done.")
    finally:
        tmux.stop()
    rows = dialog_rows(screen)
    assert len(rows) >= 6, screen
    # The dialog's right border: on the top row (spaces and box lines, one cell each) at this cell.
    # Every other row must have a border glyph whose prefix tmux measures as that wide (the
    # backdrop's own boxes, further right, are other glyphs or cells).
    right = rows[0].rindex("╮") + 1
    candidates = [(r, i) for r, row in enumerate(rows) for i, ch in enumerate(row) if ch in BORDERS]
    widths = terminal_widths([rows[r][: i + 1] for r, i in candidates], tmp_path / "probe")
    at = {r for (r, _), w in zip(candidates, widths, strict=True) if w == right}
    wrong = [row for r, row in enumerate(rows) if r not in at]
    assert not wrong, ("\n".join(rows), right, wrong)
    flat = "".join(screen.split("\n"))
    for chars in ESCAPED_CLASSES.values():
        for c in chars:
            if not c.isspace():
                assert c not in flat, f"U+{ord(c):04X} reached the screen as itself"
    for pairs in KEPT_CLASSES.values():
        for c, _ in pairs:
            assert c in flat, f"U+{ord(c):04X} should be shown as itself"
    assert "⟨U+3164⟩" in flat and "⟨U+FFA0⟩" in flat and "⟨U+200D⟩" in flat and "⟨U+FE0F⟩" in flat
