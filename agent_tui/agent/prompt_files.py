"""The files a user writes to shape the agent: where they are looked for, their YAML frontmatter,
and the system prompt's own files (``SYSTEM.md``, ``APPEND_SYSTEM.md``) and flags.

Everything read here is text for the model: it is never markup, never run, never a reason to
widen a permission. A file that cannot be read or parsed is one warning, never a crash.

Where (:class:`Places`), project before user, so the project's file wins:

- agent-tui's own: the project's ``.agent-tui/`` and the user config dir (beside config.toml);
- pi's: the project's ``.pi/`` and ``~/.pi/agent/`` (``PI_CODING_AGENT_DIR`` moves it, as in pi).

``SYSTEM.md`` replaces the default prompt, ``APPEND_SYSTEM.md`` is added to it; the first found
of each is used (files of the same name are not combined, as in pi). ``--system-prompt`` and
``--append-system-prompt`` (``TEXT``, ``@FILE`` or the path of an existing file, as pi takes it)
win over the files; ``--no-context-files`` leaves out AGENTS.md / CLAUDE.md.
"""

from __future__ import annotations

import argparse
import os
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_tui.agent.tool_selection import ToolSelection

#: Bigger files are skipped with a warning: a prompt file is read whole, at every start.
MAX_FILE_BYTES = 1_000_000

PI_AGENT_DIR_ENV = "PI_CODING_AGENT_DIR"


class PromptFileError(Exception):
    """A flag names a file that cannot be read; the message is one line saying which."""


class FrontmatterError(Exception):
    """The YAML between the ``---`` lines does not parse, or is not a mapping."""


@dataclass(frozen=True, slots=True)
class Places:
    """The folders user files come from: the project (``cwd``), the home, agent-tui's config dir."""

    cwd: Path
    home: Path
    config_dir: Path | None = None
    pi_agent_dir: Path | None = None  # None: ``home/.pi/agent``

    @classmethod
    def here(
        cls, cwd: str | Path, config_dir: str | Path | None, env: Mapping[str, str] | None = None
    ) -> Places:
        """The places for this process: ``HOME`` and ``PI_CODING_AGENT_DIR`` from ``env``."""
        env = os.environ if env is None else env
        home = Path(env["HOME"]) if env.get("HOME") else Path.home()
        pi_dir = env.get(PI_AGENT_DIR_ENV)
        return cls(
            Path(cwd),
            home,
            Path(config_dir) if config_dir is not None else None,
            Path(pi_dir).expanduser() if pi_dir else None,
        )

    @property
    def pi_dir(self) -> Path:
        return self.pi_agent_dir if self.pi_agent_dir is not None else self.home / ".pi" / "agent"

    def project_dirs(self) -> list[Path]:
        """agent-tui's project folder, then pi's."""
        return [self.cwd / ".agent-tui", self.cwd / ".pi"]

    def user_dirs(self) -> list[Path]:
        """agent-tui's user config dir (when known), then pi's agent dir."""
        return [d for d in (self.config_dir, self.pi_dir) if d is not None]


def read_text(path: Path) -> str:
    """A user file's text: UTF-8 (undecodable bytes replaced), without a BOM, newlines as ``\\n``.

    Raises OSError (a missing or unreadable file, or one over :data:`MAX_FILE_BYTES`).
    """
    with path.open("rb") as f:
        data = f.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise OSError(f"bigger than {MAX_FILE_BYTES:,} bytes")
    text = data.decode("utf-8", errors="replace").removeprefix("\ufeff")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def foreign_writable(path: str | Path) -> str | None:
    """Why a user other than this one (or root) could write ``path`` (a folder or a file): it is
    theirs, or every user's, or a group's that has other members; None when it could not (or
    cannot be looked at: the caller's read fails then). Whoever can write a folder can put an
    AGENTS.md in it, and that shapes the system prompt."""
    if not hasattr(os, "geteuid"):
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    if st.st_uid not in (os.geteuid(), 0):
        return f"owned by user {st.st_uid}"
    if st.st_mode & stat.S_IWOTH:
        return "writable by every user"
    if st.st_mode & stat.S_IWGRP and _group_has_others(st.st_gid, st.st_uid):
        return f"writable by group {st.st_gid}, which has other members"
    return None


def _group_has_others(gid: int, owner: int) -> bool:
    """Whether a user other than ``owner`` (and root) is in group ``gid`` (a per-user group, as
    most systems make one for each user, has none)."""
    import grp
    import pwd

    try:
        group = grp.getgrgid(gid)
        name = pwd.getpwuid(owner).pw_name
    except KeyError:
        return True  # an unknown group or owner: assume the worst
    if any(member not in (name, "root") for member in group.gr_mem):
        return True
    return any(u.pw_gid == gid and u.pw_uid not in (owner, 0) for u in pwd.getpwall())


