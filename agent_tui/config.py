"""Which model to call, with which key: flags, then the environment, then the config file.

The config file is TOML, ``platformdirs.user_config_dir("agent-tui")/config.toml``
(``~/.config/agent-tui/config.toml`` on Linux), or the file ``AGENT_TUI_CONFIG``
names::

    provider = "openai"              # default provider: a registry name ("anthropic", "openai", ...)
    model = "qwen2.5-coder:14b"      # default model for that provider
    thinking = "medium"              # off, minimal, low, medium, high, xhigh (reasoning models)
    timeout = 600                    # seconds per request
    permissions = "ask"              # tool policy: ask, auto, read-only (--permissions and
                                     # AGENT_TUI_PERMISSIONS win over this); or a table:
                                     # [permissions] mode = "ask", allow/ask/deny = [rules]
    steering_mode = "one-at-a-time"  # queued steering messages delivered one per model call, or "all"
    follow_up_mode = "one-at-a-time" # queued follow-ups: one per turn, or "all" at once

    [anthropic]
    api_key = "sk-ant-..."           # ANTHROPIC_API_KEY wins over this
    base_url = "https://api.anthropic.com"
    model = "claude-sonnet-5-5"

    [openai]
    base_url = "http://localhost:11434/v1"   # Ollama; OPENAI_BASE_URL wins over this
    model = "qwen2.5-coder:14b"
    api = "chat"                     # or "responses" (--api wins): by default OpenAI's reasoning
                                     # models at OpenAI use Responses, anything else Chat Completions

    [google]
    api_key = "..."                  # GEMINI_API_KEY wins over this

    [models."qwen2.5-coder:14b"]     # models the built-in table does not know
    context_window = 32768
    max_output = 8192
    reasoning = false

    [models."claude-sonnet-4-5"]     # a price of your own ($ per million tokens; the status line's cost)
    cost = { input = 3, output = 15, cache_read = 0.3, cache_write = 3.75 }

    [models."my-reasoner"]           # an OpenAI-compatible reasoning model (pi's thinkingLevelMap
    reasoning = true                 # and compat.supportsReasoningEffort)
    thinking_level_map = { off = "none", minimal = false, xhigh = "xhigh" }  # false: unsupported
    supports_reasoning_effort = true # false: never send reasoning_effort
    api = "chat"                     # the API this model is called through ("responses", "chat")

    [compaction]
    summarize_branches = true        # summarize the messages a move in the tree leaves behind

    [sandbox]                        # where bash, !cmd and hooks run (docs/SANDBOX.md)
    mode = "workspace-write"         # or "read-only", "off" (--sandbox and AGENT_TUI_SANDBOX win)
    network = false                  # true: sandboxed commands reach the network (--sandbox-network)

    [retry]
    max_retries = 3                  # after the first attempt
    base_delay = 2.0                 # seconds, doubled per attempt
    max_delay = 60.0

Every key is described once, in :mod:`agent_tui.config_schema` (the README's reference and
``docs/config.schema.json`` are generated from it); :func:`read_settings` reads the file through
it: an unknown or mistyped key is one line naming it and the file, and is left out.

The file is parsed once per process (per path, while its size, mtime and inode stay
the same): the app's theme, panes, keys, model, permissions and compaction settings
all come from that one parse (:func:`read_config_file`, :func:`parse_count`).

Keys never leave this object: it is not written to sessions or logs, and its
repr hides them. Used by the agent and the CLI; providers take explicit args.
"""

from __future__ import annotations

import copy
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import msgspec

import agent_tui.config_schema as config_schema
from agent_tui.config_schema import Checked, CompactionTable, ModelEntry, SandboxTable
from agent_tui.projection import registry
from agent_tui.projection.compaction import CompactionSettings
from agent_tui.projection.models import (
    MODELS,
    THINKING_LEVEL_ORDER,
    THINKING_LEVELS,
    ModelInfo,
    lookup,
    register,
)
from agent_tui.projection.pricing import price_for, price_from_config, register_price

