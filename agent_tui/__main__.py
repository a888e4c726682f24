from agent_tui.cli.main import entry

entry()
