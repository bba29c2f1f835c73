"""Anthropic's Messages API (`POST /v1/messages`, `/v1/messages/count_tokens`), spoken by
`serve` beside OpenAI's, so that Claude Code and apps on the `anthropic` SDKs can use the
local model: `request` and `blocks` read a request, `thinking` signs gpt-oss's reasoning so it
can come back, `reply` writes the message or its stream, `count` counts a prompt, `errors`
spells failures as Anthropic does."""
