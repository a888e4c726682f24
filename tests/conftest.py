"""Test-wide settings (Hypothesis is deterministic in `make test`, exploring in `make stress`), a home
of its own for every test (nothing reads or writes the developer's), and the fixtures many modules
share: a fake model server, and agent harnesses on it. A module may override them."""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from tests.support.agent_support import Harness
from tests.support.fake_model_server import FakeModelServer
from tests.support.textual_css import share_parsed_css

settings.register_profile("deterministic", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False)
settings.load_profile("explore" if os.environ.get("AGENT_TUI_STRESS") else "deterministic")

#: Each app a test starts reuses the CSS the first one parsed (50 ms of its 0.2 s start).
share_parsed_css()

#: Tests that start agent-tui (or a browser, a terminal) as another process, each several seconds:
#: marked slow here so that ``make test-fast`` (``-m "not slow"``) leaves them out. Whole modules of
#: them carry ``pytestmark = pytest.mark.slow`` themselves (the campaigns, tmux, Chromium, pi, print mode, and
#: the heaviest Textual-app modules: tui_actions, tui_layout, tui_composer, tui_snapshots, tui_keys,
#: tui_actions_preview, tui_streaming_fences, safety_markup, and tui_status_and_notices below: three quarters of the
#: rest's time, a Textual app per test; the lighter app tests, e.g. test_tui_worker_failures, stay in the edit loop).
SLOW_TESTS = {
    "tests/functional/test_permissions.py::test_print_mode_modes_from_config_file_and_default_auto",
    "tests/functional/test_permissions.py::test_print_mode_without_a_terminal_refuses_clearly",
    "tests/functional/test_permissions.py::test_print_mode_asks_on_the_terminal",
    "tests/functional/test_safety_secrets.py::test_keys_never_reach_any_file_or_output",
    "tests/e2e/test_safety_signals.py",
    "tests/e2e/test_safety_serve.py",
    "tests/e2e/test_tui_status_and_notices.py",
    "tests/functional/test_agent_compaction.py::test_cli_compact_preview_undo_and_a_real_compaction",
    "tests/e2e/test_safety_tui.py::test_a_big_message_is_shown_capped_with_show_more",
    "tests/functional/test_safety_export.py::test_a_full_disk_leaves_nothing_that_blocks_the_retry",
    "tests/functional/test_safety_input.py::test_a_damaged_search_index_is_rebuilt_with_one_line",
    "tests/functional/test_safety_input.py::test_a_full_disk_under_the_search_index_is_one_line",
    "tests/functional/test_safety_input.py::test_files_that_are_not_newline_utf8_say_what_they_are",
    "tests/functional/test_safety_input.py::test_a_model_reply_with_a_lone_surrogate_is_kept",
    "tests/functional/test_safety_input.py::test_a_file_name_that_is_not_utf8_does_not_crash_ls_find_grep",
    "tests/e2e/test_tui_actions.py::test_serve_runs_the_app_in_a_browser",
    "tests/e2e/test_tui_actions.py::test_a_20000_entry_session_opens_with_a_short_tree_and_a_pruned_chat",
    "tests/functional/test_cli.py::test_actions_append_one_entry_each_and_never_rewrite",
    "tests/functional/test_export.py::test_export_command",
    "tests/functional/test_read_images.py::test_an_image_too_big_as_png_goes_as_jpeg_under_the_byte_limit",
    # agent-tui as a process two or three times per test (28 s, 7 s and 4 s of the edit loop, loaded)
    "tests/functional/test_safety_trust.py::test_print_mode_does_not_run_a_hook_written_since_the_last_run",
    "tests/functional/test_continue_indexed.py::test_a_print_mode_continue_is_in_the_index_when_it_ends",
    "tests/functional/test_continue_indexed.py::test_no_index_is_made_by_a_session_that_ends",
    "tests/functional/test_safety_secrets.py::test_the_search_index_and_its_snippets_hold_no_secret",
    # hundreds of megabytes through a hook's pipes, four times; pytest in a subprocess
    "tests/functional/test_safety_prompt_sources.py::test_a_hook_printing_hundreds_of_megabytes_costs_little",
    "tests/functional/test_isolated_home_pytest.py::test_a_developers_home_and_variables_never_reach_a_test",
    # print mode as a process, one to three times a test (37 s and 6 s of the edit loop, loaded)
    "tests/functional/test_print_slash_commands.py",
    "tests/functional/test_app_without_a_terminal.py::test_what_is_piped_in_is_the_prompt",
}


#: tests/real needs a built llama.cpp server: only ``make test-real`` (AGENT_TUI_REAL=1) collects it.
collect_ignore = [] if os.environ.get("AGENT_TUI_REAL") else ["real"]

#: The folder a test lives in is its kind, and a marker of that name (``pytest -m unit``).
KINDS = ("unit", "functional", "e2e", "campaigns")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        name = item.nodeid.split("[")[0]
        parts = name.split("/")
        if len(parts) > 2 and parts[1] in KINDS:
            item.add_marker(parts[1])
        if name in SLOW_TESTS or name.split("::")[0] in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)


