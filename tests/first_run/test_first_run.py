"""The first-run decisions without a terminal: when to ask, what is on disk, downloading with
cancel and resume against the loopback server, remembering the choice, and loading for real."""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path

import pytest
from first_run_helpers import FILE, MODEL, install_tiny, machine, serve_tiny, setup_for
from http_fixture import Fault, FileServer
from store_files import gguf_file

from gptoss_local import config, paths
from gptoss_local.backends.base import BackendInfo
from gptoss_local.backends.llamacpp.backend import LlamaCppBackend
from gptoss_local.catalog import Catalog
from gptoss_local.plan.wishes import Wishes
from gptoss_local.store.errors import PullCancelled
from gptoss_local.store.layout import file_paths
from gptoss_local.store.progress import Progress


def test_the_first_run_asks_and_a_remembered_model_with_weights_does_not(
    cat: Catalog, tiny_gguf: Path
) -> None:
    setup = setup_for(cat)
    assert setup.first_run and setup.needs_screen()
    plan = setup.plan(setup.initial())
    assert plan.model == MODEL and plan.placement == "cpu"
    install_tiny(tiny_gguf)
    setup.remember(Wishes(context=4096, effort="high"), plan)
    saved = config.load()
    assert (saved.model, saved.context, saved.effort) == (MODEL, 4096, "high")
    later = setup_for(cat, context=None)
    assert not later.first_run and not later.needs_screen()
    wishes = later.initial()
    assert (wishes.model, wishes.context, wishes.effort) == (MODEL, 4096, "high")
    assert wishes.backend == "llamacpp"


def test_missing_weights_ask_again_even_after_the_first_run(cat: Catalog) -> None:
    config.save(config.Settings(model=MODEL))
    setup = setup_for(cat)
    assert not setup.first_run
    assert setup.needs_screen()  # the remembered model's file is gone


def test_flags_answer_the_questions_and_a_model_file_skips_them(
    cat: Catalog, tiny_gguf: Path
) -> None:
    install_tiny(tiny_gguf)
    assert not setup_for(cat, model="tiny", effort="low", backend="llamacpp").needs_screen()
    assert setup_for(cat, model="tiny").needs_screen()  # effort and engine still to choose
    assert not setup_for(cat, model_path=tiny_gguf).needs_screen()


def test_weights_count_a_partial_download_and_list_the_sources_in_order(
    cat: Catalog, http_server: FileServer
) -> None:
    config.save(config.Settings(source="mirror"))
    setup = setup_for(cat)
    weights = setup.weights(setup.plan(setup.initial()))
    assert weights is not None and not weights.present
    assert weights.on_disk == 0 and weights.missing == weights.spec.total_bytes
    assert weights.sources == ("mirror", "main") and weights.free_disk > 0
    part = file_paths(FILE, paths.models_dir()).part
    paths.ensure_dir(part.parent)
    part.write_bytes(http_server.files[FILE][:1000])  # type: ignore[index]
    again = setup.weights(setup.plan(setup.initial()))
    assert again is not None and again.on_disk == 1000 and not again.present


def test_a_cancelled_download_keeps_its_bytes_and_the_next_one_resumes(
    http_server: FileServer, tmp_path: Path
) -> None:
    big = tmp_path / "big.gguf"  # progress comes per MiB written: a file of several
    big.write_bytes(gguf_file(8 << 20, seed=3))
    cat = serve_tiny(http_server, big, tmp_path / "manifest.toml")
    size = big.stat().st_size
    http_server.fault("main", FILE, Fault("throttle", rate=4 << 20))
    setup = setup_for(cat)
    spec = setup.plan(setup.initial())
    weights = setup.weights(spec)
    assert weights is not None
    cancel = threading.Event()
    seen: list[Progress] = []

    def progress(p: Progress) -> None:
        seen.append(p)
        if p.phase == "download" and p.done > size // 10:
            cancel.set()

    with pytest.raises(PullCancelled, match="kept"):
        setup.download(weights.spec, progress, cancel)
    kept = file_paths(FILE, paths.models_dir()).part.stat().st_size
    assert 0 < kept < size
    path = setup.download(weights.spec, lambda p: None, threading.Event())
    assert path.read_bytes() == http_server.files[FILE]
    last = http_server.hits[-1]
    assert last.start == kept and last.sent == size - kept  # only the rest was fetched


def test_ready_loads_the_real_model_with_progress_and_cpu_sampling(
    cat: Catalog, tiny_gguf: Path
) -> None:
    install_tiny(tiny_gguf)
    setup = setup_for(cat)
    choices = setup.initial()
    ready = setup.ready(choices, setup.plan(choices))
    assert ready.model == MODEL
    reports: list[tuple[float, str]] = []
    backend = ready.open(lambda f, what: reports.append((f, what)) or True)
    try:
        assert isinstance(backend, LlamaCppBackend)
        assert not backend.options.backend_sampling  # no GPU here
        info: BackendInfo = backend.info()
        assert info.context_size == 4096 and info.placement == "CPU"
    finally:
        backend.close()
    fractions = [f for f, _ in reports]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0 and len(fractions) > 3
    assert reports[-1][1].startswith("making room for 4,096 tokens")


def test_a_gpu_plan_samples_on_the_gpu_unless_asked_not_to(cat: Catalog, tiny_gguf: Path) -> None:
    install_tiny(tiny_gguf)
    gpu = machine(gpu_gib=16)
    choices = Wishes(context=4096)
    plan = setup_for(cat, gpu).plan(choices)
    assert plan.placement == "gpu"
    for wishes, on_gpu in ((choices, True), (replace(choices, cpu_sampling=True), False)):
        backend = setup_for(cat, gpu).ready(wishes, plan).open(lambda *_: True)
        try:  # the CPU build loads it here all the same; the options are what the plan says
            assert isinstance(backend, LlamaCppBackend)
            assert backend.options.backend_sampling is on_gpu
        finally:
            backend.close()


def test_a_gguf_without_gpt_oss_shape_is_a_plain_error_before_the_app(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from gptoss_local.cli import main

    odd = tmp_path / "odd.gguf"
    odd.write_bytes(gguf_file(1 << 10, seed=5))  # says gpt-oss, holds one unrelated tensor
    assert main(["chat", "--model-path", str(odd)]) == 2
    err = capsys.readouterr().err
    assert "odd.gguf is marked as gpt-oss but lacks gpt-oss.block_count" in err


def test_an_alias_names_the_model_and_an_unknown_one_is_refused(cat: Catalog) -> None:
    from gptoss_local.errors import WishError

    assert setup_for(cat, model="tiny").initial().model == MODEL
    with pytest.raises(WishError, match="unknown model 'huge'"):
        setup_for(cat, model="huge").initial()
