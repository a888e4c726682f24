"""What extends one agent loop: MCP servers (their tools) and hooks, and the trust they need.

Nothing is read or started before the first turn: :meth:`Extensions.prepare`, at the start of
every turn, settles the folder's trust once (``--trust-project``, the remembered answer, or one
question to the user when the folder has its own ``.mcp.json`` or hooks), reads the servers and
hooks, starts the servers in the background and waits for those still starting at most
``[mcp] wait`` seconds (10 by default), abortably. The session commands never get here.

A front end may add servers of its own (``servers``: an editor's ``mcpServers`` over ACP). They
come first, so a configured server of the same name is skipped, and they need no trust: the user
configured them in that front end.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from agent_tui.agent import hooks as hooks_module
from agent_tui.agent import permission_rules
from agent_tui.agent import trust as trust_module
from agent_tui.agent.hooks import HookOutcome, Hooks, hook_tool_name, tool_input
from agent_tui.agent.mcp import config as mcp_config
from agent_tui.agent.mcp.config import ServerSpec
from agent_tui.agent.mcp.manager import McpManager
from agent_tui.agent.tools.base import Tool
from agent_tui.agent.trust import TrustAsker, TrustStore
from agent_tui.config_schema import ConfigFile, check

#: The process's MCP servers, shared by the loops the app builds (one per session) while the
#: configuration stays the same: a new session does not restart them.
_shared: dict[str, McpManager] = {}


def shared_manager() -> McpManager | None:
    """The app's MCP servers (None before the first turn built them)."""
    return _shared.get("app")


