"""The model loaded while it is wanted (`serve/resident.py`), through the real server on the
tiny model: idle unload and reload, the keep-alive of a request, never unloading under a
reply that streams or waits, and the load count."""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path

import pytest
from resident_helpers import resident_server
from serve_helpers import until

from gptoss_local.backends.base import GenerationSettings, ReplyRequest
from gptoss_local.backends.openai.backend import OpenAIClientBackend
from gptoss_local.conversation import Conversation, Message
from gptoss_local.serve.keep_alive import parse_keep_alive


def test_the_model_unloads_when_idle_and_loads_again_for_the_next_request(
    tiny_gguf: Path,
) -> None:
    with resident_server(tiny_gguf, keep_alive=0.2) as served:
        assert served.chat("hi")[0] == 200
        until(lambda: not served.state()["loaded"], "the idle model to unload")
        state = served.state()
        assert state["expires_at"] is None and state["memory"] == {}
        status, _body = served.chat("hi again")  # the client just waits for the load
        assert status == 200
        assert served.state()["loads"] == state["loads"] + 1


def test_the_engine_tells_its_state_while_the_model_loads(tiny_gguf: Path) -> None:
    reload = threading.Event()
    with resident_server(tiny_gguf, keep_alive=0, reload=reload) as served:
        assert not served.state()["loaded"]  # 0: let go at once
        answers: list[int] = []
        asking = threading.Thread(target=lambda: answers.append(served.chat("hi", "app")[0]))
        asking.start()
        until(lambda: served.state()["loading"], "the request to start the load")
        state = served.state()  # answered while the load runs, not after it
        assert not state["loaded"] and [h["client"] for h in state["running"]] == ["app"]
        reload.set()
        asking.join(60)
        assert answers == [200] and served.state()["loads"] == 2


def test_two_requests_at_the_same_moment_load_one_copy(tiny_gguf: Path) -> None:
    reload = threading.Event()
    with resident_server(tiny_gguf, keep_alive=0, reload=reload, sequences=2) as served:
        before = served.state()["loads"]
        answers: list[int] = []
        asking = [threading.Thread(target=lambda n=n: answers.append(served.chat("hi", str(n))[0]))
                  for n in range(2)]  # fmt: skip
        for thread in asking:
            thread.start()
        until(lambda: len(served.state()["running"]) == 2, "both requests to ask for the model")
        reload.set()
        for thread in asking:
            thread.join(60)
        assert answers == [200, 200]
        assert served.state()["loads"] == before + 1


def test_on_demand_lets_the_model_go_until_the_first_request(tiny_gguf: Path) -> None:
    with resident_server(tiny_gguf, keep_alive=-1, load_now=False) as served:
        assert not served.state()["loaded"]
        assert served.state()["model"] == "tiny" and served.state()["context"] == 2048
        assert served.chat("hi")[0] == 200
        state = served.state()
        assert state["loaded"] and state["loads"] == 2 and state["expires_at"] is None


def test_a_requests_keep_alive_sets_the_timer(tiny_gguf: Path) -> None:
    with resident_server(tiny_gguf, keep_alive=-1) as served:  # the server's: never
        service = served.server.service
        hi = {"model": "tiny", "max_tokens": 4, "messages": [{"role": "user", "content": "hi"}]}
        asked = service.ask("/v1/chat/completions", hi)
        asked = replace(asked, request=replace(asked.request, keep_alive=0))
        assert service.answer(asked, threading.Event()).status == 200
        assert not served.state()["loaded"]  # 0: let go once the reply ended
        assert served.chat("hi")[0] == 200  # no keep-alive of its own: the server's again
        assert served.state()["loaded"] and served.state()["expires_at"] is None


def test_the_model_never_unloads_while_a_reply_streams_or_waits(tiny_gguf: Path) -> None:
    with resident_server(tiny_gguf, keep_alive=0) as served:
        results: list[int] = []
        first = threading.Thread(target=lambda: results.append(served.chat("gate", "app")[0]))
        first.start()
        assert served.gate.started.wait(60)
        second = threading.Thread(target=lambda: results.append(served.chat("hi", "chat")[0]))
        second.start()
        until(lambda: served.state()["waiting"] != [], "the second request to wait")
        state = served.state()
        assert state["loaded"], "unloaded under a reply"
        assert [h["client"] for h in state["running"]] == ["app"]
        assert [h["client"] for h in state["waiting"]] == ["chat"]
        loads = state["loads"]
        served.gate.open.set()
        first.join(60)
        second.join(60)
        assert results == [200, 200]
        assert served.state()["loads"] == loads  # the waiting one ran on the same load
        until(lambda: not served.state()["loaded"], "the model to unload once both ended")


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("300", 300), ("5m", 300), ("1h30m", 5400), ("0.5s", 0.5), ("0", 0), ("-1", -1),
     ("-5m", -300), ("forever", -1), ("250ms", 0.25)],
)  # fmt: skip
def test_keep_alive_durations_read_as_ollama_writes_them(text: str, seconds: float) -> None:
    assert parse_keep_alive(text) == seconds


@pytest.mark.parametrize("text", ["", "5 minutes", "m", "1x", "nan", "5m3"])
def test_other_durations_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="not a duration"):
        parse_keep_alive(text)


def test_the_engine_names_the_gptoss_local_command_it_answers(tiny_gguf: Path) -> None:
    with resident_server(tiny_gguf, keep_alive=-1) as served:
        client = OpenAIClientBackend(served.server.url, "tiny", None, "gptoss-local run")
        asked = ReplyRequest(Conversation(messages=(Message(role="user", content="gate"),)),
                             GenerationSettings(max_tokens=8))  # fmt: skip
        reading = threading.Thread(target=lambda: list(client.stream(asked)))
        reading.start()
        until(lambda: served.state()["running"] != [], "the reply to run")
        assert [h["client"] for h in served.state()["running"]] == ["gptoss-local run"]
        served.gate.open.set()
        reading.join(60)
