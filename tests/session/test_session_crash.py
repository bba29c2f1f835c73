"""kill -9 during a streaming reply, then reopen: the prompt is kept, the partial reply marked."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from gptoss_local.session.history import History

# Streams "t0 t1 t2 ..." (the first 50 as reasoning) into a reply for ever, printing how many
# tokens had been appended each time the buffer was written.
CHILD = textwrap.dedent(
    """
    import sys, time
    from gptoss_local.session.history import History

    history = History(flush_interval=0.02)
    chat = history.create_chat(model="gpt-oss-20b")
    history.add_user_message(chat.id, "Tell me a long story.")
    reply = history.begin_assistant_message(chat.id)
    print("begun", reply.id, flush=True)
    i, flushes = 0, 0
    while True:
        if i < 50:
            history.append_to_assistant(reply.id, reasoning=f"t{i} ")
        else:
            history.append_to_assistant(reply.id, answer=f"t{i} ")
        i += 1
        if history.flush_count > flushes:
            flushes = history.flush_count
            print("flushed", i, flush=True)
        time.sleep(0.0005)
    """
)


def tokens(start: int, stop: int) -> str:
    return "".join(f"t{i} " for i in range(start, stop))


@pytest.mark.skipif(os.name == "nt", reason="SIGKILL is POSIX")
def test_a_killed_stream_leaves_the_prompt_and_a_marked_partial_reply() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    try:
        begun = child.stdout.readline().split()
        assert begun[0] == "begun", child.stderr.read() if child.stderr else ""
        flushed = 0
        while flushed < 100:  # several writes into the answer, then kill it mid-stream
            line = child.stdout.readline().split()
            assert line and line[0] == "flushed", "the child stopped streaming"
            flushed = int(line[1])
        child.send_signal(signal.SIGKILL)
    finally:
        child.kill()
        child.wait(timeout=10)
    assert child.returncode == -signal.SIGKILL

    with History() as history:
        interrupted = history.recover_interrupted()
        assert [m.id for m in interrupted] == [int(begun[1])]
        reply = interrupted[0]
        user, stored = history.messages(reply.chat_id)
        assert (user.role, user.content, user.status) == (
            "user",
            "Tell me a long story.",
            "complete",
        )
        assert stored == reply and reply.status == "partial"
        assert reply.reasoning == tokens(0, 50)
        written = reply.content.count(" ") + 50
        assert written >= flushed and reply.content == tokens(50, written)  # a clean prefix
        assert history.to_conversation(reply.chat_id).messages[-1].content == reply.content
