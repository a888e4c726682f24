"""Modal screens: prompts, the replace editor, choices and the session picker."""
