"""Every line that shows a person a command the model asked to run, or what was decided about it,
shows its tail: the chat's "allowed once" notice, the tool call's header in the chat, a running
``!cmd``, print mode's question and its tool line. (Issue 24, finding 1: the chat's "allowed once"
line and the tool output hid ``; rm -f victim`` behind 45 × U+3164 the way the dialog did.)

For each class of character a terminal may draw at another width than Rich measures, and each
line builder: the character itself is never in the line (an escape stands for it), the tail is,
and the line is as wide in Rich's measure as ``wcwidth`` (a terminal's) says."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import wcwidth
from rich.cells import cell_len

from agent_tui.agent.permissions import PermissionRequest
from agent_tui.cli.print_mode import _describe_call, ask_text
from agent_tui.store.content import args_summary
from agent_tui.tui.screens.permission import ALLOW_ONCE, answer_line
from tests.unit.test_terminal_widths import ESCAPED_CLASSES

TAIL = "; rm -f victim"

#: Each line builder, given the command.
BUILDERS: dict[str, Callable[[str], str]] = {
    "the chat's decision notice": lambda command: answer_line(ALLOW_ONCE, "bash", command),
    "the tool call's arguments": lambda command: args_summary({"command": command}, width=400),
    "print mode's tool line": lambda command: _describe_call("bash", {"command": command}),
    "print mode's question": lambda command: ask_text(
        PermissionRequest("bash", "c1", {"command": command}, command, "runs a command", "bash", "/tmp")
    ),
}

SAMPLES = [(name, c) for name, chars in ESCAPED_CLASSES.items() for c in chars]


@pytest.mark.parametrize("builder", sorted(BUILDERS))
@pytest.mark.parametrize(("klass", "char"), SAMPLES, ids=[f"{n}-U+{ord(c):04X}" for n, c in SAMPLES])
def test_no_character_of_a_disputed_width_reaches_a_decision_line(
    builder: str, klass: str, char: str
) -> None:
    command = "echo a" + char * 3 + TAIL
    line = BUILDERS[builder](command)
    assert char not in line, (klass, line)
    assert f"⟨U+{ord(char):04X}⟩" in line or f"\\x{ord(char):02x}" in line, line  # an escape stands in
    assert TAIL in line, line
    assert cell_len(line) == wcwidth.wcswidth(line), (klass, line)


def test_the_attack_itself_in_every_line() -> None:
    attack = "echo building docs" + "\u3164" * 45 + TAIL
    for name, build in BUILDERS.items():
        line = build(attack)
        assert "\u3164" not in line, (name, line)
        # a summary too short for it says it was cut; every other line shows the tail
        assert TAIL in line or (name == "the tool call's arguments" and line.endswith("…")), (name, line)
