"""Chat history and conversation state, shared by the TUI and the `chats` command.

Nothing here imports textual: the UI drives `history.History` and reads plain dataclasses. The
package imports nothing at load time so that `gptoss_local.errors` can name its error types
cheaply; import the submodules you need (`session.history`, `session.export`).
"""
