"""A plan over several cards reaches llama.cpp: the cards by PCI bus id, the layer split, the
split mode; the real engine loads the tiny model with them (on the CPU here, where llama.cpp has
no GPU device and the split changes nothing)."""

from __future__ import annotations

import ctypes
from dataclasses import replace
from pathlib import Path

import llama_cpp.llama_cpp as bindings
import pytest
from cards import card
from engine_helpers import open_tiny
from fake_nvml import FakeNvml

from gptoss_local import catalog
from gptoss_local.backends.base import BackendError
from gptoss_local.backends.llamacpp import load as llama_load
from gptoss_local.backends.llamacpp import native
from gptoss_local.backends.llamacpp.load import LoadSettings
from gptoss_local.hardware import machine as hardware
from gptoss_local.plan.planner import plan
from gptoss_local.plan.wishes import Wishes

GIB = 1 << 30


def two_card_plan():
    found = hardware.probe(FakeNvml([card("4090"), card("3060")]), environ={})
    hw = replace(found, ram_total=128 * GIB, ram_available=120 * GIB, disk_free=2_000 * GIB)
    return plan(hw, catalog.load(), Wishes(model="120b"))


def test_the_plans_cards_and_split_become_load_settings() -> None:
    p = two_card_plan()
    settings = LoadSettings.from_plan(p)
    assert settings.devices == ("00000000:01:00.0", "00000000:02:00.0")
    assert settings.tensor_split == p.tensor_split and len(p.tensor_split) == 2
    assert sum(settings.tensor_split) == 37  # 36 layers and the output layer
    cpu = replace(p, gpu_layers=0)
    assert LoadSettings.from_plan(cpu).devices == () == LoadSettings.from_plan(cpu).tensor_split


def test_a_plan_on_one_card_names_that_card() -> None:
    """One card of two (the planner's choice or --gpus) is passed as the device list: without
    it llama.cpp spreads the model over every card it sees, whatever the plan chose."""
    two = hardware.probe(FakeNvml([card("4090"), card("3060")]), environ={})
    hw = replace(two, ram_total=64 * GIB, ram_available=56 * GIB, disk_free=2_000 * GIB)
    chosen = plan(hw, catalog.load(), Wishes(model="20b", gpus=(1,)))
    assert chosen.gpu_indices == (1,)
    assert LoadSettings.from_plan(chosen).devices == ("00000000:02:00.0",)
    one = hardware.probe(FakeNvml([card("4090")]), environ={})
    hw = replace(one, ram_total=64 * GIB, ram_available=56 * GIB, disk_free=2_000 * GIB)
    settings = LoadSettings.from_plan(plan(hw, catalog.load(), Wishes(model="20b")))
    assert settings.devices == ("00000000:01:00.0",) and settings.tensor_split == ()


