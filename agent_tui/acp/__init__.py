"""``agent-tui acp``: the agent loop as an Agent Client Protocol agent over stdio (Zed, Toad, JetBrains).

:mod:`agent_tui.acp.stdio` is the process, :mod:`agent_tui.acp.server` answers the protocol's
requests, :mod:`agent_tui.acp.turn` streams a run to the editor, :mod:`agent_tui.acp.updates`
turns the loop's events and a session's entries into ``session/update`` notifications,
:mod:`agent_tui.acp.sessions` finds and lists session files, :mod:`agent_tui.acp.mcp_servers`
takes the editor's MCP servers,
:mod:`agent_tui.acp.content` turns a prompt's content blocks into a user message, and
:mod:`agent_tui.acp.client_fs` routes ``read``, ``write`` and ``edit`` through the editor's
file methods when it offers them.
"""
