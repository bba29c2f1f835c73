"""The agents `launch` runs, by name."""

from __future__ import annotations

from gptoss_local.agents import claude, codex, opencode
from gptoss_local.agents.agent import Agent

AGENTS: dict[str, Agent] = {
    agent.name: agent for agent in (codex.AGENT, claude.AGENT, opencode.AGENT)
}
