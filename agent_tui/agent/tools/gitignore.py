"""The files ``git ls-files --cached --others --exclude-standard`` would list, without running git.

Running ``git`` in a repository runs what the repository configures
(``core.fsmonitor``, hooks, ...): a repository the model wrote, or one the
user cloned, would run code on a plain ``find``. So agent-tui never runs git;
it reads the same data git reads, as data:

- the work tree's top: the nearest folder upwards holding a ``.git`` folder
  with a ``HEAD`` (or a ``.git`` file saying ``gitdir: ...``, as worktrees and
  submodules have); a folder inside ``.git`` is not in a work tree;
- ignore rules, as git ranks them (the last matching rule of the deepest level
  decides): ``.gitignore`` in every folder from the top down, over
  ``.git/info/exclude``, over the user's global excludes file (``core.excludesFile``
  in ``~/.gitconfig`` or ``$XDG_CONFIG_HOME/git/config``, else
  ``$XDG_CONFIG_HOME/git/ignore``); matched with ``pathspec``'s git semantics;
  an ignored folder is not entered, a folder holding its own ``.git`` (a nested
  repository) is not entered;
- tracked files, from ``.git/index`` (versions 2-4): listed even when ignored,
  as git lists them.

Untrusted input all of it: sizes are capped, bad patterns skipped, index
paths that are absolute or climb with ``..`` dropped.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pathspec takes ~20 ms to import: only when a repository is listed
    from pathspec import GitIgnoreSpec

MAX_IGNORE_FILE_BYTES = 1024 * 1024  # a bigger .gitignore is read up to here
MAX_INDEX_BYTES = 512 * 1024 * 1024
#: (the folder the rules are relative to, as a posix path from the top ("" for the top), the rules)
Level = tuple[str, "GitIgnoreSpec"]


def _is_git_dir(path: Path) -> bool:
    return (path / "HEAD").is_file()


def git_dir_of(folder: Path) -> Path | None:
    """The git directory ``folder/.git`` stands for (a folder, or a ``gitdir:`` file), if it is one."""
    dot_git = folder / ".git"
    try:
        if dot_git.is_dir():
            return dot_git if _is_git_dir(dot_git) else None
        if dot_git.is_file():
            with open(dot_git, "rb") as f:
                head = f.read(4096).decode("utf-8", "surrogateescape")
            if head.startswith("gitdir:"):
                target = Path(head[len("gitdir:") :].strip())
                target = target if target.is_absolute() else folder / target
                return target if _is_git_dir(target) else None
    except OSError:
        return None
    return None


def work_tree_top(root: Path) -> tuple[Path, Path] | None:
    """(the top of the work tree holding ``root``, its git directory); None outside any work tree."""
    real = Path(os.path.realpath(root))
    for folder in (real, *real.parents):
        if folder.name == ".git":
            return None  # inside a git directory: not a work tree (git rev-parse says false)
        git_dir = git_dir_of(folder)
        if git_dir is not None:
            return folder, git_dir
    return None


def _common_dir(git_dir: Path) -> Path:
    """A linked worktree's shared git directory (where ``info/exclude`` lives)."""
    try:
        text = (git_dir / "commondir").read_text("utf-8", "surrogateescape").strip()
    except OSError:
        return git_dir
    common = Path(text)
    return common if common.is_absolute() else git_dir / common


def _read_capped(path: Path, limit: int) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read(limit)
    except OSError:
        return None


def parse_rules(data: bytes) -> GitIgnoreSpec | None:
    """Ignore rules from a file's bytes (lines pathspec cannot parse are skipped); None when there are none."""
    from pathspec import GitIgnoreSpec

    lines = data.decode("utf-8", "surrogateescape").splitlines()
    try:
        spec = GitIgnoreSpec.from_lines(lines)
    except Exception:  # one bad line (e.g. a lone backslash): keep the others
        good = []
        for line in lines:
            try:
                GitIgnoreSpec.from_lines([line])
            except Exception:
                continue
            good.append(line)
        spec = GitIgnoreSpec.from_lines(good)
    return spec if any(p.include is not None for p in spec.patterns) else None


def _rules_in(path: Path) -> GitIgnoreSpec | None:
    data = _read_capped(path, MAX_IGNORE_FILE_BYTES)
    return parse_rules(data) if data else None


_CORE_SECTION = re.compile(r"^\s*\[\s*core\s*\]", re.IGNORECASE)
_SECTION = re.compile(r"^\s*\[")
_EXCLUDES_KEY = re.compile(r"^\s*excludesfile\s*=\s*(.*?)\s*$", re.IGNORECASE)


def _excludes_setting(config: Path) -> str | None:
    """``core.excludesFile`` from one git config file (the last one set), read as text."""
    data = _read_capped(config, MAX_IGNORE_FILE_BYTES)
    if not data:
        return None
    value: str | None = None
    in_core = False
    for line in data.decode("utf-8", "surrogateescape").splitlines():
        if _SECTION.match(line):
            in_core = bool(_CORE_SECTION.match(line))
            continue
        match = _EXCLUDES_KEY.match(line) if in_core else None
        if match:
            text = match.group(1)
            if len(text) >= 2 and text[0] == text[-1] == '"':
                text = text[1:-1]
            value = text
    return value


def global_excludes_file(env: dict[str, str] | None = None) -> Path | None:
    """The user's global excludes file, as git finds it (no system config: that is the machine's)."""
    env = dict(os.environ) if env is None else env
    home = env.get("HOME") or os.path.expanduser("~")
    xdg = env.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    setting: str | None = None
    for config in (Path(xdg) / "git" / "config", Path(home) / ".gitconfig"):  # later files win
        found = _excludes_setting(config)
        if found:
            setting = found
    if setting:
        if setting == "~" or setting.startswith("~/"):
            setting = home + setting[1:]
        return Path(setting)
    return Path(xdg) / "git" / "ignore"


