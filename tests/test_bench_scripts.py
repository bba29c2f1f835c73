"""The benchmark code that CI can run without a GPU: parsing llama.cpp's tools, the offload
probe and the measurement steps on the tiny model, the planner's budget fitting, and `bench`."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import llama_tools  # bench/gpu is on pytest's pythonpath (pyproject.toml)
import pytest
import steps
import steps_memory

from gptoss_local.tui import pump

GPU_BENCH = Path(__file__).resolve().parent.parent / "bench" / "gpu"

LLAMA_BENCH_JSON = json.dumps(
    [
        {"n_prompt": 512, "n_gen": 0, "n_depth": 0, "avg_ts": 9704.2, "stddev_ts": 40.1},
        {"n_prompt": 0, "n_gen": 128, "n_depth": 8192, "avg_ts": 290.5, "stddev_ts": 1.2},
    ]
)


def test_llama_bench_rows_are_parsed() -> None:
    rows = llama_tools.parse_llama_bench(LLAMA_BENCH_JSON)
    assert rows == [
        {"test": "pp512", "depth": 0, "tokens_per_second": 9704.2, "stddev": 40.1},
        {"test": "tg128", "depth": 8192, "tokens_per_second": 290.5, "stddev": 1.2},
    ]


def test_stream_summary_counts_gaps_between_tokens() -> None:
    arrivals = [10.0 + 0.004 * i for i in range(101)]  # 101 tokens, 4 ms apart
    summary = llama_tools.summarise_stream(arrivals, {"timings": {"predicted_per_second": 251.0}})
    assert summary["tokens"] == 101 and summary["client_tokens_per_second"] == pytest.approx(
        250, abs=0.5
    )
    assert summary["server_tokens_per_second"] == 251.0


@pytest.mark.parametrize(("budget", "low", "high"), [(24, 20, 30), (32, 14, 26)])
def test_offload_is_fitted_to_a_vram_budget(budget: float, low: int, high: int) -> None:
    settings = steps_memory.planned("120b", budget, 4096)
    assert low <= settings.cpu_moe_layers <= high
    assert settings.load_mode == "none" and settings.n_ubatch > 512


def test_offload_probe_reports_on_the_cpu(tiny_gguf: Path) -> None:
    report = steps_memory.probe(tiny_gguf, 1, 1024, ubatch=256, load_mode="none")
    assert "error" not in report, report.get("error")
    assert report["cpu_moe_layers"] == 1 and report["vram_after_load_mib"] is None
    assert (report["ubatch"], report["load_mode"]) == (256, "none")
    assert report["decode_tokens_per_second"] > 0 and report["context_used"] > 500


def test_measurement_steps_run_on_the_tiny_model(tiny_gguf: Path, tmp_path: Path) -> None:
    run = steps.Run(Path("/nonexistent"), tiny_gguf, tmp_path, repeats=1)
    args = argparse.Namespace(depths="0,1024", shape="tiny", backend_sampling=True)
    rows, table = steps.ours(run, args)
    assert {r["kind"] for r in rows} == {"decode", "prefill"} and len(table) == len(rows) + 1
    assert all(r["decode_tokens_per_second"] > 0 for r in rows if r["kind"] == "decode")
    turns, _ = steps.ttft(run, args)
    assert turns[0]["cached_tokens"] == 0
    assert (
        turns[1]["cached_tokens"] >= turns[0]["prompt_tokens"] and turns[1]["evaluated_tokens"] < 64
    )


def test_bench_command_json(isolated_home: Path, tiny_gguf: Path) -> None:
    env = {**os.environ, "GPTOSS_LOCAL_HOME": str(isolated_home)}
    command = [sys.executable, "-m", "gptoss_local", "bench", "--model-path", str(tiny_gguf),
               "--repeats", "1", "--generate", "16", "--json"]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["placement"] == "CPU" and doc["plan"]["placement"] == "cpu"
    names = [r["name"] for r in doc["results"]]
    assert names == ["greedy", "default"]
    assert all(
        r["generated_tokens"] == 16 and r["decode_tokens_per_second"] > 0 for r in doc["results"]
    )


def test_the_tui_stream_benchmark_runs(tmp_path: Path) -> None:
    """bench/tui_stream.py, briefly: it drives the real app, so an API change must break here."""
    done = subprocess.run(
        [sys.executable, "bench/tui_stream.py", "--rates", "500", "--seconds", "0.3",
         "--out", str(tmp_path / "out.txt")],
        cwd=GPU_BENCH.parent.parent, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "UI lag" in (tmp_path / "out.txt").read_text()


def test_the_gpu_tui_check_runs_on_the_cpu(
    tiny_gguf: Path, isolated_home: Path, tmp_path: Path
) -> None:
    done = subprocess.run(
        [sys.executable, str(GPU_BENCH / "tui_check.py"), str(tiny_gguf), "--out", str(tmp_path),
         "--context", "2048"],
        capture_output=True, text=True, timeout=180, env={**os.environ},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads((tmp_path / "tui.json").read_text())
    assert len(result["turns"]) == 4 and result["load_fractions_increasing"]
    assert all(t["decode_tokens_per_second"] > 0 for t in result["turns"])
    assert result["switch_interval"] == pytest.approx(pump.SWITCH_INTERVAL)
    assert result["batch_interval"] == 0.2


def test_the_prefill_benchmark_runs_on_the_cpu(tiny_gguf: Path, tmp_path: Path) -> None:
    """bench/prefill.py, briefly: the warm runs reuse what prefill evaluated, the cold do not."""
    done = subprocess.run(
        [sys.executable, "bench/prefill.py", str(tiny_gguf), "--gpu-layers", "0", "--runs", "1",
         "--history-tokens", "600", "--context", "2048", "--out", str(tmp_path / "out.json")],
        cwd=GPU_BENCH.parent.parent, capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    cases = json.loads((tmp_path / "out.json").read_text())["cases"]
    (cold,), (warm,) = cases["600-token history"]["runs"].values()
    assert cold["cached"] == 0 and warm["cached"] > 600 and warm["evaluated"] < 60
    assert "TTFT cold" in done.stdout


def test_the_serve_benchmark_runs_on_the_cpu(tiny_gguf: Path, tmp_path: Path) -> None:
    """bench/serve.py, briefly: our server in its own process with one sequence and with two,
    two clients at once, asked in every dialect it speaks."""
    out = tmp_path / "serve.txt"
    dialects = ["chat", "messages", "ollama", "responses"]
    done = subprocess.run(
        [sys.executable, "bench/serve.py", str(tiny_gguf), "--clients", "1", "2", "--turns", "2",
         "--tokens", "8", "--context", "2048", "--out", str(out), "--log", str(tmp_path / "log"),
         "--dialects", *dialects],
        cwd=GPU_BENCH.parent.parent, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    rows = json.loads(out.read_text().split("json: ", 1)[1])
    expected = [
        (f"gptoss-local serve -np {np}", dialect, clients, 2 * clients, 16 * clients)
        for np in (1, 2) for dialect in dialects for clients in (1, 2)
    ]  # fmt: skip
    seen = [(r["server"], r["dialect"], r["clients"], r["requests"], r["tokens"]) for r in rows]
    assert seen == expected
    assert all(r["ttft_median_s"] > 0 and r["throughput_tps"] > 0 for r in rows)
    # the second turn of each conversation reuses the first's prompt (Ollama reports none)
    assert all(r["cached_share"] > 0 for r in rows if r["dialect"] != "ollama")


def test_the_tokenize_reuse_benchmark_runs(tiny_gguf: Path, tmp_path: Path) -> None:
    out = tmp_path / "reuse.txt"
    done = subprocess.run(
        [sys.executable, str(GPU_BENCH.parent / "tokenize_reuse.py"), str(tiny_gguf),
         "--turns", "3,20", "--out", str(out)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    rows = out.read_text().splitlines()[-2:]
    assert [row.split()[0] for row in rows] == ["3", "20"]


def test_the_eagle_benchmark_runs_on_the_cpu(
    tiny_gguf: Path, eagle_gguf: Path, tmp_path: Path
) -> None:
    """bench/eagle.py, briefly: the pinned head's drafts are all kept (but the last reply's
    end), the random head's refused."""
    from synthetic import TINY
    from synthetic.eagle3 import write_eagle3

    pinned = write_eagle3(tmp_path / "pinned.gguf", TINY, seed=5, draft_ids=[300] * 8)
    done = subprocess.run(
        [sys.executable, "bench/eagle.py", str(tiny_gguf), "--head", str(eagle_gguf),
         "--pinned-head", str(pinned), "--pin", "300", "--tokens", "48", "--repeats", "1",
         "--experts-in-ram", "1", "--out", str(tmp_path / "eagle.txt")],
        cwd=GPU_BENCH.parent.parent, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads((tmp_path / "eagle.json").read_text())
    for placement in found.values():
        assert placement["pinned eagle K=3"]["per_decode"][0] > 3
        assert placement["eagle K=3 ungoverned"]["per_decode"][0] < 1.5
    assert "derived (not measured)" in done.stdout


def test_the_library_bench_runs_on_a_small_folder() -> None:
    script = Path(__file__).resolve().parent.parent / "bench" / "library_index.py"
    done = subprocess.run([sys.executable, str(script), "--files", "40", "--queries", "5"],
                          capture_output=True, text=True, timeout=300, env=os.environ)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "index from nothing: " in done.stdout and "40 added" in done.stdout
    assert "update, nothing changed: " in done.stdout and "(40 unchanged)" in done.stdout
    assert "browser.search (results page): p50 " in done.stdout


def test_the_resident_benchmark_runs_on_the_cpu(tiny_gguf: Path, tmp_path: Path) -> None:
    """bench/resident.py, briefly: replies in process and through a real `serve`, each exactly
    as long as asked, and `run` cold (loading itself) and through the engine."""
    out = tmp_path / "resident.txt"
    done = subprocess.run(
        [sys.executable, "bench/resident.py", str(tiny_gguf), "--rounds", "2", "--runs", "1",
         "--tokens", "128", "--run-tokens", "8", "--context", "2048", "--out", str(out)],
        cwd=GPU_BENCH.parent.parent, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    report = out.read_text()
    assert "shared / in-process" in report and "load average" in report
    (found,) = json.loads(report.split("json: ", 1)[1])
    for side in ("in-process", "shared"):
        replies = found["replies"][side]
        assert [r["tokens"] for r in replies] == [128, 128]
        assert all(r["ttft_s"] > 0 and r["tps"] > 0 and r["cpu_s"] > 0 for r in replies)
    assert [len(found["runs"][kind]) for kind in ("cold", "resident")] == [1, 1]
    assert set(found["ratios"]) == {"ttft", "tps", "reply", "cpu", "run"}


def test_the_compaction_benchmark_runs_on_the_cpu(tiny_gguf: Path, tmp_path: Path) -> None:
    """bench/compaction.py, briefly: a chat grows past a small context and is compacted; the
    first reply after it evaluates its prompt again, the one after that reuses it."""
    out = tmp_path / "compaction.txt"
    done = subprocess.run(
        [sys.executable, "bench/compaction.py", str(tiny_gguf), "--context", "2048",
         "--gpu-layers", "0", "--runs", "1", "--reply-tokens", "16", "--turn-repeats", "4",
         "--out", str(out)],
        cwd=GPU_BENCH.parent.parent, capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    run = json.loads(out.read_text().split("json: ", 1)[1])[0]
    assert run["summary"]["summary_s"] > 0 and run["summary"]["left_out"] > 0
    assert run["compacted"]["cached_tokens"] < run["before"]["cached_tokens"]
    assert run["after"]["cached_tokens"] > run["compacted"]["cached_tokens"]
