"""`gptoss-local bench` with the machine's engine holding the model: it measures through the
engine (saying so, its results labelled, the engine's own figures) and loads no second copy;
with another model there it is refused as `run` is, or switches the engine with --switch."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

from resident_helpers import get_json, resident_server
from serve_helpers import serve_process

from gptoss_local import benchmark
from gptoss_local.backends.openai.backend import OpenAIClientBackend
from gptoss_local.serve.service import ENGINE_PATH

Cli = Callable[..., tuple[int, str, str]]


def test_bench_measures_through_the_engine_and_loads_no_copy(
    tiny_gguf: Path, isolated_home: Path, cli: Cli
) -> None:
    with serve_process(tiny_gguf, isolated_home) as served:
        code, out, err = cli("bench", "--model-path", str(tiny_gguf), "--repeats", "1",
                             "--generate", "16", "--prompt-tokens", "256", "--json")  # fmt: skip
        state = get_json(served.port, ENGINE_PATH)
        log = served.log()
    assert code == 0, err
    assert "measuring through the engine" in err and "using the engine at" in err
    doc = json.loads(out)
    assert doc["through_engine"] == f"http://127.0.0.1:{served.port}/v1"
    assert doc["placement"] == "shared engine at 127.0.0.1"
    names = [r["name"] for r in doc["results"]]
    assert names == ["greedy, through the engine", "default, through the engine"]
    for result in doc["results"]:
        assert result["prompt_tokens"] == 256 and result["generated_tokens"] == 16
        # The engine's own prefill timing came back (the client alone cannot see one).
        assert result["prefill_tokens_per_second"] > 0 and result["decode_tokens_per_second"] > 0
    assert state["loads"] == 1 and "POST /v1/chat/completions 200" in log


def test_bench_refuses_another_model_beside_the_engine(
    tiny_gguf: Path, isolated_home: Path, cli: Cli, tmp_path: Path
) -> None:
    other = tmp_path / "other.gguf"
    shutil.copyfile(tiny_gguf, other)
    with serve_process(tiny_gguf, isolated_home):
        code, out, err = cli("bench", "--model-path", str(other), "--repeats", "1",
                             "--generate", "4", "--prompt-tokens", "32")  # fmt: skip
    assert code != 0 and out == ""
    assert "holds tiny, not other" in err and "--switch" in err


def test_bench_switch_measures_the_other_model_through_the_engine(
    tiny_gguf: Path, isolated_home: Path, cli: Cli, tmp_path: Path
) -> None:
    other = tmp_path / "other.gguf"
    shutil.copyfile(tiny_gguf, other)
    with serve_process(tiny_gguf, isolated_home) as served:
        code, out, err = cli("bench", "--model-path", str(other), "--switch", "--repeats", "1",
                             "--generate", "4", "--prompt-tokens", "32", "--json")  # fmt: skip
        state = get_json(served.port, ENGINE_PATH)
    assert code == 0, err
    assert "switching the engine to other" in err and "measuring through the engine" in err
    assert json.loads(out)["model"] == "other"
    assert state["model"] == "other" and state["loads"] == 2  # none loaded in bench itself


def test_each_run_through_the_engine_evaluates_its_whole_prompt(tiny_gguf: Path) -> None:
    with resident_server(tiny_gguf, keep_alive=-1) as served:
        client = OpenAIClientBackend(f"http://127.0.0.1:{served.port}/v1", "tiny")
        conversation = benchmark.filler_conversation(client, 256)
        first = benchmark.run_once(client, conversation, 8)
        again = benchmark.run_once(client, conversation, 8)  # a fresh cache key: no reuse
        kept = [benchmark.run_once(client, conversation, 8, keep_cache=True) for _ in range(2)]
    assert first.prompt_tokens == again.prompt_tokens == 256
    assert again.cached_tokens == 0 and again.evaluated_tokens == 256
    assert again.generated_tokens == 8 and again.prefill_seconds > 0
    assert kept[1].cached_tokens > 0  # keeping the cache, a run reuses the prompt before it