class Extensions:
    def __init__(
        self,
        cwd: str,
        config_data: Mapping[str, Any],
        *,
        home: Path | None = None,
        trust_store: TrustStore | None = None,
        trust_project: bool = False,
        asker: TrustAsker | None = None,
        change_asker: TrustAsker | None = None,
        env: Mapping[str, str] | None = None,
        config_name: str = "config.toml",
        shared: bool = False,
        servers: Sequence[ServerSpec] = (),
        notify: Callable[[str], None] | None = None,
        settings: ConfigFile | None = None,
    ) -> None:
        self.cwd = cwd
        self.servers = list(servers)
        #: The parsed file: the MCP, hook and rule readers read their entries from it (each
        #: entry on its own, shared with Claude Code's files); ``settings`` is it typed.
        self.config_data = config_data
        self._settings = settings
        self.home = home
        self.trust_store = trust_store
        self.trust_project = trust_project
        self.asker = asker
        #: Asks about hooks and servers new or changed since accepted (None: ``asker`` does).
        self.change_asker = change_asker if change_asker is not None else asker
        self.env = env
        self.config_name = config_name
        self.shared = shared
        #: Where an MCP server's failure is said as it happens, between turns too (the app's notice,
        #: print mode's stderr); None: it waits for the loop's next notices.
        self.notify = notify
        self.trusted: bool | None = True if trust_project else None
        self.mcp: McpManager | None = None
        self.hooks = Hooks([], cwd)
        self._notices: list[str] = []
        self._loaded = False
        self.session_started = False
        #: Hooks and servers not accepted as they are now (agent.trust): asked once, else one line.
        self.waiting: list[tuple[str, str, str]] = []
        self._accept_project = False  # the user has just said yes to the folder
        self._asked_waiting = False
        #: The agent's permission rules (``agent.permission_rules.PermissionRules``, set by
        #: ``agent.turn_prepare``): their allow rules new since accepted join the question.
        self.rules: permission_rules.PermissionRules | None = None
        self._asked_rules: set[tuple[str, str]] = set()

    @classmethod
    def from_config_file(
        cls, config_path: Path | None, cwd: str, *, trust_file: Path | None = None, **options: Any
    ) -> Extensions:
        """The servers and hooks of the config file at ``config_path`` (read through the one config
        reader, cached), answers remembered in ``trust_file`` (None: ``trust.json`` in the data dir)."""
        from agent_tui.config import read_config_file, read_settings

        data = read_config_file(config_path) if config_path is not None else {}
        settings = read_settings(config_path).settings if config_path is not None else None
        name = str(config_path) if config_path is not None else "config.toml"
        return cls(
            cwd, data, trust_store=TrustStore(trust_file), config_name=name, settings=settings, **options
        )

    @property
    def settings(self) -> ConfigFile:
        """The config file typed (:mod:`agent_tui.config_schema`); its problems are said by the
        config loader, not here."""
        if self._settings is None:
            self._settings = check(self.config_data, self.config_name).settings
        return self._settings

    # -- trust -------------------------------------------------------------------------------

    def trust_folder(self) -> None:
        """The user has just said yes to the folder (the app's question at the start, answered
        after this agent settled its trust): its servers and hooks load at the next load, accepted
        as they are."""
        self.trusted = True
        self._accept_project = True
        self._loaded = False

    def project_resources(self) -> list[str]:
        """What the folder itself would have agent-tui run (each a short line), empty when nothing."""
        found = [
            f"{p.name if p.parent == Path(self.cwd) else p.relative_to(self.cwd)}: MCP servers"
            for p in mcp_config.project_files(self.cwd)
        ]
        found += [f"{p.relative_to(self.cwd)}: hooks" for p in hooks_module.project_files(self.cwd)]
        found += [
            f"{p.relative_to(self.cwd)}: permission rules that allow tool calls"
            for p in permission_rules.project_rule_files(self.cwd)
        ]
        return found

    async def _settle_trust(self) -> bool:
        if self.trusted is not None:
            return self.trusted
        resources = self.project_resources()
        if not resources:
            self.trusted = False
            return False
        remembered = self.trust_store.decision(self.cwd) if self.trust_store is not None else None
        if remembered is not None:
            self.trusted = remembered
            if not remembered:
                self._notices.append(
                    f"not loaded (this folder is not trusted): {', '.join(resources)}; "
                    "start with --trust-project to load them"
                )
            return remembered
        if self.asker is None:
            self.trusted = False
            self._notices.append(
                f"not loaded: {', '.join(resources)} (they start programs); "
                "start with --trust-project to trust this folder"
            )
            return False
        reply = await self.asker(self.cwd, resources)
        answer = reply is True
        self.trusted = answer
        self._accept_project = answer
        if reply is None:  # dismissed: no for now, asked again at the next start
            return False
        if self.trust_store is not None:
            try:
                self.trust_store.remember(self.cwd, answer)
            except OSError as e:
                self._notices.append(f"could not remember the answer: {e.strerror}")
        return answer

    # -- loading -----------------------------------------------------------------------------

    def _load(self, trusted: bool) -> None:
        servers = mcp_config.read_servers(
            self.config_data,
            self.cwd,
            home=self.home,
            trusted=trusted,
            env=self.env,
            config_name=self.config_name,
        )
        commands, warnings = hooks_module.read_hooks(
            self.config_data, self.cwd, home=self.home, trusted=trusted, config_name=self.config_name
        )
        self._notices += servers.warnings + warnings
        screened = trust_module.screen(  # only what the user accepted as it is now loads
            self.trust_store,
            self.cwd,
            servers.servers,
            commands,
            accept_all=self.trust_project,
            accept_project=self._accept_project,
        )
        commands, self.waiting = screened.hooks, screened.waiting
        given = {s.name.replace("-", "_") for s in self.servers}
        specs = self.servers + [s for s in screened.servers if s.name.replace("-", "_") not in given]
        self.hooks = Hooks(commands, self.cwd)
        mcp = self.settings.mcp
        manager = McpManager(specs, trust_read_only_hints=mcp.trust_read_only_hints, wait=mcp.wait)
        if self.shared:
            existing = _shared.get("app")
            if existing is not None and existing.key() == manager.key():
                manager = existing
            else:
                _shared["app"] = manager
                if existing is not None:
                    asyncio.get_running_loop().create_task(existing.close())
        manager.on_notice = self.notify
        self.mcp = manager
        self._loaded = True

    def read_servers(self) -> McpManager | None:
        """The servers and hooks of what is trusted without asking (the flag, a remembered yes),
        read and none started (``/mcp`` lists them before the first turn); the first turn settles
        the rest. None when there is nothing to read."""
        if not self._loaded:
            remembered = self.trust_store.decision(self.cwd) if self.trust_store is not None else None
            self._load(self.trust_project or remembered is True)
        return self.mcp

    def start_eager(self) -> None:
        """At the face's start: the servers configured with ``startup = "eager"``, from what is
        trusted without asking (the flag, a remembered yes); the first turn settles the rest."""
        manager = self.read_servers()
        if manager is not None:
            manager.start(eager_only=True)

    async def load(self) -> None:
        """Settle trust and read the servers and hooks (nothing started): a compaction before the
        first turn runs the PreCompact hooks too."""
        if not self._loaded:
            self._load(await self._settle_trust())
        rules = self._held_rules()
        if (self.waiting and not self._asked_waiting) or rules:
            await self._confirm_waiting(rules)

    def _held_rules(self) -> list[tuple[str, str, str]]:
        """The permission rules new since accepted (agent.rule_trust) not asked about yet."""
        if self.rules is None:
            return []
        self.rules.refresh()  # a rule written since the last decision is screened now
        return [w for w in self.rules.waiting if w[:2] not in self._asked_rules]

    async def _confirm_waiting(self, rules: list[tuple[str, str, str]]) -> None:
        """Hooks or servers new or changed since the user accepted them, and allow or ask rules
        (``rules``): the app asks (showing what each runs or allows); yes remembers them and loads
        them (the rules apply from the next decision), anything else leaves them out this time.
        Without an asker (print, JSON, RPC, ACP modes): one line saying so and how to accept (the
        rules' own line is the permission rules' warning)."""
        waiting = [] if self._asked_waiting else list(self.waiting)
        self._asked_waiting = True
        self._asked_rules |= {w[:2] for w in rules}
        prefix = "new or changed since you last accepted them: "
        lines = [prefix + line for _, _, line in [*waiting, *rules]]
        asker = self.change_asker
        reply = await asker(self.cwd, lines) if asker is not None else None
        if reply is True:
            try:
                trust_module.accept(self.trust_store, [*waiting, *rules])
            except OSError as e:
                self._notices.append(f"could not remember the answer: {e.strerror}")
            if rules and self.rules is not None:
                self.rules.refresh(force=True)  # screened again: what was accepted applies
            if waiting:
                self._accept_project = self._accept_project or any(
                    k != trust_module.USER for k, _, _ in waiting
                )
                self._load(bool(self.trusted) or self.trust_project)
            return
        notice = trust_module.Screened(waiting=waiting).notice()
        if notice is not None:
            self._notices.append(notice)

    async def prepare(self) -> None:
        """Settle trust, load, start the servers, wait a little for them (see the module doc)."""
        await self.load()
        if self.mcp is not None and self.mcp.servers:
            self.mcp.start()
            await self.mcp.wait_started()

    # -- hooks (Claude Code's events and field names) -----------------------------------------

    async def session_start(self, source: str) -> HookOutcome:
        """``SessionStart``, once per loop (``startup``, or ``resume`` for a session with history)."""
        if self.session_started:
            return HookOutcome()
        self.session_started = True
        return await self.hooks.run("SessionStart", {"source": source}, source)

    async def user_prompt(self, prompt: str) -> HookOutcome:
        return await self.hooks.run("UserPromptSubmit", {"prompt": prompt})

    async def pre_tool(self, name: str, arguments: Mapping[str, Any], call_id: str) -> HookOutcome:
        fields = {
            "tool_name": hook_tool_name(name),
            "tool_input": tool_input(name, arguments),
            "tool_use_id": call_id,
        }
        return await self.hooks.run("PreToolUse", fields, name)

    async def post_tool(
        self, name: str, arguments: Mapping[str, Any], call_id: str, content: list[Any], is_error: bool
    ) -> HookOutcome:
        text = "\n".join(
            str(b.get("text", "")) for b in content if isinstance(b, Mapping) and b.get("type") == "text"
        )
        fields = {
            "tool_name": hook_tool_name(name),
            "tool_input": tool_input(name, arguments),
            "tool_use_id": call_id,
            "tool_response": {"content": text, "is_error": is_error},
        }
        return await self.hooks.run("PostToolUse", fields, name)

    async def stop(self, active: bool) -> HookOutcome:
        return await self.hooks.run("Stop", {"stop_hook_active": active})

    async def pre_compact(self, trigger: str, focus: str | None) -> HookOutcome:
        return await self.hooks.run(
            "PreCompact", {"trigger": trigger, "custom_instructions": focus or ""}, trigger
        )

    def tools(self) -> list[Tool]:
        return list(self.mcp.tools()) if self.mcp is not None else []

    def auto_allowed(self) -> set[str]:
        return self.mcp.auto_allowed() if self.mcp is not None else set()

    def note(self, line: str) -> None:
        """One line for the user, said at the next turn (e.g. a front end's server that was skipped)."""
        self._notices.append(line)

    def take_notices(self) -> list[str]:
        notices, self._notices = self._notices, []
        if self.mcp is not None:
            notices += self.mcp.take_notices()
        return notices

    async def close(self) -> None:
        """Stop the servers this loop started (the app's shared ones stay for the next session)."""
        if self.mcp is not None and not self.shared:
            await self.mcp.close()


__all__ = ["Extensions", "shared_manager"]
