"""Saving a streamed reply: buffered deltas (few writes, nothing lost), statuses, stats, calls."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from session_helpers import STATS, open_history

from gptoss_local.events import AnswerDelta, PreambleDelta, ReasoningDelta, ToolCall, TurnEnded
from gptoss_local.session.errors import HistoryError
from gptoss_local.session.history import History


def stored_text(history: History, message_id: int) -> tuple[str, str]:
    # Straight from SQLite, bypassing the buffer, to see what a crash would leave.
    row = history._conn.execute(
        "SELECT reasoning, content FROM messages WHERE id = ?", (message_id,)
    ).fetchone()
    return row["reasoning"], row["content"]


def test_many_appends_make_few_writes_and_finish_loses_nothing(tmp_path: Path) -> None:
    history, clock = open_history(tmp_path / "h.sqlite3", flush_interval=0.1)
    chat = history.create_chat()
    reply = history.begin_assistant_message(chat.id)
    for i in range(1000):  # 1,000 tokens at 2,000 tokens/s: 0.5 s of streaming
        history.append_to_assistant(reply.id, reasoning="r" if i < 400 else "", answer=f"{i},")
        clock.advance(0.0005)
    assert 4 <= history.flush_count <= 5  # one write per 100 ms, not one per token
    reasoning, content = stored_text(history, reply.id)
    assert reasoning == "r" * 400 and "".join(f"{i}," for i in range(1000)).startswith(content)
    finished = history.finish_assistant(reply.id, STATS)
    assert finished.content == "".join(f"{i}," for i in range(1000))
    assert stored_text(history, reply.id) == ("r" * 400, finished.content)
    assert (finished.status, finished.stats) == ("complete", STATS)
    history.close()


def test_a_burst_of_text_is_written_before_the_interval(tmp_path: Path) -> None:
    history, _ = open_history(tmp_path / "h.sqlite3", flush_chars=100)
    reply = history.begin_assistant_message(history.create_chat().id)
    for _ in range(25):
        history.append_to_assistant(reply.id, answer="0123456789")  # the clock never moves
    assert history.flush_count == 2 and len(stored_text(history, reply.id)[1]) == 200
    history.close()


def test_reads_see_text_still_in_the_buffer(history: History) -> None:
    chat = history.create_chat()
    reply = history.begin_assistant_message(chat.id)
    history.append_to_assistant(reply.id, answer="Hel")
    history.append_to_assistant(reply.id, answer="lo")
    assert stored_text(history, reply.id) == ("", "")
    assert history.messages(chat.id)[-1].content == "Hello"


def test_close_writes_the_buffer_and_keeps_the_reply_partial(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    history, _ = open_history(path)
    chat = history.create_chat()
    reply = history.begin_assistant_message(chat.id)
    history.append_to_assistant(reply.id, reasoning="thinking")
    history.close()
    with History(path) as again:
        found = again.get_message(reply.id)
        assert (found.reasoning, found.status) == ("thinking", "partial")
        assert [m.id for m in again.recover_interrupted()] == [reply.id]
        kept = again.mark_stopped(reply.id)  # "keep it as it is"
        assert kept.status == "stopped" and again.recover_interrupted() == []


def test_record_routes_events_and_keeps_tool_calls(history: History) -> None:
    reply = history.begin_assistant_message(history.create_chat().id, effort="high")
    weather = ToolCall("get_weather", {"city": "Paris"}, '{"city": "Paris"}')
    broken = ToolCall("lookup", {}, "{not json", "arguments are not valid JSON")
    for event in (
        ReasoningDelta("Need the weather. "),
        PreambleDelta("Let me check."),
        weather,
        TurnEnded("call"),
    ):
        history.record(reply.id, event)
    assert history._conn.execute(
        "SELECT tool_calls IS NOT NULL FROM messages WHERE id = ?", (reply.id,)
    ).fetchone()[0]  # a call is written at once
    done = history.finish_assistant(reply.id, STATS, [broken])
    assert done.reasoning == "Need the weather. " and done.content == "Let me check."
    assert done.tool_calls == (weather, broken) and done.effort == "high"
    answer = history.begin_assistant_message(done.chat_id)
    history.record(answer.id, AnswerDelta("ok"))
    assert history.get_message(answer.id).content == "ok"


def test_stopped_and_failed_replies_keep_their_text(history: History) -> None:
    chat = history.create_chat()
    stopped = history.begin_assistant_message(chat.id)
    history.append_to_assistant(stopped.id, answer="half an ans")
    assert history.mark_stopped(stopped.id, STATS).status == "stopped"
    failed = history.begin_assistant_message(chat.id)
    history.append_to_assistant(failed.id, reasoning="hmm")
    out = history.fail_assistant(failed.id, "the model ran out of VRAM")
    assert (out.status, out.error, out.reasoning) == ("failed", "the model ran out of VRAM", "hmm")
    assert history.get_message(stopped.id).content == "half an ans"


def test_only_a_reply_in_progress_takes_deltas(history: History) -> None:
    chat = history.create_chat()
    user = history.add_user_message(chat.id, "hi")
    reply = history.begin_assistant_message(chat.id)
    history.finish_assistant(reply.id)
    with pytest.raises(HistoryError, match=r"message \d+ is not a reply in progress \(a complete"):
        history.append_to_assistant(reply.id, answer="late")
    with pytest.raises(HistoryError, match="not a reply in progress"):
        history.finish_assistant(reply.id)
    with pytest.raises(HistoryError, match="not a reply in progress"):
        history.append_to_assistant(user.id, answer="x")
    with pytest.raises(HistoryError, match="no such message"):
        history.mark_stopped(12345)
    history.close()
    with pytest.raises(HistoryError, match="closed"):
        history.create_chat()


def test_an_append_costs_microseconds(tmp_path: Path) -> None:
    with History(tmp_path / "h.sqlite3") as history:  # the real clock and 100 ms interval
        reply = history.begin_assistant_message(history.create_chat().id)
        start = time.perf_counter()
        for _ in range(50_000):
            history.append_to_assistant(reply.id, answer="tok ")
        per_append = (time.perf_counter() - start) / 50_000
        assert history.get_message(reply.id).content == "tok " * 50_000
    print(f"\nappend_to_assistant: {per_append * 1e6:.2f} µs per call")
    assert per_append < 50e-6  # a token at 2,000 tokens/s has 500 µs