def _hash_length(common_dir: Path) -> int:
    data = _read_capped(common_dir / "config", MAX_IGNORE_FILE_BYTES) or b""
    return 32 if re.search(rb"(?im)^\s*objectformat\s*=\s*sha256\s*$", data) else 20


def tracked_files(git_dir: Path) -> list[str] | None:
    """The paths in the index (relative to the top, posix); None when it is missing or unreadable."""
    data = _read_capped(git_dir / "index", MAX_INDEX_BYTES)
    if data is None or len(data) < 12 or data[:4] != b"DIRC":
        return None
    version = int.from_bytes(data[4:8], "big")
    count = int.from_bytes(data[8:12], "big")
    if version not in (2, 3, 4):
        return None
    hash_len = _hash_length(_common_dir(git_dir))
    fixed = 40 + hash_len + 2  # stat fields, object id, flags
    pos = 12
    previous = b""
    paths: list[str] = []
    try:
        for _ in range(count):
            if pos + fixed > len(data):
                return None
            mode = int.from_bytes(data[pos + 24 : pos + 28], "big")
            flags = int.from_bytes(data[pos + 40 + hash_len : pos + fixed], "big")
            name_at = pos + fixed + (2 if flags & 0x4000 and version >= 3 else 0)
            if version == 4:
                byte = data[name_at]
                name_at += 1
                strip = byte & 0x7F
                while byte & 0x80:
                    byte = data[name_at]
                    name_at += 1
                    strip = ((strip + 1) << 7) | (byte & 0x7F)
                end = data.index(b"\0", name_at)
                if strip > len(previous):
                    return None
                name = previous[: len(previous) - strip] + data[name_at:end]
                pos = end + 1
            else:
                end = data.index(b"\0", name_at)
                name = data[name_at:end]
                pos += (name_at - pos + len(name) + 8) & ~7
            previous = name
            if mode & 0o170000 in (0o100000, 0o120000):  # files and symlinks (not gitlinks, sparse folders)
                paths.append(name.decode("utf-8", "surrogateescape"))
    except (IndexError, ValueError):
        return None
    return paths


def _safe_relative(path: str) -> bool:
    parts = path.split("/")
    return bool(path) and not path.startswith("/") and ".." not in parts and "" not in parts


def ignored(levels: Iterable[Level], path: str) -> bool:
    """Whether ``path`` (posix, from the top; a folder ends with "/") is ignored: the deepest level that matches decides."""
    for base, spec in reversed(list(levels)):
        sub = path[len(base) + 1 :] if base else path
        verdict = spec.check_file(sub).include
        if verdict is not None:
            return verdict
    return False


def repository_files(root: Path, check: Callable[[], None] | None = None) -> list[str] | None:
    """What git would list under ``root`` (relative to it, posix, unsorted); None outside a work tree."""
    found = work_tree_top(root)
    if found is None:
        return None
    top, git_dir = found
    real_root = Path(os.path.realpath(root))
    rel_root = real_root.relative_to(top).as_posix()
    rel_root = "" if rel_root == "." else rel_root
    levels: list[Level] = []
    for extra in (global_excludes_file(), _common_dir(git_dir) / "info" / "exclude"):
        spec = _rules_in(extra) if extra is not None else None
        if spec is not None:
            levels.append(("", spec))
    # The folders from the top down to root: their rules apply, and an ignored one hides everything.
    hidden = False
    folder = top
    base = ""
    for part in rel_root.split("/") if rel_root else []:
        spec = _rules_in(folder / ".gitignore")
        if spec is not None:
            levels.append((base, spec))
        base = f"{base}/{part}" if base else part
        folder = folder / part
        if ignored(levels, base + "/"):
            hidden = True
            break
    files: set[str] = set()
    if not hidden:
        files.update(_walk(real_root, rel_root, levels, check))
    prefix = rel_root + "/" if rel_root else ""
    for path in tracked_files(git_dir) or []:
        if path.startswith(prefix) and _safe_relative(path):
            rel = path[len(prefix) :]
            if rel not in files and os.path.isfile(real_root / rel):  # deleted but still in the index: gone
                files.add(rel)
    return list(files)


def _is_file(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file()  # through a symlink, as git's listing then is_file() saw it
    except OSError:
        return False


def _walk(root: Path, rel_root: str, levels: list[Level], check: Callable[[], None] | None) -> list[str]:
    """The files under ``root`` that no rule ignores (relative to root)."""
    out: list[str] = []
    stack: list[tuple[Path, str, list[Level]]] = [(root, rel_root, levels)]
    visited = 0
    while stack:
        folder, rel, current = stack.pop()
        visited += 1
        if check is not None and visited % 256 == 0:
            check()
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except OSError:
            continue
        if any(e.name == ".gitignore" for e in entries):
            spec = _rules_in(folder / ".gitignore")
            if spec is not None:
                current = [*current, (rel, spec)]
        prefix = rel + "/" if rel else ""
        for entry in entries:
            if entry.name == ".git":
                continue
            path = prefix + entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                child = Path(entry.path)
                if git_dir_of(child) is None and not ignored(current, path + "/"):
                    stack.append((child, path, current))
            elif not ignored(current, path) and _is_file(entry):
                out.append(path[len(rel_root) + 1 :] if rel_root else path)
    return out


__all__ = [
    "global_excludes_file",
    "ignored",
    "parse_rules",
    "repository_files",
    "tracked_files",
    "work_tree_top",
]
