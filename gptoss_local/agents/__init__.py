"""The coding agents `gptoss-local launch` runs on the local model (Codex CLI, Claude Code,
opencode): for each, its program, how to install it, and the configuration that points it at
`serve` (`known.AGENTS`)."""
