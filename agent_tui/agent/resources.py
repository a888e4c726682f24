"""What a user brings to shape the agent, loaded once per start: the system prompt's files and
flags (:mod:`agent_tui.agent.prompt_files`), prompt templates (:mod:`agent_tui.agent.templates`)
and skills (:mod:`agent_tui.agent.skills`).

The faces (the app, print mode) load them; the agent loop puts the prompt parts and the skill
list in the system prompt's sections; typed text goes through :meth:`Resources.expand` before
it becomes the user message. The session commands (``agent-tui context`` and the rest) never
load any of it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from agent_tui.agent import prompt_trust
from agent_tui.agent.prompt_files import Places, PromptFlags, SystemPromptFiles, system_prompt_files
from agent_tui.agent.prompt_trust import Waiting
from agent_tui.agent.skills import Skill, expand_skill, load_skills, skills_prompt
from agent_tui.agent.system_prompt import context_files
from agent_tui.agent.templates import Template, load_templates
from agent_tui.agent.templates import expand as expand_template
from agent_tui.agent.tool_selection import ToolSelection
from agent_tui.agent.trust import TrustStore
from agent_tui.projection.describe import plural


@dataclass(frozen=True, slots=True)
class Resources:
    prompt: SystemPromptFiles = field(default_factory=SystemPromptFiles)
    templates: dict[str, Template] = field(default_factory=dict)
    skills: dict[str, Skill] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    tools: ToolSelection | None = None  # the tool flags' selection (None: every tool)
    #: Prompt files new or changed since the user accepted them: not loaded (agent.prompt_trust)
    waiting: tuple[Waiting, ...] = ()
    trust_path: Path | None = None  # the trust store they were screened against
    #: The folder's own prompt files left out because it is not trusted (their labels)
    untrusted: tuple[str, ...] = ()
    #: False in a folder the user answered "not trusted": its AGENTS.md / CLAUDE.md are left out
    project_context: bool = True

    def expand(self, text: str) -> str | None:
        """``/skill:name ARGS`` or ``/template ARGS`` expanded; None for any other text.
        Raises :class:`agent_tui.agent.skills.SkillError` when a skill's file went away."""
        stripped = text.strip()
        if not stripped.startswith("/") or stripped.startswith("//"):
            return None
        expanded = expand_skill(stripped, self.skills)
        if expanded is not None:
            return expanded
        return expand_template(stripped, self.templates)

    def skills_prompt(self, tool_names: Collection[str]) -> str | None:
        return skills_prompt(self.skills.values(), tool_names)

    def command_names(self) -> list[str]:
        """Every ``/`` command these resources add (templates, then ``skill:NAME``)."""
        return [*self.templates, *(f"skill:{name}" for name in self.skills)]

    def describe(self) -> list[str]:
        """What was loaded, one line each (``/session`` and the panel show them)."""
        prompt = self.prompt
        lines = [
            f"system prompt: {prompt.custom_source}"
            if prompt.custom_source
            else "system prompt: the default",
        ]
        lines += [f"appended: {source}" for source in prompt.append_sources]
        if not prompt.context_files:
            lines.append("context files: off (--no-context-files)")
        if self.templates:
            lines.append(
                f"prompt templates ({len(self.templates)}): " + ", ".join(f"/{n}" for n in self.templates)
            )
        if self.skills:
            hidden = sum(1 for s in self.skills.values() if not s.model_invocable)
            note = f", {hidden} only by /skill:NAME" if hidden else ""
            lines.append(f"skills ({len(self.skills)}{note}): " + ", ".join(self.skills))
        lines += [f"warning: {w}" for w in self.warnings]
        return lines

    def summary(self) -> str:
        """One short line: which prompt files and how many templates and skills."""
        prompt = self.prompt
        parts = []
        if prompt.custom_source:
            parts.append(f"prompt {Path(prompt.custom_source).name}")
        parts += [f"+{Path(s).name}" for s in prompt.append_sources]
        if not prompt.context_files:
            parts.append("no context files")
        if self.templates:
            parts.append(plural(len(self.templates), "template"))
        if self.skills:
            parts.append(plural(len(self.skills), "skill"))
        return " · ".join(parts)


def load_resources(
    cwd: str | Path,
    config_dir: str | Path | None,
    *,
    flags: PromptFlags | None = None,
    reserved: Collection[str] = (),
    env: Mapping[str, str] | None = None,
    prompt: SystemPromptFiles | None = None,
    trust_store: TrustStore | None = None,
    trust_project: bool = False,
    screen: bool = True,
) -> Resources:
    """Everything, for a start in ``cwd`` with agent-tui's config in ``config_dir`` (``prompt``:
    the system prompt's parts already read), a prompt file new or changed since the user accepted
    it left out (:mod:`agent_tui.agent.prompt_trust`, against ``trust_store``, None: the default
    one; ``trust_project``: accept them as they are; ``screen=False``: load them all). Raises
    :class:`agent_tui.agent.prompt_files.PromptFileError` for a flag's unreadable file."""
    places = Places.here(cwd, config_dir, env)
    flags = flags if flags is not None else PromptFlags()
    if prompt is None:
        prompt = system_prompt_files(places, flags)
    templates, template_warnings = load_templates(
        places, reserved, discover=not flags.no_templates, paths=flags.template_paths
    )
    skills, skill_warnings = load_skills(places, [] if flags.no_skills else None, paths=flags.skill_paths)
    warnings = (*prompt.warnings, *template_warnings, *skill_warnings)
    if not screen:
        return Resources(prompt, templates, {s.name: s for s in skills}, warnings, flags.tools)
    store = trust_store if trust_store is not None else TrustStore()
    trusted = trust_project or store.decision(cwd) is True
    screened = prompt_trust.screen(
        store, places, flags, prompt, templates, skills, trusted=trusted, accept_all=trust_project
    )
    refused = not trusted and store.decision(cwd) is False  # answered no: its context files stay out
    if refused and prompt.context_files:
        global_dir = places.config_dir
        left = {f.path for f in context_files(cwd, global_dir, project=False)}
        screened.untrusted += [
            os.path.relpath(f.path, cwd) if f.path.startswith(f"{cwd}{os.sep}") else f.path
            for f in context_files(cwd, global_dir)
            if f.path not in left
        ]
    notices = [n for n in (screened.untrusted_notice(), screened.notice()) if n is not None]
    return Resources(
        screened.prompt,
        screened.templates,
        {s.name: s for s in screened.skills},
        (*warnings, *notices),
        flags.tools,
        tuple(screened.waiting),
        store.path,
        tuple(screened.untrusted),
        not refused,
    )


class Loading:
    """Resources loaded in a thread started at once, so the app paints meanwhile;
    :meth:`get` waits for them (a few milliseconds at most, in practice already done)."""

    def __init__(self, load: Callable[[], Resources]) -> None:
        self._result = Resources()
        self._load = load
        self._thread = threading.Thread(target=self._run, name="agent-tui-resources", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._result = self._load()
        except Exception as e:  # a bug in loading must not take the app down: one warning instead
            self._result = Resources(warnings=(f"extensions not loaded: {type(e).__name__}: {e}",))

    def get(self) -> Resources:
        self._thread.join()
        return self._result

    def ready(self) -> Resources | None:
        return None if self._thread.is_alive() else self._result


__all__ = ["Loading", "Resources", "load_resources"]