def context_dirs(cwd: str | Path, home: str | Path | None = None) -> list[Path]:
    """The folders AGENTS.md / CLAUDE.md are read from, the root-most first: ``cwd`` and its
    parents up to the repository's root (the first holding ``.git``) or the home directory,
    whichever comes first; only ``cwd`` when neither is above it (pi reads every parent up to
    ``/``, where ``/tmp`` or a shared folder could hold one). A folder another user can write
    (:func:`foreign_writable`) is left out."""
    current = Path(cwd).resolve()
    top = Path(home).resolve() if home is not None else Path.home().resolve()
    walked: list[Path] = []
    while True:
        walked.append(current)
        if current == top or (current / ".git").exists():
            break
        if current.parent == current:  # neither the repository's root nor home above: cwd only
            walked = walked[:1]
            break
        current = current.parent
    return [d for d in reversed(walked) if foreign_writable(d) is None]


def split_frontmatter(text: str) -> tuple[str | None, str]:
    """(the YAML between a leading ``---`` line and the next ``---``, the body stripped), as pi
    splits it; (None, text) when there is no frontmatter."""
    if not text.startswith("---"):
        return None, text
    end = text.find("\n---", 3)
    if end == -1:
        return None, text
    return text[4:end], text[end + 4 :].strip()


def parse_frontmatter(text: str) -> tuple[dict[str, Any], str]:
    """(the frontmatter as a mapping, the body). Raises FrontmatterError for YAML that does not
    parse or is not a mapping. PyYAML is imported only when a file has frontmatter."""
    raw, body = split_frontmatter(text)
    if raw is None or not raw.strip():
        return {}, body
    import yaml

    try:
        data = yaml.load(
            raw, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        )  # libyaml when built with it
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" (line {mark.line + 2})" if mark is not None else ""
        problem = getattr(e, "problem", None) or type(e).__name__
        raise FrontmatterError(f"invalid YAML frontmatter{where}: {problem}") from e
    if data is None:
        return {}, body
    if not isinstance(data, dict):
        raise FrontmatterError("the frontmatter is not a mapping of keys to values")
    return {str(k): v for k, v in data.items()}, body


@dataclass(frozen=True, slots=True)
class SystemPromptFiles:
    """What replaces or extends the default system prompt, and where each part came from."""

    custom: str | None = None  # replaces the default prompt (SYSTEM.md or --system-prompt)
    custom_source: str | None = None  # its path, or "--system-prompt"
    appends: tuple[str, ...] = ()  # added after it (APPEND_SYSTEM.md or --append-system-prompt)
    append_sources: tuple[str, ...] = ()
    context_files: bool = True  # False: --no-context-files (no AGENTS.md / CLAUDE.md)
    warnings: tuple[str, ...] = field(default=())

    @property
    def append_text(self) -> str:
        return "\n\n".join(a for a in self.appends if a.strip())


def find_prompt_file(places: Places, name: str) -> Path | None:
    """The first ``name`` in the project folders, then the user folders."""
    for folder in [*places.project_dirs(), *places.user_dirs()]:
        candidate = folder / name
        if candidate.is_file():
            return candidate
    return None


def flag_text(value: str, cwd: Path, flag: str) -> tuple[str, str]:
    """A ``--system-prompt`` / ``--append-system-prompt`` value as (text, source): ``@FILE`` is
    that file (PromptFileError if it cannot be read), a path to an existing file is read too
    (pi's rule), anything else is the text itself."""
    if value.startswith("@") and len(value) > 1:
        path = (cwd / Path(value[1:]).expanduser()).resolve()
        try:
            return read_text(path), str(path)
        except OSError as e:
            raise PromptFileError(f"agent-tui: {flag} {value}: {e.strerror or e}") from e
    if "\n" not in value and len(value) < 4096:
        path = cwd / Path(value).expanduser()
        try:
            is_file = path.is_file()
        except (OSError, ValueError):
            is_file = False  # not a path at all: the value is text
        if is_file:
            try:
                return read_text(path), str(path.resolve())
            except OSError as e:
                raise PromptFileError(f"agent-tui: {flag} {value}: {e.strerror or e}") from e
    return value, flag


def flag_path(value: str, cwd: Path) -> Path:
    """A path a flag names (``--skill``, ``--prompt-template``): ``~`` expanded, relative to ``cwd``."""
    return cwd / Path(value.strip()).expanduser()


def flag_files(
    values: Sequence[str],
    cwd: Path,
    flag: str,
    folder_files: Callable[[Path], Iterable[Path]],
    warnings: list[str],
) -> Iterator[Path]:
    """The files a repeatable path flag names, in order: a folder's (``folder_files``) or a Markdown
    file itself; each value that is neither is one line in ``warnings`` (``--skill x: skipped: …``)."""
    for raw in values:
        target = flag_path(raw, cwd)
        if target.is_dir():
            yield from folder_files(target)
        elif target.is_file() and target.suffix == ".md":
            yield target
        else:
            what = "not a Markdown file or a folder" if target.exists() else "no such file or folder"
            warnings.append(f"{flag} {raw}: skipped: {what}")


