"""Ollama's way of loading and letting go of a model, with the real `ollama` client, against
the resident model: `/api/ps` lists it only while it is loaded, with when it unloads; an empty
generate loads it, and one with `keep_alive` 0 lets it go."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from resident_helpers import resident_server
from serve_helpers import until

ollama = pytest.importorskip("ollama")


def test_ps_preload_and_unload_follow_the_resident_model(tiny_gguf: Path) -> None:
    with resident_server(tiny_gguf, keep_alive=600, load_now=False) as served:
        client = ollama.Client(host=f"http://127.0.0.1:{served.port}")
        assert client.ps().models == []  # on demand: nothing loaded yet
        loads = served.state()["loads"]
        client.generate(model="tiny", prompt="")  # Ollama's preload
        (running,) = client.ps().models
        assert running.name == "tiny" and served.state()["loaded"]
        assert running.expires_at is not None
        left = running.expires_at.timestamp() - time.time()
        assert 500 < left <= 600  # the server's keep-alive, from the preload
        client.generate(model="tiny", prompt="", keep_alive="1h")
        assert client.ps().models[0].expires_at.timestamp() - time.time() > 3000
        client.generate(model="tiny", prompt="", keep_alive=0)  # let go now
        until(lambda: not served.state()["loaded"], "the model to be let go")
        assert client.ps().models == []
        assert served.state()["loads"] == loads + 1  # one load for all of it


@pytest.mark.parametrize("load_now", [True, False])
def test_the_model_list_describes_the_resident_models_file(tiny_gguf: Path, load_now: bool) -> None:
    # As `gptoss-local serve` runs it: the client reads every entry (its dates too), and the
    # file's facts are there once the model has been loaded (on demand: after the first load).
    with resident_server(tiny_gguf, keep_alive=600, load_now=load_now) as served:
        client = ollama.Client(host=f"http://127.0.0.1:{served.port}")
        (before,) = client.list().models
        assert before.model == "tiny" and before.modified_at is not None
        client.generate(model="tiny", prompt="")  # loads it, if it was not
        (entry,) = client.list().models
        assert entry.size == tiny_gguf.stat().st_size and entry.digest
        assert entry.details is not None and entry.details.quantization_level
        assert entry.modified_at is not None
        assert abs(entry.modified_at.timestamp() - tiny_gguf.stat().st_mtime) < 1
        assert client.show("tiny").modified_at == entry.modified_at
