"""The agent: the loop, its tools, the system prompt."""