#: Variables a developer may have set that change what agent-tui (or a tool it runs) reads: keys and
#: endpoints, agent-tui's own settings, pi's and Claude Code's folders, the tmux and Textual sessions
#: the tests run in. A test that wants one sets it itself.
FOREIGN_PREFIXES = ("ANTHROPIC_", "OPENAI_", "GEMINI_", "AGENT_TUI_", "TEXTUAL")
FOREIGN_NAMES = ("PI_CODING_AGENT_DIR", "CLAUDE_CONFIG_DIR", "TMUX", "TMUX_PANE", "GIT_DIR", "GIT_WORK_TREE")
#: Those the developer's shell had when pytest started (this file is read first): a plugin or a test
#: module that sets one of these kinds later (pytest-textual-snapshot's TEXTUAL_SNAPSHOT_TEMPDIR) keeps it.
FOREIGN = frozenset(k for k in os.environ if k.startswith(FOREIGN_PREFIXES) or k in FOREIGN_NAMES)


@contextlib.contextmanager
def isolated_home(home: Path) -> Iterator[Path]:
    """The environment below for as long as the block runs, then back as it was."""
    with pytest.MonkeyPatch.context() as mp:
        # tmux's socket path must fit a Unix socket's ~107 bytes: a long temp root gets a short folder
        tmux = None if len(str(home)) < 70 else Path(tempfile.mkdtemp(prefix="tmux-", dir="/tmp"))
        try:
            isolate_home(mp, home, tmux or home)
            yield home
        finally:
            if tmux is not None:
                shutil.rmtree(tmux, ignore_errors=True)


def isolate_home(mp: pytest.MonkeyPatch, home: Path, tmux: Path) -> None:
    """Point HOME, the XDG folders and tmux's socket folder at ``home`` (fresh, empty) and drop the
    variables above: agent-tui, git, tmux, Chromium, node and every subprocess a test starts with
    ``os.environ`` find an empty user (no ``~/.pi``, ``~/.claude``, ``~/.claude.json``, ``~/.agents``,
    config dir, ``~/.gitconfig`` or ``~/.tmux.conf``)."""
    for name in FOREIGN:
        mp.delenv(name, raising=False)
    mp.setenv("HOME", str(home))
    for name, sub in (
        ("XDG_CONFIG_HOME", ".config"),
        ("XDG_DATA_HOME", ".local/share"),
        ("XDG_STATE_HOME", ".local/state"),
        ("XDG_CACHE_HOME", ".cache"),
    ):
        mp.setenv(name, str(home / sub))
    # tmux's server is per socket and keeps the environment it started with: one of the test's own
    # (never the developer's, nor one a previous test started with another HOME).
    mp.setenv("TMUX_TMPDIR", str(tmux))
    # git commits need a name; the developer's ~/.gitconfig is not read any more.
    for role in ("AUTHOR", "COMMITTER"):
        mp.setenv(f"GIT_{role}_NAME", "agent-tui tests")
        mp.setenv(f"GIT_{role}_EMAIL", "tests@agent-tui.invalid")


@pytest.fixture(scope="session", autouse=True)
def _session_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The home the session- and module-scoped fixtures run in (they start before any test's own)."""
    with isolated_home(tmp_path_factory.mktemp("home-session")) as home:
        yield home


@pytest.fixture(scope="session")
def _homes(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Iterator[int]]:
    """The folder the tests' homes are made in, and their numbers. ``mktemp`` numbers a name by
    listing pytest's whole base folder (1.1 ms at 1,700 entries): with a home and a ``tmp_path``
    a test there, a test's setup took 2.1 ms early in ``make test-fast`` and 4.4 ms late."""
    return tmp_path_factory.mktemp("homes"), itertools.count()


@pytest.fixture(autouse=True)
def _home(_session_home: Path, _homes: tuple[Path, Iterator[int]]) -> Iterator[Path]:
    """Every test's own empty home (outside its ``tmp_path``, which stays the test's to fill)."""
    root, numbers = _homes
    home = root / f"home{next(numbers)}"
    home.mkdir(mode=0o700)
    with isolated_home(home) as home:
        yield home


@pytest.fixture(autouse=True)
def _model_tables_restored() -> Iterator[None]:
    """The model and price tables are process-wide (the config's ``[models]`` and windows learned
    from a server are registered there): each test starts from the built-in ones, so a window one
    test's fake server reported never becomes another test's model."""
    from agent_tui.projection import models, pricing

    saved_models, saved_prices = dict(models.MODELS), dict(pricing.PRICES)
    yield
    models.MODELS.clear()
    models.MODELS.update(saved_models)
    pricing.PRICES.clear()
    pricing.PRICES.update(saved_prices)
    probe = sys.modules.get("agent_tui.agent.window_probe")
    if probe is not None:
        probe._ASKED.clear()  # servers asked for a window, once per process


@pytest.fixture
def server() -> Iterator[FakeModelServer]:
    with FakeModelServer() as s:
        yield s


@pytest.fixture
async def anthropic_harness(server: FakeModelServer, tmp_path: Path) -> AsyncIterator[Harness]:
    """An agent loop (Anthropic) on the fake server, in a fresh work folder and session."""
    harness = Harness(server, tmp_path)
    yield harness
    await harness.close()


@pytest.fixture
async def openai_harness(server: FakeModelServer, tmp_path: Path) -> AsyncIterator[Harness]:
    """The same with the OpenAI provider."""
    harness = Harness(server, tmp_path, provider="openai")
    yield harness
    await harness.close()
