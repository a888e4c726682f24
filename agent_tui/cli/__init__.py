"""Command line: the headless session commands and the entry point of the app."""
