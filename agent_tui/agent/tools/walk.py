"""Listing a directory tree the way fd and ripgrep do (respecting .gitignore), and fd-style globs.

Inside a git work tree the files are those ``git ls-files --cached --others
--exclude-standard`` would list (so .gitignore, .git/info/exclude and the global
excludes apply), found without running git (see ``gitignore``); elsewhere a walk
that skips ``.git`` and ``node_modules``. Hidden files
are included, as pi runs fd and rg with ``--hidden``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

from agent_tui.agent.tools.gitignore import repository_files

SKIP_DIRS = frozenset({".git", "node_modules"})


def list_tree(root: Path, check: Callable[[], None] | None = None) -> tuple[list[str], list[str]]:
    """(files, directories) under ``root``, as posix paths relative to it, sorted."""
    files = repository_files(root, check)
    dirs: set[str] = set()
    if files is not None:
        for rel in files:
            parent = os.path.dirname(rel)
            while parent and parent not in dirs:
                dirs.add(parent)
                parent = os.path.dirname(parent)
        return sorted(files), sorted(dirs)
    found: list[str] = []
    for count, (current, subdirs, names) in enumerate(os.walk(root)):
        if check is not None and count % 256 == 0:
            check()
        subdirs[:] = sorted(d for d in subdirs if d not in SKIP_DIRS)
        rel_dir = os.path.relpath(current, root)
        prefix = "" if rel_dir == "." else rel_dir.replace(os.sep, "/") + "/"
        for d in subdirs:
            dirs.add(prefix + d)
        found.extend(prefix + n for n in names)
    return sorted(found), sorted(dirs)


def glob_to_regex(pattern: str) -> str:
    """A glob as a regex over posix paths: ``**`` crosses directories, ``*`` and ``?`` do not; ``{a,b}``, ``[...]``."""
    out: list[str] = []
    i = 0
    n = len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**/", i):
                out.append("(?:.*/)?")
                i += 3
                continue
            if pattern.startswith("**", i):
                out.append(".*")
                i += 2
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = pattern.find("]", i + 1)
            if end == -1:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = end + 1
                continue
        elif c == "{":
            end = pattern.find("}", i + 1)
            if end == -1:
                out.append(re.escape(c))
            else:
                options = pattern[i + 1 : end].split(",")
                out.append("(?:" + "|".join(glob_to_regex(o) for o in options) + ")")
                i = end + 1
                continue
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


class Glob:
    """fd's matching: a pattern without ``/`` matches the file name at any depth; with ``/``, the path
    relative to the search directory. All-lowercase patterns ignore case (smart case)."""

    def __init__(self, pattern: str, *, ignore_case: bool | None = None) -> None:
        pattern = re.sub(r"^(?:\./)+", "", pattern)
        self.pattern = pattern
        self.by_path = "/" in pattern
        if ignore_case is None:
            ignore_case = pattern == pattern.lower()
        self.regex = re.compile("^" + glob_to_regex(pattern) + "$", re.IGNORECASE if ignore_case else 0)

    def match(self, rel_path: str) -> bool:
        target = rel_path if self.by_path else rel_path.rsplit("/", 1)[-1]
        return self.regex.match(target) is not None
