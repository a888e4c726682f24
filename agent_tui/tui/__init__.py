"""The Textual app: widgets and screens."""
