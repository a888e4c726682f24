"""pi's RPC commands for the model and the run's switches: ``set_model``, ``get_available_models``,
``cycle_model``, ``set_thinking_level``, ``cycle_thinking_level``, ``get_available_thinking_levels``,
``set_steering_mode``, ``set_follow_up_mode``, ``compact``, ``set_auto_compaction``,
``set_auto_retry``, ``abort_retry``, ``get_commands`` (what a ``prompt`` can start with ``/``), and
agent-tui's ``set_permission_mode``, ``get_permission_rules`` and ``remove_permission_rule`` (the
app's ``/permissions``).

The available models are pi's ``getAvailableSnapshot``: the model table and the config file's
``[models]``, those whose provider has a key (or needs none, at a base URL of one's own), with the
current model first when the table lacks it. ``cycle_model`` cycles through ``--models`` when it
was given (pi's scoped models), else through the available models.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Literal

from agent_tui.agent.permission_rules import RuleError, command_text
from agent_tui.agent.permissions import PermissionModeError
from agent_tui.cli.rpc_host import RpcHost
from agent_tui.cli.rpc_registry import LATER, NULL, CommandError, Handler, bool_field, text_field
from agent_tui.projection import registry
from agent_tui.projection.models import lookup
from agent_tui.projection.pricing import price_for
from agent_tui.sdk import PiEventStream
from agent_tui.store.record import JSONObject


def model_object(
    provider: str, model_id: str, api: str | None = None, base_url: str | None = None
) -> JSONObject:
    """pi's Model object: ``id``, ``name``, ``api``, ``provider``, ``baseUrl``, ``reasoning``,
    ``input``, ``cost`` (dollars per million tokens; pi's type requires it: all 0 for a model
    without a price, as pi's own table has a local model), ``contextWindow``, ``maxTokens``."""
    info = lookup(model_id, provider)
    spec = registry.find(provider)
    data: JSONObject = {
        "id": model_id,
        "name": model_id,
        "api": api or (spec.api if spec is not None else None),
        "provider": provider,
        "baseUrl": base_url or (spec.default_base_url if spec is not None else None),
        "reasoning": info.reasoning,
        "input": ["text", "image"] if info.images else ["text"],
        "cost": {"input": 0.0, "output": 0.0, "cacheRead": 0.0, "cacheWrite": 0.0},
        "contextWindow": info.context_window,
        "maxTokens": info.max_output,
    }
    price = price_for(model_id)
    if price is not None:
        rates = price.base
        data["cost"] = {
            "input": rates.input,
            "output": rates.output,
            "cacheRead": rates.cache_read,
            "cacheWrite": rates.cache_write,
        }
    return data


def switch_model(server: RpcHost, model_id: str, provider: str | None) -> str:
    """Switch to ``model_id`` (the core re-clamps the thinking level for it, as pi's ``setModel``
    does); ``thinking_level_changed`` when the level the next call uses changed. The level now."""
    agent = server.agent
    before = agent.thinking_level
    agent.set_model(model_id, provider)
    return level_changed(server, before)


def level_changed(server: RpcHost, before: str) -> str:
    """pi's ``thinking_level_changed`` (the level as set, clamped), only when it changed."""
    level = server.agent.thinking_level
    if level != before:
        server.lines.write({"type": "thinking_level_changed", "level": level})
    return level


def available(server: RpcHost) -> list[tuple[str, str]]:
    """``(provider, model id)`` of every model one could switch to now, the current one included."""
    from agent_tui.agent.model_sources import local_catalog

    agent = server.agent
    config_path: Path | None = agent.config.config_path
    found = [(m.provider, m.id) for m in local_catalog(config_path) if m.key]
    current = (agent.provider, agent.model)
    return found if current in found else [current, *found]


def _object(server: RpcHost, provider: str, model_id: str) -> JSONObject:
    agent = server.agent
    if provider == agent.provider:
        return model_object(provider, model_id, agent.api, agent.config.base_url)
    return model_object(provider, model_id)


async def _get_available_models(server: RpcHost, cmd: JSONObject) -> JSONObject | None:
    return {"models": [_object(server, p, m) for p, m in available(server)]}


async def _cycle_model(server: RpcHost, cmd: JSONObject) -> JSONObject | None:
    agent = server.agent
    scoped = bool(server.scoped_models)
    if scoped:
        choices = []
        for spec in server.scoped_models:
            provider, _, model_id = spec.partition("/")
            choices.append((provider, model_id) if model_id else (agent.provider, spec))
    else:
        choices = available(server)
    if len(choices) < 2:
        return NULL
    server.idle("cycle_model")
    current = (agent.provider, agent.model)
    at = choices.index(current) if current in choices else -1
    provider, model_id = choices[(at + 1) % len(choices)]
    level = switch_model(server, model_id, provider)
    return {"model": server.model_object(), "thinkingLevel": level, "isScoped": scoped}


async def _cycle_thinking_level(server: RpcHost, cmd: JSONObject) -> JSONObject | None:
    before = server.agent.thinking_level
    if server.agent.cycle_thinking_level() is None:  # the model has only "off": pi's null
        return NULL
    return {"level": level_changed(server, before)}


async def _set_auto_compaction(server: RpcHost, cmd: JSONObject) -> JSONObject | None:
    server.agent.set_auto_compaction(bool_field(cmd, "enabled"))
    return None


async def _set_auto_retry(server: RpcHost, cmd: JSONObject) -> JSONObject | None:
    server.agent.set_auto_retry(bool_field(cmd, "enabled"))
    return None


async def _set_permission_mode(server: RpcHost, cmd: JSONObject) -> JSONObject | None:
    """agent-tui's: ``{"type": "set_permission_mode", "mode": "plan"}`` switches the permission mode
    (ask, accept-edits, plan, auto, read-only) through the session core, which records it; answers
    ``{"mode"}``. While a prompt runs it applies from the next tool call, recorded when it ends."""
    mode = text_field(cmd, "mode")
    assert mode is not None
    try:
        return {"mode": server.agent.set_permission_mode(mode, record_later=server.busy).value}
    except (PermissionModeError, ValueError) as e:
        raise CommandError(str(e).removeprefix("agent-tui: ")) from None


async def _get_permission_rules(server: RpcHost, cmd: JSONObject) -> JSONObject | None:
    """agent-tui's ``/permissions``: ``{rules: [{kind, rule, source, applied, why?}], warnings,
    text}`` (``text``: the lines the app shows), every rule in force or not and its file."""
    permissions = server.agent.loop.permissions
    rules = permissions.rules if permissions is not None else None
    if rules is None:
        return {"rules": [], "warnings": [], "text": command_text(None, "")}
    listed = rules.listed()
    return {"rules": listed, "warnings": list(rules.warnings), "text": rules.describe()}


async def _remove_permission_rule(server: RpcHost, cmd: JSONObject) -> JSONObject | None:
    """agent-tui's ``/permissions remove RULE``: ``{removed: [lines]}``, the rule (or an
    ``allowedDomains`` host) taken out of each file it came from; an error when none is loaded."""
    rule = text_field(cmd, "rule")
    assert rule is not None
    permissions = server.agent.loop.permissions
    if permissions is None or permissions.rules is None or not rule.strip():
        raise CommandError(f"no permission rule {rule!r} (get_permission_rules lists them)")
    try:
        return {"removed": permissions.rules.remove(rule)}
    except (RuleError, OSError, ValueError) as e:
        raise CommandError(f"not removed: {e}") from None


async def _abort_retry(server: RpcHost, cmd: JSONObject) -> JSONObject | None:
    server.agent.abort_retry()
    return None


async def _get_commands(server: RpcHost, cmd: JSONObject) -> JSONObject | None:
    """The user's prompt templates and skills (pi's ``prompt`` and ``skill`` sources); agent-tui has
    no extension commands, and the app's own slash commands do not run through ``prompt``."""
    resources = server.agent.loop.resources
    if resources is None:
        return {"commands": []}
    cwd = Path(server.agent.loop.cwd).resolve()
    commands: list[JSONObject] = []
    for template in resources.templates.values():
        commands.append(
            {
                "name": template.name,
                "description": template.description,
                "source": "prompt",
                "sourceInfo": _source_info(template.path, cwd),
            }
        )
    for skill in resources.skills.values():
        commands.append(
            {
                "name": f"skill:{skill.name}",
                "description": skill.description,
                "source": "skill",
                "sourceInfo": _source_info(skill.path, cwd),
            }
        )
    return {"commands": commands}


def _source_info(path: Path | str, cwd: Path) -> JSONObject:
    where = Path(path).resolve()
    project = where == cwd or cwd in where.parents
    return {
        "path": str(where),
        "source": "local",
        "scope": "project" if project else "user",
        "origin": "top-level",
    }


async def _set_model(server: RpcHost, cmd: JSONObject) -> JSONObject | None:
    model = text_field(cmd, "modelId")
    provider = text_field(cmd, "provider", required=False)
    assert model is not None
    server.idle("set_model")
    switch_model(server, model, provider)
    return server.model_object()


async def _set_thinking_level(server: RpcHost, cmd: JSONObject) -> JSONObject | None:
    """pi's rule, the core's: the level clamped to the model's (a model without reasoning: "off"),
    ``thinking_level_changed`` with the level as set when it changed; no data, as pi answers."""
    level = text_field(cmd, "level")
    assert level is not None
    before = server.agent.thinking_level
    server.agent.set_thinking_level(level)
    level_changed(server, before)
    return None


async def _get_available_thinking_levels(server: RpcHost, cmd: JSONObject) -> JSONObject | None:
    return {"levels": server.agent.thinking_levels()}


async def _set_steering_mode(server: RpcHost, cmd: JSONObject) -> JSONObject | None:
    server.agent.loop.queue.steering_mode = _queue_mode(cmd)
    return None


async def _set_follow_up_mode(server: RpcHost, cmd: JSONObject) -> JSONObject | None:
    server.agent.loop.queue.follow_up_mode = _queue_mode(cmd)
    return None


def _queue_mode(cmd: JSONObject) -> Literal["all", "one-at-a-time"]:
    mode = cmd.get("mode")
    if mode == "all":
        return "all"
    if mode == "one-at-a-time":
        return "one-at-a-time"
    raise CommandError(f'{cmd["type"]}: \'mode\' must be "all" or "one-at-a-time"')


async def _compact(server: RpcHost, cmd: JSONObject) -> JSONObject | None:
    focus = text_field(cmd, "customInstructions", required=False)
    server.idle("compact")
    results: list[JSONObject] = []

    async def run() -> None:
        server.compacting = True
        stream = PiEventStream(server.session.store.index, server.agent.model_info, kind="compact")
        try:
            async for event in server.agent.compact(focus):
                for record in stream.feed(event):
                    server.lines.write(record)
                    if record["type"] == "compaction_end":
                        results.append(record)
        finally:
            server.compacting = False
        end = results[-1] if results else {}
        if "result" in end:
            server.respond(cmd, "compact", end["result"])
        else:
            server.fail(cmd, "compact", str(end.get("errorMessage") or "compaction aborted"))

    server.run_task = asyncio.ensure_future(run())
    server.later(server.run_task)
    return LATER


#: This module's commands, pi's name -> handler (:mod:`agent_tui.cli.rpc_commands` joins the tables).
COMMANDS: dict[str, Handler] = {
    "get_available_models": _get_available_models,
    "cycle_model": _cycle_model,
    "cycle_thinking_level": _cycle_thinking_level,
    "set_auto_compaction": _set_auto_compaction,
    "set_auto_retry": _set_auto_retry,
    "set_permission_mode": _set_permission_mode,
    "get_permission_rules": _get_permission_rules,
    "remove_permission_rule": _remove_permission_rule,
    "abort_retry": _abort_retry,
    "get_commands": _get_commands,
    "set_model": _set_model,
    "set_thinking_level": _set_thinking_level,
    "get_available_thinking_levels": _get_available_thinking_levels,
    "set_steering_mode": _set_steering_mode,
    "set_follow_up_mode": _set_follow_up_mode,
    "compact": _compact,
}


__all__ = ["COMMANDS", "available", "model_object"]