@dataclass(frozen=True, slots=True)
class PromptFlags:
    """``--system-prompt``, ``--append-system-prompt`` (repeatable), ``--no-context-files``, and pi's
    ``--skill`` / ``--prompt-template`` (repeatable paths, loaded after the discovered ones) with
    ``--no-skills`` / ``--no-prompt-templates`` (nothing discovered; the explicit paths still load)."""

    system_prompt: str | None = None
    append_system_prompt: tuple[str, ...] = ()
    no_context_files: bool = False
    skill_paths: tuple[str, ...] = ()
    no_skills: bool = False
    template_paths: tuple[str, ...] = ()
    no_templates: bool = False
    #: pi's --tools / --exclude-tools / --no-tools / --no-builtin-tools (None: every tool)
    tools: ToolSelection | None = None

    @classmethod
    def of(cls, args: object) -> PromptFlags:
        """The flags of a parsed command line (absent ones are the defaults)."""
        system = getattr(args, "system_prompt", None)
        appended: Sequence[str] = getattr(args, "append_system_prompt", None) or ()
        skills: Sequence[str] = getattr(args, "skill", None) or ()
        templates: Sequence[str] = getattr(args, "prompt_template", None) or ()
        return cls(
            str(system) if system is not None else None,
            tuple(str(a) for a in appended),
            bool(getattr(args, "no_context_files", False)),
            tuple(str(a) for a in skills),
            bool(getattr(args, "no_skills", False)),
            tuple(str(a) for a in templates),
            bool(getattr(args, "no_prompt_templates", False)),
            getattr(args, "tool_selection", None),  # settled by the command line (cli.pi_flags)
        )


def add_resource_arguments(parser: argparse.ArgumentParser) -> None:
    """pi's ``--skill`` / ``--prompt-template`` and ``-ns`` / ``-np`` (the app, print mode and ACP
    take them alike; :meth:`PromptFlags.of` reads them back)."""
    parser.add_argument(
        "--skill",
        metavar="PATH",
        action="append",
        default=[],
        help="load a skill: a SKILL.md (or other .md) file, or a folder searched for them; repeatable",
    )
    parser.add_argument(
        "-ns", "--no-skills", action="store_true", help="load no discovered skills (--skill paths still load)"
    )
    parser.add_argument(
        "--prompt-template",
        metavar="PATH",
        action="append",
        default=[],
        help="load a prompt template: a .md file, or a folder's .md files; repeatable",
    )
    parser.add_argument(
        "-np",
        "--no-prompt-templates",
        action="store_true",
        help="load no discovered prompt templates (--prompt-template paths still load)",
    )


def system_prompt_files(places: Places, flags: PromptFlags | None = None) -> SystemPromptFiles:
    """The flags' texts, else the first ``SYSTEM.md`` / ``APPEND_SYSTEM.md`` found.
    Raises PromptFileError for a flag's unreadable ``@FILE``."""
    flags = flags if flags is not None else PromptFlags()
    system_prompt = flags.system_prompt
    append_system_prompt = flags.append_system_prompt
    warnings: list[str] = []

    def discovered(name: str) -> tuple[str, str] | None:
        path = find_prompt_file(places, name)
        if path is None:
            return None
        try:
            return read_text(path), str(path)
        except OSError as e:
            warnings.append(f"{path}: not read: {e.strerror or e}")
            return None

    custom: tuple[str, str] | None
    if system_prompt is not None:
        custom = flag_text(system_prompt, places.cwd, "--system-prompt")
    else:
        custom = discovered("SYSTEM.md")
    appends: list[tuple[str, str]]
    if append_system_prompt:
        appends = [flag_text(v, places.cwd, "--append-system-prompt") for v in append_system_prompt]
    else:
        found = discovered("APPEND_SYSTEM.md")
        appends = [found] if found is not None else []
    if custom is not None and not custom[0].strip():
        custom = None  # an empty SYSTEM.md would leave the model without a prompt: the default stays
    return SystemPromptFiles(
        custom=custom[0] if custom else None,
        custom_source=custom[1] if custom else None,
        appends=tuple(text for text, _ in appends),
        append_sources=tuple(source for _, source in appends),
        context_files=not flags.no_context_files,
        warnings=tuple(warnings),
    )


__all__ = [
    "MAX_FILE_BYTES",
    "FrontmatterError",
    "Places",
    "PromptFileError",
    "PromptFlags",
    "SystemPromptFiles",
    "context_dirs",
    "find_prompt_file",
    "flag_files",
    "flag_text",
    "foreign_writable",
    "parse_frontmatter",
    "read_text",
    "split_frontmatter",
    "system_prompt_files",
]
