"""``signals.terminal_gone``: what the stdin watcher's periodic look takes for a hangup."""

from __future__ import annotations

import os
import pty

from agent_tui.tui.signals import terminal_gone


def test_a_pty_is_gone_once_its_master_closes() -> None:
    master, slave = pty.openpty()
    try:
        assert not terminal_gone(slave)
        os.close(master)
        assert terminal_gone(slave)  # POLLHUP, and tcgetpgrp fails with EIO
        assert os.read(slave, 10) == b""  # what Textual's input thread reads then: no error
    finally:
        os.close(slave)


def test_a_pipe_is_gone_once_its_writer_closes_and_not_before() -> None:
    reader, writer = os.pipe()
    try:
        assert not terminal_gone(reader)  # tcgetpgrp's ENOTTY is no sign
        os.close(writer)
        assert terminal_gone(reader)
    finally:
        os.close(reader)
