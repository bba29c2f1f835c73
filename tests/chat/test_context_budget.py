"""The budget arithmetic: the room a reply keeps, and what a full context leaves out by policy."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from gptoss_local.chat.context_budget import Budget, ContextFull, fit, turn_starts
from gptoss_local.conversation import Message, ToolCallRecord

SYSTEM = 50  # what the system and developer messages take in every prompt


def count(messages: Sequence[Message]) -> int:
    """A prompt's tokens: the fixed head, then 4 per message plus one per word."""
    return SYSTEM + sum(4 + len(m.content.split()) for m in messages)


def words(n: int) -> str:
    return " ".join(["w"] * n)


def chat(*sizes: int) -> list[Message]:
    """user/assistant turns of these many words each, alternating from the user."""
    return [Message("user" if i % 2 == 0 else "assistant", words(n)) for i, n in enumerate(sizes)]


def test_the_reply_room_grows_with_effort_and_is_capped_at_a_quarter() -> None:
    assert [Budget(32_768, e).reply_room for e in ("low", "medium", "high")] == [1024, 2048, 4096]
    assert Budget(8192, "high").reply_room == 2048
    assert Budget(8192, "high").prompt_limit == 6144
    assert Budget(2048, "low").summary_tokens == 256


def test_a_prompt_that_fits_is_sent_whole() -> None:
    messages = chat(100, 100, 100)
    assert fit(messages, count, Budget(4096, "medium"), "compact") == fit(
        messages, count, Budget(4096, "medium"), "stop"
    )
    got = fit(messages, count, Budget(4096, "medium"), "compact")
    assert (got.keep_from, got.summarise, got.leaves_out) == (0, False, False)
    assert got.prompt_tokens == count(messages)


def test_compacting_keeps_about_half_and_cuts_at_a_user_message() -> None:
    budget = Budget(2048, "medium")  # prompts up to 1,536; summaries up to 256
    messages = chat(*[200] * 9)  # 50 + 9 × 204 = 1,886 tokens
    got = fit(messages, count, budget, "compact")
    assert got.summarise and messages[got.keep_from].role == "user"
    kept = count(messages[got.keep_from :])
    assert kept <= (budget.prompt_limit - budget.summary_tokens) // 2
    # The earliest such cut: one turn earlier would not fit the target.
    earlier = max(i for i in turn_starts(messages) if i < got.keep_from)
    assert count(messages[earlier:]) > (budget.prompt_limit - budget.summary_tokens) // 2
    assert got.prompt_tokens == kept


def test_dropping_leaves_out_as_few_turns_as_make_it_fit() -> None:
    budget = Budget(2048, "medium")
    messages = chat(*[200] * 9)
    got = fit(messages, count, budget, "drop_oldest")
    assert not got.summarise and got.keep_from == 2  # one turn out: 1,478 ≤ 1,536
    assert count(messages[got.keep_from :]) <= budget.prompt_limit


def test_the_newest_user_message_is_never_left_out() -> None:
    budget = Budget(2048, "medium")
    messages = chat(200, 200, 200, 200, 1100)  # the newest message alone nearly fills the room
    got = fit(messages, count, budget, "drop_oldest")
    assert got.keep_from == 4 and messages[got.keep_from].content == words(1100)
    got = fit(messages, count, budget, "compact")
    assert got.keep_from == 4 and got.summarise  # all the history before it, summarised


def test_a_message_too_large_for_any_policy_is_refused_with_its_figures() -> None:
    budget = Budget(2048, "medium")
    messages = chat(100, 100, 1600)
    for policy in ("compact", "drop_oldest"):
        with pytest.raises(ContextFull) as caught:
            fit(messages, count, budget, policy)  # type: ignore[arg-type]
        assert caught.value.needed == count(messages[2:]) and caught.value.room == 1536
        assert "1,654 tokens" in str(caught.value) and "2,048-token" in str(caught.value)
    with pytest.raises(ContextFull):
        fit(chat(1600), count, budget, "compact")  # the only message


def test_stop_refuses_instead_of_leaving_anything_out() -> None:
    with pytest.raises(ContextFull, match='context_policy is "stop"'):
        fit(chat(*[200] * 9), count, Budget(2048, "medium"), "stop")


def test_a_call_and_its_output_stay_together() -> None:
    call = ToolCallRecord("lookup", {"q": "x"})
    messages = [
        Message("user", words(300)),
        Message("assistant", "", tool_calls=(call,)),
        Message("tool", words(600), tool_name="lookup"),
        Message("assistant", words(300)),
        Message("user", words(300)),
    ]
    got = fit(messages, count, Budget(2048, "medium"), "drop_oldest")
    assert got.keep_from == 4  # the cut cannot fall between the call and its output
