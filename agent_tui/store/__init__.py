"""File I/O and the in-memory index of session files.

Submodules are imported directly (``from agent_tui.store.session import Session``)
so that the CLI's read path never pays for what only appends need (the entry schemas in
``agent_tui.store.entries``).
"""
