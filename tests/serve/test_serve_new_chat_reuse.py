"""A new chat that begins as an earlier one did reuses that shared start, through real HTTP on
the tiny model, however many turns the earlier chat has had since: its window layers are
restored from the checkpoint at the end of the earlier chat's first prompt."""

from __future__ import annotations

from pathlib import Path

import openai
from serve_helpers import running_server

from gptoss_local.backends.llamacpp.prompt_cache import MAX_CHECKPOINTS

SYSTEM = {"role": "system", "content": "You are a careful planner. " * 6}
FIRST = {"role": "user", "content": "Plan a picnic by the river for four friends. " * 4}


def test_a_new_chat_reuses_the_start_an_earlier_long_chat_shares(tiny_gguf: Path) -> None:
    with running_server(tiny_gguf) as served:
        served.steering.backend.keep_conversations(64 << 20)
        client = openai.OpenAI(base_url=served.url, api_key="x", max_retries=0)

        def ask(messages: list[dict]) -> str:
            done = client.chat.completions.create(model="tiny", messages=messages, max_tokens=8)
            return done.choices[0].message.content or "ok"

        messages = [SYSTEM, FIRST]
        for number in range(MAX_CHECKPOINTS + 2):  # more turns than checkpoints kept
            reply = ask(messages)
            question = f"and then, part {number}? " * 12
            messages += [{"role": "assistant", "content": reply},
                         {"role": "user", "content": question}]  # fmt: skip
        first, earlier = served.seen.stats[0], served.seen.stats[-1]
        # Past the cells the window layers hold (the 128-token window and a 512-token batch).
        assert earlier.prompt_tokens - first.prompt_tokens > 700
        ask([SYSTEM, FIRST])
        again = served.seen.stats[-1]
    assert again.prompt_tokens == first.prompt_tokens
    assert again.cached_tokens == first.prompt_tokens - 1 and again.evaluated_tokens == 1
