"""One measurement of the listing benchmark, in a process of its own (the import time left out).

``picker FOLDER [QUERY]``: the resume picker on FOLDER's sessions (the data dir's index, as the
app's), headless at 80x24; prints JSON: ``listed``, seconds from opening it to the list shown,
and with QUERY ``searched``, seconds from typing it to its complete results.
``continue FOLDER``: what ``-c`` does to find FOLDER's latest session; prints ``{"seconds": ...}``.
``AGENT_TUI_HOME`` says where the data dir (and its index) is; ``agent_tui`` is whichever
the path finds first (``PYTHONPATH=/a/checkout`` measures that checkout's code).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path


async def _picker(folder: Path, query: str | None) -> dict[str, float]:
    from textual.app import App
    from textual.widgets import Input

    from agent_tui.library.search import Library
    from agent_tui.tui.screens.session_picker import SessionPicker

    out: dict[str, float] = {}
    app: App[None] = App()
    async with app.run_test(size=(80, 24)) as pilot:
        picker = SessionPicker(Library([folder]))
        started = time.perf_counter()
        app.push_screen(picker)
        while not (picker.searched == "" and picker.shown):
            await pilot.pause(0.01)
        out["listed"] = time.perf_counter() - started
        if query is not None:
            started = time.perf_counter()
            picker.query_one(Input).value = query
            while picker.searched != query:
                await pilot.pause(0.01)
            out["searched"] = time.perf_counter() - started
    return out


def _continue(folder: Path) -> dict[str, float]:
    from agent_tui.sdk.session import open_session

    started = time.perf_counter()
    handle = open_session(cwd=str(folder), session_dir=folder, continue_last=True, write=False)
    seconds = time.perf_counter() - started
    handle.close()
    return {"seconds": seconds}


def main() -> None:
    what, folder = sys.argv[1], Path(sys.argv[2])
    if what == "picker":
        out = asyncio.run(_picker(folder, sys.argv[3] if len(sys.argv) > 3 else None))
    elif what == "continue":
        out = _continue(folder)
    else:
        raise SystemExit(f"picker_probe: unknown measurement {what!r}")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
