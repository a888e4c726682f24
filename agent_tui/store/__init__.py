"""File I/O and the in-memory index of session files.

Submodules are imported directly (``from agent_tui.store.session import Session``)
so that the CLI's read path never pays for pydantic, which only the entry
builders in ``agent_tui.store.entries`` need.
"""
