"""The session library: export, import, search and listing of sessions.

Sits between ``projection`` and ``providers``: it reads sessions through
``store`` and ``projection`` and never talks to a model. Every module here is
imported on demand (``agent-tui context`` never loads any of it):

- :mod:`agent_tui.library.export`: ``export_jsonl``, ``export_markdown`` and
  ``export_html`` (the last one in :mod:`agent_tui.library.html_export`);
- :mod:`agent_tui.library.importers`: Claude Code and Codex CLI transcripts to
  agent-tui sessions;
- :mod:`agent_tui.library.search`: the rebuildable full-text index of every
  session, the listing the picker shows, forks grouped under their parent;
  its parts are ``search_summary``, ``search_text``, ``search_index``,
  ``search_match`` and ``search_query`` (the query parser);
- :mod:`agent_tui.library.actions`: fork and clone into a new file.
"""
