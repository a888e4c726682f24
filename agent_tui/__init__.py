"""agent-tui: a terminal coding agent whose session is an append-only tree."""

__version__ = "0.1.0"
