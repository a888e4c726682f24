"""Which prompt files the user accepted as they are: ``SYSTEM.md``, ``APPEND_SYSTEM.md``, prompt
templates and skills' ``SKILL.md``, the user's own and a trusted folder's.

They decide what the model is told and what ``/name`` sends, so they are guarded as hooks and MCP
servers are (:mod:`agent_tui.agent.trust`): a fingerprint of each (its path and what loads from
it) is remembered in ``trust.json`` once accepted, and a file new or changed since (written by the
model, by a repository, by anyone) is not loaded until the user accepts it. The app asks, showing
each one; print, JSON, RPC and ACP modes say so in one line (a loading warning);
``agent-tui trust --yes`` and ``--trust-project`` accept them as they are.

As for hooks: the user's own files (agent-tui's config dir, ``~/.pi/agent``, ``~/.claude``,
``~/.agents``) are screened everywhere; a folder's own (``.agent-tui/``, ``.pi/``, ``.claude/``,
``.agents/skills`` up to the repository's root) once the folder is trusted. An untrusted folder's
own never load (as Claude Code loads nothing of a project's before its trust dialog is answered
yes): every face says so in one line naming them and how to trust the folder
(:meth:`Screened.untrusted_notice`). The first time a place is screened (nothing recorded for it) what is
there is accepted as it is. Files named by a flag (``--skill``, ``--prompt-template``,
``--system-prompt``) are the user's choice for this run and never wait. Keys in the store:
``prompts:user`` and ``prompts:`` + the folder's real path (apart from the hooks' own, so a store
made before this module accepts what is there once, not everything waiting at once).
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from agent_tui.agent.prompt_files import Places, PromptFlags, SystemPromptFiles, read_text
from agent_tui.agent.skills import Skill, skill_dirs
from agent_tui.agent.templates import Template, template_dirs
from agent_tui.agent.trust import USER, TrustStore
from agent_tui.store.redact import redact_text
from agent_tui.terminal_text import visible_line

PREFIX = "prompts:"
USER_KEY = PREFIX + USER
PREVIEW_CHARS = 60
DIFF_LINES = 8
#: Accepted texts up to this size are kept (beside trust.json) so a change can be shown as a diff.
MAX_KEPT = 64_000
#: The state ``agent-tui trust`` gives an untrusted folder's own prompt files.
UNTRUSTED = "not loaded (folder not trusted)"


def folder_key(cwd: str | Path) -> str:
    return PREFIX + os.path.realpath(cwd)


@dataclass(frozen=True, slots=True)
class Item:
    """One prompt file as it would load: where it is kept (store key), its fingerprints, a label."""

    key: str
    kind: str  # "system", "append", "template", "skill"
    path: str
    content: str  # fingerprint of what loads from it
    place: str  # fingerprint of its path alone (tells "new" from "changed")
    label: str  # "template /ship (.pi/prompts/ship.md)"
    preview: str  # what it says, first words
    text: str = ""  # what it says, whole (kept once accepted, to show what changed)

    def line(self, known: set[str] | None) -> str:
        state = "changed since you accepted it" if known and self.place in known else "is new"
        return visible_line(redact_text(f"{self.label} {state}: {self.preview}")[0])


@dataclass(frozen=True, slots=True)
class Waiting:
    """A prompt file not loaded until accepted: (store key, its fingerprints, one line)."""

    key: str
    prints: tuple[str, ...]
    line: str
    text: str = ""
    #: What changed since the accepted text (unified diff lines, at most DIFF_LINES; empty: new,
    #: or the accepted text was not kept)
    diff: tuple[str, ...] = ()


@dataclass(slots=True)
class Screened:
    prompt: SystemPromptFiles
    templates: dict[str, Template]
    skills: list[Skill]
    waiting: list[Waiting] = field(default_factory=list)
    #: The untrusted folder's own prompt files (labels): never loaded until the folder is trusted.
    untrusted: list[str] = field(default_factory=list)

    def notice(self) -> str | None:
        """The one line every face says (None when nothing waits)."""
        if not self.waiting:
            return None
        return (
            "not loaded (new or changed since you last accepted them): "
            + "; ".join(w.line for w in self.waiting)
            + "; accept them in the app, with `agent-tui trust --yes`, or start with --trust-project"
        )

    def untrusted_notice(self) -> str | None:
        """The one line every face says about an untrusted folder's own prompt files (None: none)."""
        if not self.untrusted:
            return None
        return visible_line(
            "not loaded (this folder is not trusted): "
            + ", ".join(self.untrusted)
            + "; trust it with `agent-tui trust --yes`, or start with --trust-project"
        )


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _under(path: str | Path, roots: Iterable[Path]) -> bool:
    for root in roots:
        with contextlib.suppress(ValueError):
            Path(path).relative_to(root)
            return True
    return False


