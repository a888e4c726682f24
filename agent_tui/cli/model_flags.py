"""``--model`` (``provider/id``, an exact or unambiguous fuzzy id, ``:level``), ``--models a,b,c``
(the models F6 cycles through; Ctrl+P with ``keymap = "pi"``) and ``--list-models [SEARCH]``, over one catalog: the model
table, the config file's ``[models]`` and what each configured server lists."""

from __future__ import annotations

import argparse
import sys

from agent_tui.agent.model_sources import local_catalog, server_catalog
from agent_tui.projection import registry
from agent_tui.projection.catalog import ModelChoiceError, choose, merge, search
from agent_tui.terminal_text import visible_line


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--models",
        metavar="A,B,C",
        help='the models F6 cycles through (Ctrl+P with keymap = "pi"), each as --model takes it; '
        "the first one to start with",
    )
    parser.add_argument(
        "--list-models",
        nargs="?",
        const="",
        metavar="SEARCH",
        help="list the models (the table, [models] in the config, what configured servers list), "
        "optionally those matching SEARCH, and exit",
    )


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


__all__ = ["add_arguments", "apply_model_flags", "list_models_command"]
