"""What a person decides on is drawn at the width Rich laid it out at, in a real terminal.

``echo building docs`` + 45 × U+3164 + ``; rm -f victim``: Rich measures U+3164 as 0 cells and
tmux draws 2, so the permission question at 80x24 showed ``echo building docs`` and blank cells,
and ``y`` deleted ``victim``. Here tmux itself says how wide it draws each character (the cursor
position after printing it, ``ESC[6n``): for every class of character, what the question shows of
it (``visible_strict``) is drawn exactly as wide as Rich measured it, or is an escape. The
question for the attack command shows its tail, on a Pilot screen and in the real program.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest
import wcwidth
from rich.cells import cell_len

from agent_tui.agent.permissions import Permissions
from agent_tui.terminal_text import plain_width, visible_strict
from agent_tui.tui.screens.permission import PermissionScreen
from tests.e2e.test_tui_e2e import app_command
from tests.support.fake_model_server import FakeModelServer, call, openai_stream
from tests.support.pilot import wait_for
from tests.support.screen_text import screen_lines
from tests.support.tmux import Tmux
from tests.support.tui_fixtures import ScriptedFactory, make_app, sample_session
from tests.unit.test_terminal_widths import ATTACK, ESCAPED_CLASSES, KEPT_CLASSES

pytestmark = [pytest.mark.timeout(240), pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]

#: Clusters no single character stands for: joined emoji, emoji with a variation selector, flags.
CLUSTERS = [
    "\U0001f468\u200d\U0001f469\u200d\U0001f467",  # a ZWJ family
    "\U0001f3f3\ufe0f\u200d\U0001f308",  # a ZWJ flag
    "\u2764\ufe0f",  # VS16: text made emoji
    "\u263a\ufe0f",
    "\u0031\ufe0f\u20e3",  # a keycap
    "\U0001f1fa\U0001f1f8",  # regional indicators
    "\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f",  # a tag flag
    "e\u0301",
    "\u1100\u1161\u11a8",  # a syllable of conjoining jamo
]


def terminal_widths(strings: list[str], tmp_path: Path) -> list[int]:
    """How many cells tmux draws each string in (one probe run in a tmux at 200x10)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    source, target = tmp_path / "strings.json", tmp_path / "widths.json"
    source.write_text(json.dumps(strings))
    tmux = Tmux(f"agent-tui-widths-{os.getpid()}-{tmp_path.name}", 200, 10)
    tmux.start(f"{sys.executable} -m tests.support.cell_probe {source} {target}; sleep 60", ROOT)
    try:
        deadline = time.monotonic() + 120
        while not target.exists():
            assert time.monotonic() < deadline, f"the probe did not finish; the screen:\n{tmux.screen()}"
            time.sleep(0.1)
        widths: list[int] = json.loads(target.read_text())
    finally:
        tmux.stop()
    assert len(widths) == len(strings)
    return widths


def samples() -> list[str]:
    """Every class's samples, the clusters, and the attack's pieces."""
    out = [c for chars in ESCAPED_CLASSES.values() for c in chars]
    out += [c for pairs in KEPT_CLASSES.values() for c, _ in pairs]
    return [*out, *CLUSTERS, "\u3164" * 10, "echo\u3164\u3164; rm"]


def test_what_the_question_shows_of_every_class_is_drawn_as_wide_as_rich_measured(tmp_path: Path) -> None:
    raw = samples()
    shown = [visible_strict(s) for s in raw]
    drawn = terminal_widths(raw + shown, tmp_path)  # one tmux: a server ending as the next starts fails
    drawn_raw, drawn_shown = drawn[: len(raw)], drawn[len(raw) :]
    wrong = [
        f"{s!r} shown as {v!r}: tmux {d}, rich {cell_len(v)}"
        for s, v, d in zip(raw, shown, drawn_shown, strict=True)
        if d != cell_len(v)
    ]
    assert not wrong, wrong
    # and what the question showed before: the same characters as they are, drawn otherwise
    mismatched = {s for s, d in zip(raw, drawn_raw, strict=True) if d != cell_len(s)}
    assert {"\u3164", "\uffa0", "\u2764\ufe0f"} <= mismatched, mismatched
    assert all(visible_strict(s) != s for s in mismatched)  # each of them is escaped


def test_every_character_the_strict_mode_keeps_is_drawn_as_wide_as_rich_measured(tmp_path: Path) -> None:
    """The kept set itself, in tmux: every kept character outside the big ideograph blocks, and
    every 97th inside them."""
    kept = []
    for code in range(0x110000):
        if plain_width(code) is None:
            continue
        big = 0x3400 <= code <= 0x9FFF or 0xAC00 <= code <= 0xD7A3 or code >= 0x20000
        if not big or code % 97 == 0:
            kept.append(chr(code))
    drawn = terminal_widths(kept, tmp_path)
    wrong = [
        f"U+{ord(c):04X}: tmux {d}, rich {cell_len(c)}"
        for c, d in zip(kept, drawn, strict=True)
        if d != cell_len(c)
    ]
    assert not wrong, (len(wrong), wrong[:30])


# -- the question for the attack command -----------------------------------------------------


async def test_the_question_for_the_attack_shows_the_command_tail_at_80x24(tmp_path: Path) -> None:
    app = make_app(tmp_path, sample_session(tmp_path), agent_factory=ScriptedFactory())
    async with app.run_test(size=(80, 24)) as pilot:
        request = Permissions().request_for("bash", {"command": ATTACK}, str(app.config.cwd), "c1")
        assert request is not None
        app.run_worker(app.approve(request))
        await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen), "the question")
        await pilot.pause(0.2)
        lines = screen_lines(app)
        text = "".join(line.strip(" │╭╮╰╯─") for line in lines)
        assert "; rm -f victim" in text, "\n".join(lines)
        assert "⟨U+3164⟩" in text
        # every row is drawn as wide as Rich laid it out (wcwidth, a terminal's table): no row of
        # the question pushes its end past the edge
        assert [wcwidth.wcswidth(line) for line in lines] == [80] * 24, "\n".join(lines)
        await pilot.press("escape")


def test_in_the_real_program_the_question_shows_the_tail_and_y_runs_what_was_shown(
    tmp_path: Path, server: FakeModelServer
) -> None:
    command, work, _sessions = app_command(tmp_path, server)
    victim = work / "victim"
    victim.write_text("keep me")
    server.push(openai_stream(None, tool_calls=[call("b1", "bash", {"command": ATTACK})]))
    server.push(openai_stream("Built the docs."))
    tmux = Tmux(f"agent-tui-attack-{os.getpid()}", 80, 24)
    tmux.start(command, work)
    try:
        tmux.wait(lambda s: "new session" in s and "Send" in s, "the app, ready to type")
        tmux.type("build the docs")
        tmux.wait_text("build the docs")
        tmux.keys("Enter")
        screen = tmux.wait_text("Allow bash?")
        flat = "".join(line.strip(" │╭╮╰╯─") for line in screen.splitlines())
        assert "; rm -f victim" in flat, screen
        assert "⟨U+3164⟩" in flat, screen
        tmux.keys("Escape")  # denied: what the question showed was read, and refused
        tmux.wait_text("Built the docs.")
        assert victim.read_text() == "keep me"
    finally:
        tmux.stop()
