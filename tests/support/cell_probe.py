"""Run in a terminal (tmux): print each string of a JSON list at the start of a line and ask the
terminal where its cursor went (``ESC[6n``): the cells the terminal drew it in. Writes the list
of widths as JSON to the second argument (through a temporary file, so a reader never sees half).

``python -m tests.support.cell_probe STRINGS.json WIDTHS.json``"""

from __future__ import annotations

import json
import os
import sys
import termios
import tty


def probe(strings: list[str]) -> list[int]:
    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd)
    tty.setraw(fd)
    widths: list[int] = []
    try:
        for text in strings:
            os.write(1, ("\r\x1b[2K" + text + "\x1b[6n").encode("utf-8", "surrogatepass"))
            reply = b""
            while not reply.endswith(b"R"):
                reply += os.read(fd, 64)
            column = int(reply[reply.rindex(b";") + 1 : -1])
            widths.append(column - 1)
        os.write(1, b"\r\x1b[2K")
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)
    return widths


def main() -> None:
    source, target = sys.argv[1], sys.argv[2]
    with open(source, encoding="utf-8") as f:
        strings = json.load(f)
    widths = probe(strings)
    with open(target + ".part", "w", encoding="utf-8") as f:
        json.dump(widths, f)
    os.replace(target + ".part", target)


if __name__ == "__main__":
    main()