def _user_roots(places: Places) -> list[Path]:
    """Where the user's own prompt files are (named precisely: a config dir may hold the project)."""
    names = ("prompts", "skills", "SYSTEM.md", "APPEND_SYSTEM.md")
    return [
        *(d / name for d in places.user_dirs() for name in names),
        places.home / ".claude" / "commands",
        places.home / ".claude" / "skills",
        places.home / ".agents" / "skills",
    ]


def _shown(path: str, places: Places) -> str:
    with contextlib.suppress(ValueError):
        return str(Path(path).relative_to(places.cwd))
    with contextlib.suppress(ValueError):
        return "~/" + str(Path(path).relative_to(places.home))
    return path


def _first_words(text: str) -> str:
    first = next((line.strip() for line in text.split("\n") if line.strip()), "")
    return first[:PREVIEW_CHARS] + ("…" if len(first) > PREVIEW_CHARS else "") if first else "(empty)"


def file_sha(path: str) -> str | None:
    """The sha256 of the file's text as :func:`read_text` reads it (None: it cannot be read)."""
    return _read(path)[0]


def _read(path: str) -> tuple[str | None, str]:
    try:
        text = read_text(Path(path))
    except OSError:
        return None, ""
    return hashlib.sha256(text.encode("utf-8")).hexdigest(), text


def _texts_path(store: TrustStore) -> Path:
    return store.path.with_name("trust-prompts.json")


def _kept(store: TrustStore) -> dict[str, str]:
    """The accepted texts by place fingerprint (empty when none were kept or the file is bad)."""
    try:
        data = json.loads(_texts_path(store).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): v for k, v in data.items() if isinstance(v, str)} if isinstance(data, dict) else {}


def _keep(store: TrustStore, texts: dict[str, str]) -> None:
    """Remember accepted texts (each up to :data:`MAX_KEPT`); a failure to write loses only the diff."""
    texts = {k: v for k, v in texts.items() if len(v) <= MAX_KEPT}
    if not texts:
        return
    path = _texts_path(store)
    data = {**_kept(store), **texts}
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(data, ensure_ascii=False, sort_keys=True), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()


def diff_lines(old: str | None, new: str) -> tuple[str, ...]:
    """What changed from ``old`` to ``new``: at most :data:`DIFF_LINES` ``-``/``+`` lines (redacted,
    control characters visible), then how many more; empty when ``old`` is unknown."""
    if old is None:
        return ()
    changed = [
        line
        for line in difflib.unified_diff(old.split("\n"), new.split("\n"), lineterm="", n=0)
        if not line.startswith(("---", "+++", "@@"))
    ]
    shown = [visible_line(redact_text(line[:120])[0]) for line in changed[:DIFF_LINES]]
    if len(changed) > DIFF_LINES:
        shown.append(f"… {len(changed) - DIFF_LINES} more changed lines")
    return tuple(shown)


def collect(
    places: Places,
    flags: PromptFlags,
    prompt: SystemPromptFiles,
    templates: dict[str, Template],
    skills: Sequence[Skill],
    *,
    trusted: bool,
) -> tuple[list[tuple[Item, Any]], list[Skill]]:
    """(each screened prompt file with what it loads, the skills with their file's sha256 set).
    The files flags name are left out; a folder's own are kept under its key, trusted or not (an
    untrusted folder's are then left out of what loads: :func:`screen`)."""
    user = _user_roots(places)
    project = folder_key(places.cwd)

    def key_of(path: str) -> str | None:
        return USER_KEY if _under(path, user) else project

    found: list[tuple[Item, Any]] = []

    def add(
        kind: str, path: str, loads: list[Any], label: str, text: str, value: Any, preview: str | None = None
    ) -> None:
        key = key_of(path)
        if key is not None:
            content = _digest([kind, path, *loads])
            place = _digest(["path", kind, path])
            shown = preview if preview is not None else _first_words(text)
            found.append((Item(key, kind, path, content, place, label, shown, text), value))

    if prompt.custom is not None and prompt.custom_source and flags.system_prompt is None:
        source = prompt.custom_source
        add(
            "system",
            source,
            [prompt.custom],
            f"SYSTEM.md ({_shown(source, places)})",
            prompt.custom,
            None,
        )
    if not flags.append_system_prompt:
        for text, source in zip(prompt.appends, prompt.append_sources, strict=False):
            label = f"APPEND_SYSTEM.md ({_shown(source, places)})"
            add("append", source, [text], label, text, source)
    discovered = [folder for folder, _ in template_dirs(places)] if not flags.no_templates else []
    for template in templates.values():
        if _under(template.path, discovered):
            loads: list[Any] = [template.name, template.description, template.argument_hint, template.body]
            label = f"template /{template.name} ({_shown(template.path, places)})"
            first = _first_words(template.body).rstrip("…")
            said = template.description and not template.description.startswith(first[: PREVIEW_CHARS - 1])
            head = [f"description: {template.description}"] if said else []  # from the frontmatter
            head += [f"argument-hint: {template.argument_hint}"] if template.argument_hint else []
            add("template", template.path, loads, label, "\n".join([template.body, *head]), template.name)
    skill_folders = skill_dirs(places) if not flags.no_skills else []
    sealed: list[Skill] = []
    for skill in skills:
        sha, whole = _read(skill.path)
        skill = replace(skill, sha256=sha)
        sealed.append(skill)
        if _under(skill.path, skill_folders):
            loads = [skill.name, skill.description, skill.model_invocable, sha]
            label = f"skill {skill.name} ({_shown(skill.path, places)})"
            add("skill", skill.path, loads, label, whole, skill.name, _first_words(skill.description))
    return found, sealed


