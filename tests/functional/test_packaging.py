"""What pip gives a user: the declared dependencies are what the code imports, and a wheel built
from this checkout, installed into a fresh venv, runs (its themes, CSS and viewer included)."""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import shutil
import site
import subprocess
import sys
import tomllib
import zipfile
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

import agent_tui
from tests.support.sources import package_trees

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "agent_tui"
EXAMPLE = ROOT / "sessions.example" / "branches.jsonl"


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_name(requirement: str) -> str:
    match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement)
    assert match, requirement
    return _normal(match.group(0))


def _imported_modules() -> set[str]:
    """Top-level names of everything agent_tui imports, anywhere (lazy imports included)."""
    names: set[str] = set()
    for _path, tree in package_trees():
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return names - set(sys.stdlib_module_names) - {"agent_tui"}


def test_declared_dependencies_are_what_the_code_imports() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = {_requirement_name(r) for r in project["dependencies"]}
    serve = {_requirement_name(r) for r in project["optional-dependencies"]["serve"]}
    owners = packages_distributions()
    imported: dict[str, str] = {}
    for module in sorted(_imported_modules()):
        assert module in owners, f"agent_tui imports {module}, which no installed distribution provides"
        dists = {_normal(d) for d in owners[module]}
        # a namespace package (google) is shared by several distributions: the declared one is it
        (dist,) = dists & (runtime | serve) if len(dists) > 1 else dists
        imported[dist] = module
    assert set(imported) - runtime - serve == set(), "imported but not declared"
    assert runtime - set(imported) == set(), "declared but never imported"
    assert serve <= set(imported), "the [serve] extra holds something agent_tui does not import"


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


@pytest.mark.slow
def test_the_wheel_installs_and_runs(tmp_path: Path) -> None:
    """``python -m build`` on a copy of the sources, then the wheel in a new venv.

    The venv gets the dependencies this checkout resolved (linked, not downloaded: a network
    install takes 40 s), and the wheel with ``--no-deps --no-index``; ``pip check`` then proves
    the wheel's declared requirements are all there.
    """
    if importlib.util.find_spec("build") is None:
        pytest.fail(
            "python -m build is missing from this venv (a dev dependency): run make setup", pytrace=False
        )
    source = tmp_path / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, source / name)
    shutil.copytree(PACKAGE, source / "agent_tui", ignore=shutil.ignore_patterns("__pycache__"))
    dist = tmp_path / "dist"
    built = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(dist), str(source)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = dist.glob("agent_tui-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    for shipped in (
        "agent_tui/tui/themes/agent-dark.toml",
        "agent_tui/tui/themes/agent-light.toml",
        "agent_tui/tui/app.tcss",
        "agent_tui/library/viewer.js",
    ):
        assert shipped in names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)

    venv = tmp_path / "venv"
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", str(venv)], check=True, capture_output=True)
    (target,) = venv.glob("lib/python*/site-packages")
    # Without the [serve] extra: agent-tui serve must say how to get it.
    extra = ("textual_serve*", "aiohttp*", "aiohttp_jinja2*")
    mine = shutil.ignore_patterns("__pycache__", "__editable__*", "agent_tui*", "pip", "pip-*", *extra)
    for folder in site.getsitepackages():
        shutil.copytree(folder, target, ignore=mine, copy_function=_link_or_copy, dirs_exist_ok=True)
    python = venv / "bin" / "python"
    pip = [str(python), "-m", "pip", "--disable-pip-version-check", "--no-input"]
    installed = subprocess.run(
        [*pip, "install", "--no-deps", "--no-index", str(wheel)], capture_output=True, text=True, check=False
    )
    assert installed.returncode == 0, installed.stderr
    check = subprocess.run([*pip, "check"], capture_output=True, text=True, check=False)
    assert check.returncode == 0, check.stdout

    work = tmp_path / "work"
    work.mkdir()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "OPENAI_", "AGENT_TUI_", "PYTHON"))
    }
    env.update(AGENT_TUI_HOME=str(tmp_path / "home"), AGENT_TUI_CONFIG=str(tmp_path / "config.toml"))

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(venv / "bin" / "agent-tui"), *args], cwd=work, env=env, capture_output=True, text=True
        )

    helped = run("--help")
    assert helped.returncode == 0 and "usage: agent-tui" in helped.stdout, helped.stderr
    version = run("--version")
    assert version.returncode == 0 and version.stdout == f"agent-tui {agent_tui.__version__}\n"
    served = run("serve")
    assert served.returncode == 1 and served.stderr == (
        "agent-tui: serve needs textual-serve: pip install 'agent-tui[serve]'\n"
    ), served.stderr
    context = run("context", str(EXAMPLE), "--format", "text")
    expected = subprocess.run(
        [sys.executable, "-m", "agent_tui", "context", str(EXAMPLE), "--format", "text"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert context.returncode == 0 and context.stdout == expected.stdout and context.stdout, context.stderr

    # The app, from the wheel, finds its themes (they were read from the checkout once).
    script = (
        "import asyncio, sys\n"
        "from pathlib import Path\n"
        "from agent_tui.tui.app import TuiConfig, create_app\n"
        "from agent_tui.tui.themes import DEFAULT_THEMES_DIR\n"
        "async def main():\n"
        "    tmp = Path(sys.argv[1])\n"
        "    app = create_app(TuiConfig(cwd=tmp / 'work', session_dir=tmp / 'sessions',"
        " config_path=tmp / 'config.toml'))\n"
        "    async with app.run_test(size=(80, 24)):\n"
        "        print(DEFAULT_THEMES_DIR, app.theme, sorted(app.available_themes))\n"
        "asyncio.run(main())\n"
    )
    app = subprocess.run(
        [str(python), "-c", script, str(tmp_path)], cwd=work, env=env, capture_output=True, text=True
    )
    assert app.returncode == 0, app.stderr
    folder, theme, available = app.stdout.split(" ", 2)
    assert Path(folder).is_relative_to(target), folder
    assert theme == "agent-dark" and "'agent-light'" in available