def test_one_card_of_two_loads_through_a_device_list(
    tiny_gguf: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real engine walks the list the loader builds (NULL-terminated, alive for the load)
    and loads onto the one card named. This build has no GPU device: ggml's CPU device stands
    in for the planned card, beside a second card that llama.cpp never gets."""
    native.init_backend()
    get = native._function("ggml_backend_dev_get", ctypes.c_void_p, [ctypes.c_size_t])
    cpu = native.Device(int(get(0)), "CPU", "0000:01:00.0")
    monkeypatch.setattr(native, "gpu_devices", lambda: [cpu, native.Device(1, "CUDA1", None)])
    two = hardware.probe(FakeNvml([card("4090"), card("3060")]), environ={})
    hw = replace(two, ram_total=64 * GIB, ram_available=56 * GIB, disk_free=2_000 * GIB)
    chosen = plan(hw, catalog.load(), Wishes(model="20b", gpus=(0,)))
    settings = replace(LoadSettings.from_plan(chosen), context=2048, n_batch=512, n_ubatch=512)
    log = tmp_path / "llama.log"
    with open_tiny(tiny_gguf, log, **vars(settings)) as loaded:
        assert loaded.tokenize("hi")
    # llama.cpp names each device of a list it was given; a CPU-only build given none names none.
    used = [line for line in log.read_text().splitlines() if "using device" in line]
    assert len(used) == 1 and "using device CPU" in used[0]


def test_the_split_reaches_llama_cpp_and_loads(
    tiny_gguf: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: dict[str, object] = {}
    real = bindings.llama_model_load_from_file

    def load(path: bytes, params: bindings.llama_model_params) -> object:
        seen["split_mode"] = params.split_mode
        seen["main_gpu"] = params.main_gpu
        seen["tensor_split"] = [params.tensor_split[i] for i in range(3)]
        seen["devices"] = params.devices
        return real(path, params)

    monkeypatch.setattr(bindings, "llama_model_load_from_file", load)
    assert native.gpu_devices() == []  # this engine is CPU-only: no devices list is passed
    log = tmp_path / "llama.log"
    with open_tiny(tiny_gguf, log, gpu_layers=-1, tensor_split=(2, 1),
                   devices=("00000000:01:00.0", "00000000:02:00.0")) as loaded:  # fmt: skip
        assert loaded.info().placement == "2 GPUs"
    assert seen == {
        "split_mode": bindings.LLAMA_SPLIT_MODE_LAYER,
        "main_gpu": 0,
        "tensor_split": [2.0, 1.0, 0.0],
        "devices": None,
    }


def fake_devices(monkeypatch: pytest.MonkeyPatch, *bus_ids: str | None) -> None:
    devices = [native.Device(100 + i, f"CUDA{i}", bus) for i, bus in enumerate(bus_ids)]
    monkeypatch.setattr(native, "gpu_devices", lambda: devices)


def handles(array: ctypes.Array | None) -> list[int | None]:
    assert array is not None
    return list(array)


def test_cards_are_found_by_pci_bus_id_in_the_plans_order(monkeypatch: pytest.MonkeyPatch) -> None:
    # CUDA numbered them fastest first: the 3060 at 02 is CUDA0 here, NVML's GPU 1.
    fake_devices(monkeypatch, "0000:02:00.0", "0000:01:00.0")
    found = llama_load._devices(("00000000:01:00.0", "00000000:02:00.0"))
    assert handles(found) == [101, 100, None]
    assert handles(llama_load._devices(("00000000:02:00.0",))) == [100, None]


def test_a_card_llama_cpp_does_not_see_is_a_load_error(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_devices(monkeypatch, "0000:01:00.0", "0000:03:00.0")
    with pytest.raises(BackendError, match=r"PCI bus 00000000:02:00\.0") as caught:
        llama_load._devices(("00000000:01:00.0", "00000000:02:00.0"))
    assert caught.value.kind == "load_failed" and "CUDA_VISIBLE_DEVICES" in str(caught.value.hint)


def test_one_card_and_one_device_need_no_list(monkeypatch: pytest.MonkeyPatch) -> None:
    """llama.cpp picks the one card it sees by itself, whatever its id says: no list, the path
    the installed command ran on the H200 (it crashed there once with a one-card list)."""
    fake_devices(monkeypatch, None)
    assert llama_load._devices(("00000000:01:00.0",)) is None
    fake_devices(monkeypatch, "0000:01:00.0", "0000:02:00.0")  # one card of two: a list
    assert handles(llama_load._devices(("00000000:02:00.0",))) == [101, None]
    fake_devices(monkeypatch)
    assert llama_load._devices(("00000000:01:00.0",)) is None  # CPU-only: loads on the CPU


def test_pci_bus_ids_compare_across_nvml_and_cuda_spellings() -> None:
    assert native.bus_key("00000000:0A:00.0") == native.bus_key("0000:0a:00.0")
    assert native.bus_key("0000:0a:00.0") != native.bus_key("0000:0b:00.0")
    assert native.bus_key(None) is None and native.bus_key("GPU-1234") is None