def screen(
    store: TrustStore | None,
    places: Places,
    flags: PromptFlags,
    prompt: SystemPromptFiles,
    templates: dict[str, Template],
    skills: Sequence[Skill],
    *,
    trusted: bool,
    accept_all: bool = False,
) -> Screened:
    """What may load (accepted as it is) and what waits (see the module doc). ``trusted``: the
    folder is trusted (its own files are screened); ``accept_all`` (``--trust-project``): accept
    everything as it is now. Without a store nothing is screened."""
    found, sealed = collect(places, flags, prompt, templates, skills, trusted=trusted)
    result = Screened(prompt, dict(templates), sealed)
    if store is None:
        return result
    project = folder_key(places.cwd)
    held: list[tuple[Item, Any]] = []
    if not trusted:  # the folder's own never load; nothing about them is remembered
        held = [(item, value) for item, value in found if item.key == project]
        result.untrusted = [visible_line(redact_text(item.label)[0]) for item, _ in held]
        found = [(item, value) for item, value in found if item.key != project]
    keys = {USER_KEY, *(item.key for item, _ in found)}
    if trusted:
        keys.add(project)
    accepted = {key: store.accepted(key) for key in keys}
    fresh: dict[str, list[str]] = {}
    texts: dict[str, str] = {}
    kept: dict[str, str] | None = None
    for item, value in found:
        known = accepted[item.key]
        if accept_all or known is None:
            fresh.setdefault(item.key, []).extend([item.content, item.place])
            texts[item.place] = item.text
        elif item.content not in known:
            held.append((item, value))
            kept = _kept(store) if kept is None else kept
            diff = diff_lines(kept.get(item.place), item.text) if item.place in known else ()
            line = item.line(known)
            result.waiting.append(Waiting(item.key, (item.content, item.place), line, item.text, diff))
        elif item.place not in known:  # accepted before the path was remembered with it
            fresh.setdefault(item.key, []).append(item.place)
    for key in keys:
        if key in fresh or accepted[key] is None:
            with contextlib.suppress(OSError):
                store.accept(key, fresh.get(key, []))
    _keep(store, texts)
    for item, value in held:
        if item.kind == "system":
            result.prompt = replace(result.prompt, custom=None, custom_source=None)
        elif item.kind == "append":
            pairs = zip(result.prompt.appends, result.prompt.append_sources, strict=False)
            left = [(t, s) for t, s in pairs if s != value]
            appends = tuple(t for t, _ in left)
            result.prompt = replace(result.prompt, appends=appends, append_sources=tuple(s for _, s in left))
        elif item.kind == "template":
            result.templates.pop(value, None)
        else:
            result.skills = [s for s in result.skills if s.name != value]
    return result


def states(
    store: TrustStore,
    places: Places,
    flags: PromptFlags,
    prompt: SystemPromptFiles,
    templates: dict[str, Template],
    skills: Sequence[Skill],
    *,
    trusted: bool,
) -> list[tuple[Item, str]]:
    """Each screened prompt file and its state (``accepted``, ``waiting``, or, an untrusted
    folder's own, ``not loaded (folder not trusted)``), nothing written: ``agent-tui trust``
    lists them."""
    found, _ = collect(places, flags, prompt, templates, skills, trusted=trusted)
    accepted = {item.key: store.accepted(item.key) for item, _ in found}
    project = folder_key(places.cwd)
    rows = []
    for item, _ in found:
        known = accepted[item.key]
        if not trusted and item.key == project:
            rows.append((item, UNTRUSTED))
            continue
        rows.append((item, "accepted" if known is None or item.content in known else "waiting"))
    return rows


def accept(store: TrustStore | None, waiting: Sequence[Waiting] | Sequence[Item]) -> None:
    """The user said yes: remember each as accepted (raises OSError when the store cannot be written)."""
    if store is None:
        return
    keys: dict[str, list[str]] = {}
    texts: dict[str, str] = {}
    for one in waiting:
        prints = one.prints if isinstance(one, Waiting) else (one.content, one.place)
        keys.setdefault(one.key, []).extend(prints)
        texts[prints[1]] = one.text
    for key, found in keys.items():
        store.accept(key, found)
    _keep(store, texts)


__all__ = [
    "UNTRUSTED",
    "USER_KEY",
    "Item",
    "Screened",
    "Waiting",
    "accept",
    "collect",
    "diff_lines",
    "file_sha",
    "folder_key",
    "screen",
    "states",
]
