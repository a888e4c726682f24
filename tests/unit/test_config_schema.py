"""One config schema in code: every key typed and described, an unknown or mistyped key one line
naming it and the file, the README's reference and docs/config.schema.json generated from it."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import get_args

import pytest

from agent_tui import config_schema
from agent_tui.config import ConfigError, load_config, read_settings
from agent_tui.config_schema import ConfigFile, check
from agent_tui.projection import registry
from agent_tui.projection.models import THINKING_LEVEL_ORDER, THINKING_LEVELS

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return path


def test_the_readme_reference_and_the_json_schema_are_the_schemas() -> None:
    text = README.read_text(encoding="utf-8")
    match = re.search(r"<!-- config-reference:[^>]*-->\n(.*?)<!-- /config-reference -->", text, re.S)
    assert match is not None, "README.md has the config reference section"
    assert match.group(1) == "\n" + config_schema.reference() + "\n", "run scripts/config-reference --write"
    on_disk = (ROOT / "docs" / "config.schema.json").read_text(encoding="utf-8")
    assert on_disk == config_schema.json_schema(), "run scripts/config-reference --write"
    schema = json.loads(on_disk)["$defs"]
    assert schema["ConfigFile"]["additionalProperties"] is False
    for name, table in schema.items():  # every key says what it is
        for key, spec in table.get("properties", {}).items():
            assert spec.get("description"), f"{name}.{key} has no description"


def test_the_schema_lists_what_the_layers_above_it_know() -> None:
    from agent_tui.agent.permissions import PermissionMode
    from agent_tui.tui.keymap import PRESETS

    assert config_schema.PROVIDER_TABLES == registry.NAMES
    provider_enum = json.loads(config_schema.json_schema())["$defs"]["ConfigFile"]["properties"]["provider"]
    assert tuple(provider_enum["enum"]) == registry.NAMES
    assert get_args(config_schema.ThinkingLevel) == THINKING_LEVELS
    assert get_args(config_schema.MappedLevel) == THINKING_LEVEL_ORDER
    assert tuple(PRESETS) == config_schema.KEYMAPS
    assert tuple(m.value for m in PermissionMode) == config_schema.PERMISSION_MODES


def test_every_toml_example_of_the_readme_has_only_known_keys() -> None:
    blocks = re.findall(r"```toml\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    checked = 0
    for block in blocks:
        data = tomllib.loads(block)
        if not data or "name" in data:  # a theme file, not the config file
            continue
        problems = [p.line for p in check(data).problems]
        assert problems == [], block
        checked += 1
    assert checked >= 3


def test_an_unknown_key_is_one_line_naming_it_and_the_file_and_the_rest_applies() -> None:
    data = tomllib.loads(
        'tehme = "agent-light"\ntheme = "agent-dark"\n[openai]\ntheme = "x"\nbase_url = "http://h/v1"\n'
        '[mcp.servers.time]\ncommand = "uvx"\nstartup = "eager"\ncomand = "x"\n'
        '[[hooks.PreToolUse]]\nmatcher = "bash"\n[[hooks.PreToolUse.hooks]]\ncommand = "c"\ntimout = 3\n'
    )
    checked = check(data, "config.toml")
    assert [p.line for p in checked.problems] == [
        'config.toml: unknown key "tehme"',
        'config.toml: unknown key "theme" in [openai]',
        'config.toml: unknown key "comand" in [mcp.servers.time]',
        'config.toml: unknown key "timout" in [[hooks.PreToolUse.hooks]]',
    ]
    assert checked.errors == []  # an unknown key never stops anything
    settings = checked.settings
    assert settings.theme == "agent-dark" and settings.provider_section("openai").base_url == "http://h/v1"
    assert settings.mcp.servers["time"].startup == "eager"
    assert settings.hooks["PreToolUse"][0].hooks[0].command == "c"


def test_a_mistyped_value_is_one_line_and_its_default_applies() -> None:
    data = tomllib.loads(
        'ascii_symbols = "yes please"\ntree_pane = 0\ntimeout = "600"\n'
        '[keys]\ncompact = 3\nresume = "f9"\n[mcp]\nwait = "soon"\n'
    )
    checked = check(data, "c.toml")
    assert [p.line for p in checked.problems] == [
        'c.toml: ascii_symbols must be true or false, not "yes please"',
        "c.toml: tree_pane must be true or false, not 0",
        "c.toml: keys.compact must be a string, not 3",
        'c.toml: [mcp] wait must be a number, not "soon"',
    ]
    settings = checked.settings
    assert (settings.ascii_symbols, settings.tree_pane, settings.mcp.wait) == (False, True, 10.0)
    assert settings.timeout == 600.0 and settings.keys == {"resume": "f9"}  # "600": a number


def test_a_wrong_value_of_a_key_the_model_needs_still_stops_load_config(tmp_path: Path) -> None:
    env = {"OPENAI_API_KEY": "k"}
    path = write(tmp_path, '[retry]\nmax_retries = "many"\n')
    with pytest.raises(ConfigError, match=r'\[retry\] max_retries must be an integer, not "many"') as info:
        load_config(env=env, path=path)
    assert str(path) in str(info.value) and "\n" not in str(info.value)
    path = write(tmp_path, '[sandbox]\nmode = "everywhere"\n')
    with pytest.raises(ConfigError, match=r'\[sandbox\] mode must be one of "workspace-write"'):
        load_config(env=env, path=path)
    path = write(tmp_path, 'thinking = "lots"\n')
    with pytest.raises(ConfigError, match="thinking must be one of"):
        load_config(env=env, path=path)


def test_load_config_carries_the_warnings_and_starts(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        'provider = "openai"\nmodle = "typo"\ntheme = 3\n[openai]\nmodel = "m"\napi = "chat"\n'
        "[compaction]\nreserve_tokens = 1000\n[compaction.models.m]\nenabled = false\n"
        '[permissions]\nmode = "read-only"\nallow = ["Bash(ls)"]\n[tools]\ncontext = true\n',
    )
    config = load_config(env={"OPENAI_API_KEY": "k"}, path=path)
    assert (config.provider, config.model, config.api, config.permissions) == (
        "openai",
        "m",
        "chat",
        "read-only",
    )
    assert config.context_tool is True
    assert config.compaction_settings().reserve_tokens == 1000 and not config.compaction_settings().enabled
    assert config.compaction_settings("other").enabled
    assert config.warnings == (
        f'{path}: unknown key "modle"',
        f"{path}: theme must be a string, not 3",
    )
    assert read_settings(path) is read_settings(path)  # checked once per parse


def test_values_checked_by_the_shared_parsers_are_not_said_twice() -> None:
    # an MCP server's bad startup is the MCP reader's line ("skipped"), a bad rule the rules'
    data = tomllib.loads('[mcp.servers.x]\ncommand = "c"\nstartup = "later"\n[permissions]\nallow = [3]\n')
    assert check(data).problems == ()


def test_the_home_folder_is_shown_as_a_tilde(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    path = write(tmp_path, "tehme = 1\n")
    assert read_settings(path).warnings == ['~/config.toml: unknown key "tehme"']


def test_settings_read_the_typed_tree(tmp_path: Path) -> None:
    from agent_tui.tui import keymap, settings

    path = write(
        tmp_path,
        '# mine\ntheme = "agent-light"\nascii_symbols = true\ntree_pane = false\nkeymap = "pi"\n'
        '[keys]\ncompact = "f6"\nnope = "f12"\nempty = " "\n',
    )
    assert settings.read_theme(path) == "agent-light" and settings.read_flag(path, "ascii_symbols")
    assert (settings.read_pane(path, "tree"), settings.read_pane(path, "panel")) == (False, True)
    config = settings.read_config(path)
    assert isinstance(config, ConfigFile)
    keys, problems = keymap.load_keymap(config, known={"compact", "model"})
    assert keys["compact"] == "f6" and keys["model"] == keymap.PI["model"]
    assert problems == [
        "[keys] nope: no such binding (see the help screen, ?)",
        '[keys] empty: the key must be a string such as "ctrl+k"',
    ]
    settings.write_pane(path, "tree", True)  # written back with tomlkit: the comment stays
    assert path.read_text().startswith("# mine\n") and settings.read_pane(path, "tree")
    assert settings.config_problems(path) == []
    path.write_text("theme = [\n")
    assert settings.read_config(path) == ConfigFile() and settings.config_problems(path) == []
