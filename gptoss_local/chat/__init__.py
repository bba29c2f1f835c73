"""The chat's services without a user interface: the model it talks to, the prefill while the
user types, the live VRAM reading, and which chat is open. Plain Python (no textual): the TUI
gives them callbacks and runs their blocking calls on its thread workers."""
