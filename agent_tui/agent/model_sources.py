"""Where the model catalog comes from: the model table and the config file's ``[models]`` (each
marked with whether its provider has a key), and what each provider that could be called lists
(its server, or its service with a key). Read by ``--list-models``, ``--model`` and the app's
model picker (which asks the servers in a thread)."""

from __future__ import annotations

import contextlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from agent_tui.config import (
    ConfigError,
    has_credentials,
    load_config,
    load_model_table,
    read_config_file,
    register_models,
)
from agent_tui.projection import registry
from agent_tui.projection.catalog import CatalogModel, table_models


def local_catalog(path: Path | None = None) -> list[CatalogModel]:
    """The table and the config file's models (``path``, None: the default file), each marked
    with whether its provider has a key."""
    if path is None:
        load_model_table()
    else:
        with contextlib.suppress(ConfigError):
            register_models(read_config_file(path), path)
    known: dict[str, bool] = {}

    def keyed(provider: str) -> bool:
        if provider not in known:
            known[provider] = provider in registry.PROVIDERS and has_credentials(provider, path=path)
        return known[provider]

    return table_models(keyed)


def server_catalog(base_url: str | None = None, path: Path | None = None) -> list[CatalogModel]:
    """What each provider that could be called lists (its server, or its service with a key)."""
    from agent_tui.providers.model_list import list_models

    def one(name: str) -> list[CatalogModel]:
        try:
            config = load_config(
                provider=name, base_url=base_url if name == registry.fallback().name else None, path=path
            )
        except ConfigError:
            return []
        spec = registry.spec(name)
        listed = list_models(spec, config.base_url, config.api_key)
        return [CatalogModel(name, m.id, m.context_window, "server", True) for m in listed]

    with ThreadPoolExecutor(max_workers=len(registry.NAMES)) as pool:
        groups = list(pool.map(one, registry.NAMES))
    return [m for group in groups for m in group]


__all__ = ["local_catalog", "server_catalog"]