PROVIDERS = registry.NAMES
QUEUE_MODES = ("one-at-a-time", "all")  # pi's steeringMode / followUpMode
CONFIG_ENV = "AGENT_TUI_CONFIG"
LOG_ENV = "AGENT_TUI_LOG_REQUESTS"

LOCAL_SERVERS = (
    "Ollama http://localhost:11434/v1, llama.cpp server http://localhost:8080/v1, "
    "vLLM http://localhost:8000/v1, LM Studio http://localhost:1234/v1"
)


class ConfigError(Exception):
    """The configuration cannot give a usable model; the message says what to set."""


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    max_retries: int = 3
    base_delay: float = 2.0
    max_delay: float = 60.0

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds before retry ``attempt`` (1-based): exponential backoff, at least what the server asked."""
        backoff = self.base_delay * 2 ** max(0, attempt - 1)
        wanted = max(backoff, retry_after or 0.0)
        return float(min(wanted, self.max_delay))


@dataclass(frozen=True, slots=True)
class CompactionConfig:
    """``[compaction]`` (enabled, reserve_tokens, keep_recent_tokens, summarize_branches) and
    ``[compaction.models."id"]`` tables overriding them per model."""

    default: CompactionSettings = field(default_factory=CompactionSettings)
    per_model: dict[str, CompactionSettings] = field(default_factory=dict)
    summarize_branches: bool = False

    def for_model(self, model: str) -> CompactionSettings:
        return self.per_model.get(model, self.default)


def _compaction_config(table: CompactionTable) -> CompactionConfig:
    """``[compaction]`` and its ``[compaction.models."id"]`` tables (a model's unset keys: the table's)."""
    default = CompactionSettings(
        table.enabled, table.reserve_tokens, table.keep_recent_tokens, table.prune_before_summarizing
    )
    per_model = {
        model_id: replace(
            default,
            **{k: v for k, v in msgspec.structs.asdict(spec).items() if v is not None},
        )
        for model_id, spec in table.models.items()
    }
    return CompactionConfig(default, per_model, table.summarize_branches)


@dataclass(frozen=True, slots=True)
class Config:
    provider: str
    model: str
    api_key: str | None = field(default=None, repr=False)
    base_url: str | None = None
    thinking: str | None = None  # None: keep the session's level
    timeout: float | None = None
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    request_log: str | None = None
    config_path: Path | None = None
    provider_explicit: bool = False  # chosen by a flag or the config file, not guessed
    model_explicit: bool = False
    key_source: str = ""  # where the key came from, for error messages (never the key)
    compaction: CompactionConfig = field(default_factory=lambda: CompactionConfig())
    steering_mode: str = "one-at-a-time"  # pi's steeringMode: "one-at-a-time" or "all"
    follow_up_mode: str = "one-at-a-time"  # pi's followUpMode
    #: The config file's ``permissions`` (None: not set); agent.permissions.resolve_mode puts
    #: --permissions and AGENT_TUI_PERMISSIONS over it and checks the value.
    permissions: str | None = None
    #: ``[tools] context = true``: the model gets the ``context`` tool (list, hide, restore its own
    #: tool results).
    context_tool: bool = False
    #: the API to call the provider through, by its ``--api`` name ("responses", "chat"): the flag
    #: over ``api`` under ``[provider]`` in the file; None: the model's own or the registry's rule
    api: str | None = None
    #: ``[sandbox] mode`` and ``network`` (None: not set); agent.sandbox.resolve puts --sandbox,
    #: --sandbox-network and AGENT_TUI_SANDBOX(_NETWORK) over them.
    sandbox_mode: str | None = None
    sandbox_network: bool | None = None
    #: One line per unknown or mistyped key of the config file (left out; the rest applies):
    #: the faces show them (print, JSON and RPC mode on stderr; the app reads its own).
    warnings: tuple[str, ...] = ()

    @property
    def summarize_branches(self) -> bool:
        """``[compaction] summarize_branches``: summarize what a move in the tree leaves behind."""
        return self.compaction.summarize_branches

    def compaction_settings(self, model: str | None = None) -> CompactionSettings:
        """Compaction settings for ``model`` (the current one by default): per-model values win."""
        return self.compaction.for_model(model or self.model)

    def with_model(self, provider: str, model: str) -> Config:
        return replace(self, provider=provider, model=model)

    def auth_hint(self) -> str:
        variable = registry.spec(self.provider).key_env_name
        source = self.key_source or variable
        return f"check {source}" if self.api_key else f"set {variable}"


def next_model(config: Config, session_model: Mapping[str, Any] | None) -> str:
    """The model the next call uses: the configured one when chosen explicitly, else the session's
    (its last ``model_change``) if it is this provider's, else the configured default."""
    if config.model_explicit:
        return config.model
    current = session_model or {}
    if current.get("provider") == config.provider and current.get("modelId"):
        return str(current["modelId"])
    return config.model


