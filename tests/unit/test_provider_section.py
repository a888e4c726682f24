"""``[name]`` of every provider in the registry reads its own table (config_schema.provider_section,
which maps the file's names, dashed ones too, to the struct's fields without evaluating them)."""

from __future__ import annotations

import msgspec

from agent_tui.config_schema import ConfigFile
from agent_tui.projection import registry


def test_every_provider_reads_its_own_table() -> None:
    tables = {name: {"base_url": f"http://{name}.test"} for name in registry.NAMES}
    config = msgspec.convert(tables, ConfigFile)
    assert any("-" in name for name in registry.NAMES)  # a dashed name is among them
    for name in registry.NAMES:
        assert config.provider_section(name).base_url == f"http://{name}.test"


def test_a_name_without_a_table_is_an_empty_section() -> None:
    config = msgspec.convert({}, ConfigFile)
    assert config.provider_section("openai").base_url is None
    assert config.provider_section("no-such-provider").base_url is None
