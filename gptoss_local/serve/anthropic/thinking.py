"""gpt-oss's reasoning as Anthropic's thinking blocks, and the `thinking` field as an effort.

A thinking block's `signature` is the sealed reasoning (`carried.seal`, as Codex's
`encrypted_content`): when the client sends the block back unchanged, the server knows it for
its own and gives the model its chain of thought again, which gpt-oss needs through a chain of
tool calls (Harmony keeps the analysis of a turn still calling tools). The reasoning is read
from the signature, so a block sent back with its text left out or changed still carries what
the model thought. A block another server signed (Claude's own, from a session that switched
models) or with no signature is dropped: its text was not this model's reasoning.

gpt-oss always reasons, at low, medium or high effort. `thinking: {type: "enabled",
budget_tokens: N}` picks the effort by the budget (`effort_for_budget`), `disabled` asks for
the least (low), `adaptive` leaves the server's default; `output_config.effort` names one
outright (xhigh and max are high).
"""

from __future__ import annotations

from typing import Any

from gptoss_local.kinds import Effort
from gptoss_local.serve.carried import seal, unseal
from gptoss_local.serve.errors import bad_request

LOW_BELOW = 4_096  # a budget under this many tokens is low effort
MEDIUM_BELOW = 16_384  # ... under this, medium; from it on, high
KINDS = ("enabled", "disabled", "adaptive", "between_tools")
DISPLAYS = ("summarized", "omitted")
EFFORTS: dict[str, Effort] = {"low": "low", "medium": "medium", "high": "high",
                              "xhigh": "high", "max": "high"}  # fmt: skip


def sign(reasoning: str) -> str:
    """The signature of a thinking block that holds `reasoning`."""
    return seal(reasoning)


def recognised(block: dict[str, Any]) -> str | None:
    """The reasoning a thinking block sent back holds when this server signed it, else None."""
    return unseal(block.get("signature"))


def effort_for_budget(budget: int) -> Effort:
    """The effort for a thinking budget: low under 4,096 tokens, medium under 16,384, high."""
    if budget < LOW_BELOW:
        return "low"
    return "medium" if budget < MEDIUM_BELOW else "high"


def read_thinking(config: Any) -> tuple[Effort | None, bool, bool]:
    """The `thinking` field: the effort it asks for (None: the server's default), whether the
    client asked to see thinking, and whether it asked for it omitted (`display`)."""
    if config is None:
        return None, False, False
    kind = config.get("type") if isinstance(config, dict) else None
    if kind not in KINDS:
        raise bad_request(f"thinking.type must be one of {', '.join(KINDS)}", "thinking.type")
    display = config.get("display")
    if display is not None and display not in DISPLAYS:
        raise bad_request(f"thinking.display must be one of {', '.join(DISPLAYS)}",
                          "thinking.display")  # fmt: skip
    if kind == "disabled":
        return "low", False, False  # gpt-oss cannot stop reasoning: the least of it
    effort = None
    if kind == "enabled":
        budget = config.get("budget_tokens")
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
            raise bad_request("thinking.budget_tokens must be a whole number of at least 1",
                              "thinking.budget_tokens")  # fmt: skip
        effort = effort_for_budget(budget)
    return effort, True, display == "omitted"


def read_output_effort(config: Any) -> Effort | None:
    """`output_config.effort`, as gpt-oss's effort (None when not given)."""
    value = (config or {}).get("effort") if isinstance(config, dict) else None
    if value is None:
        return None
    if value not in EFFORTS:
        raise bad_request(f"output_config.effort must be one of {', '.join(EFFORTS)}",
                          "output_config.effort")  # fmt: skip
    return EFFORTS[value]