def config_path(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    override = env.get(CONFIG_ENV)
    if override:
        return Path(override).expanduser()
    from platformdirs import user_config_dir

    return Path(user_config_dir("agent-tui", appauthor=False)) / "config.toml"


_parsed: dict[Path, tuple[tuple[int, int, int, int], dict[str, Any]]] = {}
_checked: dict[Path, tuple[tuple[int, int, int, int], Checked]] = {}
_parses = [0]  # how many times a config file was opened and parsed in this process


def parse_count() -> int:
    """How many times :func:`read_config_file` opened and parsed a file (tests count reads with it)."""
    return _parses[0]


def read_config_file(path: Path) -> dict[str, Any]:
    """The parsed file (a fresh copy each call; absent: ``{}``). Parsed once per process while the
    file's device, inode, size and mtime stay the same (a rewrite, e.g. ``/theme``, is re-read)."""
    return copy.deepcopy(_parse(path)[1])


def _parse(path: Path) -> tuple[tuple[int, int, int, int] | None, dict[str, Any]]:
    """The file's stamp (None: absent) and its parse, cached (callers do not change it)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        _parsed.pop(path, None)
        return None, {}
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror}") from e
    stamp = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    cached = _parsed.get(path)
    if cached is not None and cached[0] == stamp:
        return cached
    try:
        with open(path, "rb") as f:
            _parses[0] += 1
            data = tomllib.load(f)
    except FileNotFoundError:
        return None, {}
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: not valid TOML: {e}") from e
    except RecursionError:
        raise ConfigError(f"{path}: not valid TOML: nested too deeply") from None
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror}") from e
    _parsed[path] = (stamp, data)
    return stamp, data


def shown_path(path: Path) -> str:
    """``path`` as a message shows it (the home folder as ``~``)."""
    home = str(Path.home())
    text = str(path)
    return "~" + text[len(home) :] if home not in ("", "/") and text.startswith(home + os.sep) else text


def read_settings(path: Path) -> Checked:
    """The file read through the one schema (:mod:`agent_tui.config_schema`): its typed settings,
    and a line per unknown or mistyped key (that key left out). Absent: the defaults. Checked once
    per parse; raises ConfigError when the file cannot be read or is not TOML."""
    stamp, data = _parse(path)
    if stamp is None:
        return config_schema.EMPTY
    cached = _checked.get(path)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    checked = config_schema.check(data, shown_path(path))
    _checked[path] = (stamp, checked)
    return checked


def register_models(data: Mapping[str, Any], path: Path | None = None) -> None:
    """Add the ``[models."id"]`` tables of a parsed file to the model table (context window, max
    output, ...); a wrong value of one is a ConfigError."""
    checked = config_schema.check(data, shown_path(path) if path is not None else "config.toml")
    errors = [p.line for p in checked.problems if p.fatal and p.path[0] == "models"]
    if errors:
        raise ConfigError(f"agent-tui: {errors[0]}")
    register_model_entries(checked.settings.models, path)


def register_model_entries(models: Mapping[str, ModelEntry], path: Path | None = None) -> None:
    """Add the config's typed ``[models."id"]`` entries to the model and price tables."""
    for model_id, spec in models.items():
        base = MODELS.get(model_id)
        try:
            register(
                ModelInfo(
                    spec.provider or (base.provider if base else registry.fallback().name),
                    str(model_id),
                    spec.context_window or (base.context_window if base else 128_000),
                    spec.max_output or (base.max_output if base else 8_192),
                    reasoning=_either(spec.reasoning, base.reasoning if base else False),
                    images=_either(spec.images, base.images if base else False),
                    adaptive_thinking=base.adaptive_thinking if base else False,
                    thinking_level_map=_thinking_level_map(
                        spec.thinking_level_map, base.thinking_level_map if base else None
                    ),
                    supports_reasoning_effort=_either(
                        spec.supports_reasoning_effort, base.supports_reasoning_effort if base else True
                    ),
                    api=spec.api or (base.api if base else None),
                )
            )
        except (TypeError, ValueError) as e:
            raise ConfigError(f'{path}: [models."{model_id}"]: {e}') from e
        if spec.cost is not None:
            cost = {k: v for k, v in msgspec.structs.asdict(spec.cost).items() if v is not None}
            try:
                register_price(str(model_id), price_from_config(cost, price_for(str(model_id))))
            except ValueError as e:
                raise ConfigError(f'{path}: [models."{model_id}"]: {e}') from e


def _either(value: bool | None, default: bool) -> bool:
    return default if value is None else value


def _thinking_level_map(value: Any, base: Mapping[str, str | None] | None) -> Mapping[str, str | None] | None:
    """A ``thinking_level_map`` table over the built-in map, key by key (pi's modelOverrides merge).

    Values are what is sent for the level; ``false`` marks a level unsupported (pi's null, which
    TOML cannot write)."""
    if value is None:
        return base
    if not isinstance(value, Mapping):
        raise ValueError("thinking_level_map must be a table of thinking levels")
    merged: dict[str, str | None] = dict(base or {})
    for level, sent in value.items():
        if level not in THINKING_LEVEL_ORDER:
            raise ValueError(
                f"thinking_level_map: unknown level {level!r}: use {', '.join(THINKING_LEVEL_ORDER)}"
            )
        if sent is False:
            merged[level] = None
        elif isinstance(sent, str):
            merged[level] = sent
        else:
            raise ValueError(f"thinking_level_map.{level} must be a string or false")
    return merged


def load_model_table(env: Mapping[str, str] | None = None) -> None:
    """Register the config file's models, quietly: for ``agent-tui context``, which must not fail on config."""
    try:
        path = config_path(env)
        register_models(read_config_file(path), path)
    except ConfigError:
        pass


def no_provider_message(path: Path) -> str:
    """What to set when nothing is: short enough to be read whole in the app's notice at 80x24 (six
    lines), the local servers' examples included; ``--list-models`` and the README say the rest."""
    specs = [s for s in registry.PROVIDERS.values() if not s.gateway]
    keys = ", ".join(s.key_env_name for s in specs[:-1]) + f" or {specs[-1].key_env_name}"
    sections = ", ".join(f"[{s.name}]" for s in specs[:-1]) + f" or [{specs[-1].name}]"
    local = registry.fallback()
    return (
        f"agent-tui: no model is configured. Set {keys} (or api_key under {sections} in {path}). "
        f"No key for a local server: --base-url http://localhost:11434/v1 --model NAME for Ollama "
        f"(llama.cpp :8080, vLLM :8000, LM Studio :1234; or {local.base_url_env[0]}). "
        "More: agent-tui --list-models, the README."
    )


def _provider_of_model(model: str) -> str | None:
    info = MODELS.get(model)
    if info is not None and info.provider in PROVIDERS:
        return info.provider
    entry = registry.provider_of_model_id(model)
    return entry.name if entry is not None else None


def load_config(
    *,
    provider: str | None = None,
    model: str | None = None,
    base_url: str | None = None,
    thinking: str | None = None,
    api: str | None = None,
    env: Mapping[str, str] | None = None,
    path: Path | None = None,
) -> Config:
    """Resolve the model to call: flags (the arguments) win, then the environment, then the config file."""
    env = os.environ if env is None else env
    path = path if path is not None else config_path(env)
    checked = read_settings(path)
    if checked.errors:  # a wrong value of a key the model call needs: that one line
        raise ConfigError(f"agent-tui: {checked.errors[0]}")
    file = checked.settings
    register_model_entries(file.models, path)
    sections = {name: file.provider_section(name) for name in PROVIDERS}

    def key_for(name: str) -> tuple[str | None, str]:
        for variable in registry.spec(name).key_env:
            if env.get(variable):
                return env[variable], variable
        value = sections[name].api_key
        return (value, f"api_key under [{name}] in {path}") if value else (None, "")

    def url_for(name: str) -> str | None:
        for variable in registry.spec(name).base_url_env:
            if env.get(variable):
                return env[variable]
        return sections[name].base_url or None

    explicit = True
    chosen = provider or file.provider
    if chosen is None and model is not None:
        chosen = _provider_of_model(model)
    if chosen is None:
        explicit = False
        local = registry.fallback().name
        keyed = [name for name in PROVIDERS if key_for(name)[0]]
        if keyed:
            chosen = keyed[0]
        elif url_for(local) or base_url:
            chosen = local
        else:
            raise ConfigError(no_provider_message(path))
    chosen = str(chosen)
    if chosen not in PROVIDERS:
        raise ConfigError(f"agent-tui: unknown provider {chosen!r}: use one of {', '.join(PROVIDERS)}")

    api_key, key_source = key_for(chosen)
    url = base_url or url_for(chosen)
    entry = registry.spec(chosen)
    if api_key is None and not needs_no_key(entry, url, env):
        raise ConfigError(
            f"agent-tui: no API key for {chosen}: set {entry.key_env_name} (or api_key under [{chosen}] in {path})"
            + (
                f". A local {entry.label}-compatible server needs no key: --provider {chosen} --base-url URL ({LOCAL_SERVERS})."
                if entry.serves_any_model
                else f". A local server (--base-url URL, or {entry.base_url_env[0]}) needs none."
            )
        )

    top_model = file.model if file.provider in (None, chosen) else None
    chosen_model = model or sections[chosen].model or top_model
    model_explicit = chosen_model is not None
    level = thinking or file.thinking
    if level is not None and level not in THINKING_LEVELS:
        raise ConfigError(
            f"agent-tui: unknown thinking level {level!r}: use one of {', '.join(THINKING_LEVELS)}"
        )

    api_choice = api or sections[chosen].api
    if api_choice is not None and str(api_choice) not in entry.routes:
        raise ConfigError(
            f"agent-tui: {chosen} speaks {', '.join(entry.routes)}: --api {api_choice} is not one of them"
        )

    retry = RetryPolicy(file.retry.max_retries, file.retry.base_delay, file.retry.max_delay)
    return Config(
        provider=chosen,
        model=str(chosen_model or entry.default_model),
        api_key=api_key,
        base_url=url,
        thinking=str(level) if level else None,
        timeout=file.timeout,
        retry=retry,
        request_log=env.get(LOG_ENV) or None,
        config_path=path,
        provider_explicit=explicit,
        model_explicit=model_explicit,
        key_source=key_source,
        compaction=_compaction_config(file.compaction),
        steering_mode=file.steering_mode,
        follow_up_mode=file.follow_up_mode,
        permissions=file.permission_mode,  # [permissions] mode too (its rules: agent.permission_rules)
        context_tool=file.tools.context,
        **_sandbox_settings(file.sandbox, env),
        api=str(api_choice) if api_choice is not None else None,
        warnings=tuple(checked.warnings),
    )


def _sandbox_settings(table: SandboxTable, env: Mapping[str, str]) -> dict[str, Any]:
    """The sandbox's mode ("workspace-write", "read-only", "off") and network switch:
    ``AGENT_TUI_SANDBOX`` / ``AGENT_TUI_SANDBOX_NETWORK`` over ``[sandbox] mode`` / ``network``."""
    mode: str | None = table.mode
    network = table.network
    if env.get("AGENT_TUI_SANDBOX"):
        mode = env["AGENT_TUI_SANDBOX"].strip().lower()
        if mode not in ("workspace-write", "read-only", "off"):
            raise ConfigError(
                f"agent-tui: AGENT_TUI_SANDBOX must be workspace-write, read-only or off, not {mode!r}"
            )
    if env.get("AGENT_TUI_SANDBOX_NETWORK"):
        network = env["AGENT_TUI_SANDBOX_NETWORK"].strip().lower() in ("1", "true", "yes", "on")
    return {"sandbox_mode": mode, "sandbox_network": network}


def needs_no_key(
    entry: registry.ProviderSpec, base_url: str | None, env: Mapping[str, str] | None = None
) -> bool:
    """A base URL of one's own (a local server, a proxy) is called without a key, on any API; the
    provider's own service (its default base URL, or none given) needs one, unless its SDK finds
    credentials of its own (Bedrock, Vertex: one of its ``ambient_credentials`` variables is set)."""
    env = os.environ if env is None else env
    if any(env.get(name) for name in entry.ambient_credentials):
        return True
    if not base_url:
        return False
    return base_url.rstrip("/") != entry.default_base_url.rstrip("/")


@dataclass(frozen=True, slots=True)
class Resolved:
    """The model a command works with and its settings, resolved the one way every command does
    (print mode, the app, ``context``, ``compact``): flags over the environment over the config
    file, the session's model unless one was chosen explicitly."""

    provider: str | None
    model: str | None
    info: ModelInfo
    compaction: CompactionSettings
    config: Config | None  # None when nothing callable is configured (inspection still works)
    thinking: str | None = None  # the level the run would set (None: keep the session's)
    problem: str | None = None  # why ``config`` is None

    @property
    def name(self) -> str:
        return f"{self.provider or '?'}/{self.model or '?'}"


def resolve(
    session_model: Mapping[str, Any] | None,
    *,
    provider: str | None = None,
    model: str | None = None,
    base_url: str | None = None,
    thinking: str | None = None,
    env: Mapping[str, str] | None = None,
    path: Path | None = None,
) -> Resolved:
    """Which provider and model the next call of a session uses, with the model's window and
    compaction settings. Without a usable configuration (no key) the flags, then the session's
    model, still give the window and settings, from the same config file."""
    try:
        config = load_config(
            provider=provider, model=model, base_url=base_url, thinking=thinking, env=env, path=path
        )
    except ConfigError as e:
        env = os.environ if env is None else env
        file = path if path is not None else config_path(env)
        try:
            settings = read_settings(file).settings
            register_model_entries(settings.models, file)
            compaction = _compaction_config(settings.compaction)
        except ConfigError:
            compaction = CompactionConfig()
        current = session_model or {}
        chosen_provider = provider or (str(current["provider"]) if current.get("provider") else None)
        if chosen_provider is None and model is not None:
            chosen_provider = _provider_of_model(model)
        chosen_model = model
        if (
            chosen_model is None
            and current.get("modelId")
            and current.get("provider") in (None, chosen_provider)
        ):
            chosen_model = str(current["modelId"])
        if chosen_model is None and chosen_provider in PROVIDERS:
            chosen_model = registry.spec(chosen_provider).default_model
        return Resolved(
            chosen_provider,
            chosen_model,
            lookup(chosen_model, chosen_provider),
            compaction.for_model(chosen_model or ""),
            None,
            thinking,
            str(e),
        )
    chosen = next_model(config, session_model)
    return Resolved(
        config.provider,
        chosen,
        lookup(chosen, config.provider),
        config.compaction_settings(chosen),
        config.with_model(config.provider, chosen),
        config.thinking,
    )


def has_credentials(provider: str, env: Mapping[str, str] | None = None, path: Path | None = None) -> bool:
    """Whether ``provider`` could be used without flags (a key, or a base URL for OpenAI-compatible servers)."""
    env = os.environ if env is None else env
    try:
        load_config(provider=provider, env=env, path=path)
    except ConfigError:
        return False
    return True


__all__ = [
    "PROVIDERS",
    "QUEUE_MODES",
    "CompactionConfig",
    "Config",
    "ConfigError",
    "Resolved",
    "RetryPolicy",
    "config_path",
    "load_config",
    "load_model_table",
    "needs_no_key",
    "no_provider_message",
    "parse_count",
    "read_config_file",
    "read_settings",
    "register_model_entries",
    "resolve",
    "shown_path",
]
