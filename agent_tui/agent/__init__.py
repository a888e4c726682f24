"""The agent: the loop, the tools, compaction."""
