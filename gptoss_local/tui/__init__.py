"""The chat TUI: the only package that imports textual."""
