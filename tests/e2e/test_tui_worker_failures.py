"""Every worker's failure is shown: the workers of screens and widgets too (Textual's
``Worker.StateChanged`` does not bubble, so each owner forwards it to the app's one handler)."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.app import App

import agent_tui.tui
from agent_tui.library.search import Library, RefreshStats, SearchHit
from agent_tui.projection.catalog import CatalogModel
from agent_tui.tui import clipboard
from agent_tui.tui.app import AgentTuiApp
from agent_tui.tui.file_index import FileIndex
from agent_tui.tui.screens.model_picker import ModelPickerScreen
from agent_tui.tui.screens.session_picker import SessionPicker
from agent_tui.tui.widgets.chat_view import ChatView
from agent_tui.tui.widgets.streaming_reply import StreamingReply
from tests.support.pilot import notices, select, wait_for
from tests.support.tui_fixtures import SIZE, ScriptedFactory, make_app, sample_session

pytestmark = pytest.mark.timeout(60)


def _failed(app: AgentTuiApp, what: str) -> Callable[[], bool]:
    return lambda: any(what in n for n in notices(app)) and app.last_error is not None


class _Broken(Library):
    """A library whose summaries, text index or search fail with an error nobody expects."""

    def __init__(self, *args: Any, fail: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fail = fail

    def refresh(
        self, progress: Callable[[int, int], None] | None = None, *, text: bool = True, jobs: int = 1
    ) -> RefreshStats:
        if self.fail == ("text" if text else "summaries"):
            raise RuntimeError(f"the {self.fail} broke")
        return super().refresh(progress, text=text, jobs=jobs)

    def search(self, *args: Any, **kwargs: Any) -> list[SearchHit]:
        if self.fail == "search":
            raise RuntimeError("the search broke")
        return super().search(*args, **kwargs)


@pytest.mark.parametrize("fail", ["summaries", "text", "search"])
async def test_the_session_pickers_workers(tmp_path: Path, fail: str) -> None:
    sample_session(tmp_path)
    library = _Broken([tmp_path / "sessions"], db_path=tmp_path / "index.sqlite3", fail=fail)
    app = make_app(tmp_path, None)
    async with app.run_test(size=SIZE) as pilot:
        picker = SessionPicker(library)
        app.push_screen(picker)
        if fail != "summaries":
            await wait_for(pilot, lambda: picker.ready, "listed")
            await pilot.press(*"parser")  # a search: the text index is built, then searched
        await wait_for(pilot, _failed(app, f"RuntimeError: the {fail} broke"), "the failure shown")
        assert app.is_running and app.screen is picker


async def test_the_model_pickers_fetch(tmp_path: Path) -> None:
    def more() -> list[CatalogModel]:
        raise ConnectionError("the server went away")

    app = make_app(tmp_path, None)
    async with app.run_test(size=SIZE) as pilot:
        app.push_screen(ModelPickerScreen([], more=more))
        await wait_for(pilot, _failed(app, "ConnectionError: the server went away"), "the failure shown")
        assert isinstance(app.screen, ModelPickerScreen)


async def test_the_composers_clipboard_image(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken() -> Path:
        raise RuntimeError("xclip crashed")

    monkeypatch.setattr(clipboard, "clipboard_image", broken)
    app = make_app(tmp_path, None)
    async with app.run_test(size=SIZE) as pilot:
        app.composer.action_paste_clipboard()  # Ctrl+V (its bytes are tests/e2e/test_tui_keys' part)
        await wait_for(pilot, _failed(app, "RuntimeError: xclip crashed"), "the failure shown")


async def test_the_composers_file_search(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(self: FileIndex, query: str, budget: float) -> Any:
        raise OSError("the disk went away")

    monkeypatch.setattr(FileIndex, "search_within", broken)
    app = make_app(tmp_path, None)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("at", *"mai")
        await wait_for(pilot, _failed(app, "OSError: the disk went away"), "the failure shown")
        assert app.composer.text == "@mai"


async def test_the_streaming_replys_highlight(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async def broken(self: StreamingReply, fence: str) -> None:
        raise RuntimeError("the highlighter broke")

    monkeypatch.setattr(StreamingReply, "_highlight", broken)
    fence = "```python\n" + "".join(f"x_{i} = {i}\n" for i in range(200)) + "```\n"
    factory = ScriptedFactory(reply="Code:\n\n" + fence + "\nDone.\n\n", chunks=3)
    app = make_app(tmp_path, None, agent_factory=factory)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"hi")
        await pilot.press("enter")
        await wait_for(pilot, _failed(app, "RuntimeError: the highlighter broke"), "the failure shown")


async def test_the_apps_reveal_shows_its_failure_and_the_app_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(self: ChatView, *args: Any) -> None:
        raise RuntimeError("the chat could not scroll")

    monkeypatch.setattr(ChatView, "reveal", broken)
    app = make_app(tmp_path, sample_session(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, app, "a3")
        await wait_for(pilot, _failed(app, "RuntimeError: the chat could not scroll"), "the failure shown")
        assert app.is_running


def _starts_workers(cls: type) -> bool:
    """Whether the class's own source starts a worker (a ``@work`` method or ``self.run_worker``)."""
    tree = ast.parse(inspect.cleandoc("\n" + inspect.getsource(cls)))
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for decorator in node.decorator_list:
                target = decorator.func if isinstance(decorator, ast.Call) else decorator
                if isinstance(target, ast.Name) and target.id == "work":
                    return True
        owner = node.value if isinstance(node, ast.Attribute) and node.attr == "run_worker" else None
        if isinstance(owner, ast.Name) and owner.id == "self":
            return True
    return False


def test_every_screen_and_widget_that_starts_a_worker_forwards_its_failures() -> None:
    owners = []
    for info in pkgutil.walk_packages(agent_tui.tui.__path__, "agent_tui.tui."):
        module = importlib.import_module(info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ != module.__name__ or issubclass(cls, App):
                continue
            if _starts_workers(cls):
                owners.append(cls.__qualname__)
                assert "on_worker_state_changed" in {name for klass in cls.__mro__ for name in vars(klass)}, (
                    f"{cls.__qualname__} starts workers but does not forward their failures"
                )
    assert {"SessionPicker", "ModelPickerScreen", "Composer", "StreamingReply"} <= set(owners)
