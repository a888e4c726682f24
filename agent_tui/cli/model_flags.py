"""``--model`` (``provider/id``, an exact or unambiguous fuzzy id, ``:level``), ``--models a,b,c``
(the models Ctrl+P cycles through) and ``--list-models [SEARCH]``, over one catalog: the model
table, the config file's ``[models]`` and what each configured server lists."""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ThreadPoolExecutor

from agent_tui.config import ConfigError, has_credentials, load_config, load_model_table
from agent_tui.projection import registry
from agent_tui.projection.catalog import (
    CatalogModel,
    ModelChoiceError,
    choose,
    merge,
    search,
    table_models,
)
from agent_tui.terminal_text import visible_line


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--models",
        metavar="A,B,C",
        help="the models Ctrl+P cycles through (each as --model takes it), the first one to start with",
    )
    parser.add_argument(
        "--list-models",
        nargs="?",
        const="",
        metavar="SEARCH",
        help="list the models (the table, [models] in the config, what configured servers list), "
        "optionally those matching SEARCH, and exit",
    )


def _keyed(provider: str) -> bool:
    return has_credentials(provider)


def local_catalog() -> list[CatalogModel]:
    """The table and the config file's models, each marked with whether its provider has a key."""
    load_model_table()
    known: dict[str, bool] = {}

    def keyed(provider: str) -> bool:
        if provider not in known:
            known[provider] = provider in registry.PROVIDERS and _keyed(provider)
        return known[provider]

    return table_models(keyed)


def server_catalog(base_url: str | None = None) -> list[CatalogModel]:
    """What each provider that could be called lists (its server, or its service with a key)."""
    from agent_tui.providers.model_list import list_models

    def one(name: str) -> list[CatalogModel]:
        try:
            config = load_config(
                provider=name, base_url=base_url if name == registry.fallback().name else None
            )
        except ConfigError:
            return []
        spec = registry.spec(name)
        listed = list_models(spec, config.base_url, config.api_key)
        return [CatalogModel(name, m.id, m.context_window, "server", True) for m in listed]

    with ThreadPoolExecutor(max_workers=len(registry.NAMES)) as pool:
        groups = list(pool.map(one, registry.NAMES))
    return [m for group in groups for m in group]


def list_models_command(args: argparse.Namespace) -> int:
    models = merge(local_catalog(), server_catalog(getattr(args, "base_url", None)))
    found = search(models, args.list_models or "")
    for m in found:
        print(visible_line(m.label()))
    if not found:
        print(f"agent-tui: no model matches {args.list_models!r}", file=sys.stderr)
        return 1
    return 0


def apply_model_flags(args: argparse.Namespace) -> str | None:
    """Settle ``--model`` / ``--models`` into ``args.provider``, ``args.model``, ``args.thinking`` and
    ``args.scoped_models`` (``provider/id`` specs); an error message when one names no single model."""
    args.scoped_models = []
    given = getattr(args, "model", None)
    scope = [s.strip() for s in (getattr(args, "models", None) or "").split(",") if s.strip()]
    if not given and not scope:
        return None
    catalog = local_catalog()
    try:
        for text in scope:
            model, _level = choose(catalog, text, getattr(args, "provider", None))
            args.scoped_models.append(model.spec if model is not None else text)
        given = str(given or scope[0])
        model, level = choose(catalog, given, getattr(args, "provider", None))
    except ModelChoiceError as e:
        return f"agent-tui: --model: {e}"
    name, _, rest = given.partition("/")
    if model is not None:
        args.model = model.id
        args.provider = getattr(args, "provider", None) or model.provider
    elif rest and name in registry.PROVIDERS:
        args.provider = getattr(args, "provider", None) or name
        args.model = rest.rsplit(":", 1)[0] if level else rest
    else:
        args.model = given.rsplit(":", 1)[0] if level else given
    if level and not getattr(args, "thinking", None):
        args.thinking = level
    return None


__all__ = ["add_arguments", "apply_model_flags", "list_models_command", "local_catalog", "server_catalog"]
