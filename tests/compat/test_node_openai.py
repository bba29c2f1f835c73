"""OpenAI's Node library (`openai` on npm, pinned in tests/clients) against `serve`: chat,
streaming, a tool round trip with `runTools`, a JSON-schema response format with `parse`, and
where the reasoning shows (node_openai.mjs runs each scenario and prints what it got).

Where the reasoning shows: the library keeps unknown fields, so `message.reasoning_content` and
each chunk's `delta.reasoning_content` are there as sent. Its stream helper
(`chat.completions.stream().finalChatCompletion()`) accumulates the fields it knows (content,
refusal, tool calls) and overwrites others with each delta: its message's `reasoning_content`
is the last piece only. `runTools` keeps `reasoning_content` on its `messages` but replays only
the request fields it knows, so the chain of thought does not go back with a tool call.
Responses: the reasoning item's `content` and the `response.reasoning_text.delta` events, as
sent (the library passes both through untouched).

Skipped where node or the package is missing, except under `GPTOSS_LOCAL_REQUIRE_CLIENTS=1`.
"""

from __future__ import annotations

from compat_helpers import (
    ANSWER,
    CALL_REASONING,
    REASONING,
    assert_city_json,
    assert_city_schema_reached,
    assert_round_trip,
    cities,
    run_node,
)
from serve_helpers import Running


def test_chat_keeps_reasoning_apart(served: Running) -> None:
    done = run_node(served, "chat")
    assert done["message"] == {
        "role": "assistant", "content": ANSWER, "reasoning_content": REASONING,
    }  # fmt: skip
    assert done["finish_reason"] == "stop"


def test_streaming(served: Running) -> None:
    done = run_node(served, "stream")
    deltas = [c["choices"][0]["delta"] for c in done["chunks"] if c["choices"]]
    assert "".join(d.get("content") or "" for d in deltas) == ANSWER
    pieces = [d["reasoning_content"] for d in deltas if d.get("reasoning_content")]
    assert "".join(pieces) == REASONING and len(pieces) > 1
    assert done["chunks"][-1]["usage"]["completion_tokens"] > 0
    final = done["final"]
    assert final["content"] == ANSWER
    # The helper overwrites the field it does not know with each piece: the last one is left.
    assert final["reasoning_content"] != REASONING and REASONING.endswith(
        final["reasoning_content"]
    )


def test_a_tool_round_trip_with_run_tools(served: Running) -> None:
    done = run_node(served, "tools")
    assert done["answer"] == ANSWER
    cities.extend(done["cities"])  # the tool ran in node
    assert done["messages"][1]["reasoning_content"] == CALL_REASONING  # kept for the caller
    # but not replayed: runTools sends back only the request fields it knows
    assert_round_trip(served, "")


def test_a_json_schema_response_format(served: Running) -> None:
    message = run_node(served, "schema")["message"]
    city = assert_city_json(message["content"])
    assert message["parsed"] == city.model_dump()
    assert_city_schema_reached(served)


def test_responses_reasoning_items_and_events(served: Running) -> None:
    done = run_node(served, "responses")
    reasoning, answer = done["output"]
    assert reasoning["type"] == "reasoning" and reasoning["summary"] == []
    assert reasoning["content"] == [{"type": "reasoning_text", "text": REASONING}]
    assert answer["type"] == "message" and done["output_text"] == ANSWER
    events = done["events"]

    def joined(kind: str) -> str:
        return "".join(e["delta"] for e in events if e["type"] == kind)

    assert joined("response.reasoning_text.delta") == REASONING
    assert joined("response.output_text.delta") == ANSWER
    assert not any("summary" in e["type"] for e in events)
