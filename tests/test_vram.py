"""VramMonitor: live VRAM use through a fake NVML; every failure gives None, never an exception."""

from __future__ import annotations

import pytest
from cards import card
from fake_nvml import DRIVER_NOT_LOADED, GPU_IS_LOST, LIBRARY_NOT_FOUND, MIB, FakeNvml

from gptoss_local.hardware import machine as hardware
from gptoss_local.hardware.vram import VramMonitor, VramUse
from gptoss_local.units import GIB


def test_read_sums_used_and_total_over_every_gpu_keeps_each_card_and_follows_changes() -> None:
    first, second = card("4090", free_mib=20_000), card("3060", free_mib=12_000)
    nvml = FakeNvml([first, second])
    monitor = VramMonitor(nvml)
    total = (24_564 + 12_288) * MIB
    each = ((4_564 * MIB, 24_564 * MIB), (288 * MIB, 12_288 * MIB))
    assert monitor.read() == VramUse(4_852 * MIB, total, each)
    first.free_mib = 10_000  # a model was loaded
    use = monitor.read()
    assert use is not None and (use.used, use.total) == (14_852 * MIB, total)
    assert use.cards[0] == (14_564 * MIB, 24_564 * MIB)
    assert nvml.initialised and nvml.shutdowns == 0  # started once, kept open between reads
    assert VramMonitor(FakeNvml([card("4090", free_mib=20_000)])).read() == VramUse(
        4_564 * MIB, 24_564 * MIB
    )  # one card: no per-card part


def test_text_is_in_gib_with_one_decimal() -> None:
    assert VramUse(int(11.8 * GIB), 24 * GIB).text() == "VRAM 11.8/24.0 GiB"
    assert VramUse(int(11.8 * GIB), 24 * GIB).short() == "VRAM 11.8/24.0 GiB"


def test_several_cards_are_shown_each_and_in_whole_gib_when_short() -> None:
    cards = ((int(21.3 * GIB), 24 * GIB), (int(10.96 * GIB), 12 * GIB))
    use = VramUse(sum(c[0] for c in cards), 36 * GIB, cards)
    assert use.text() == "VRAM 21.3/24.0 + 11.0/12.0 GiB"
    assert use.short() == "VRAM 21/24+11/12 GiB"


def test_close_shuts_nvml_down_once_and_later_reads_give_none() -> None:
    nvml = FakeNvml([card("4090")])
    monitor = VramMonitor(nvml)
    assert monitor.read() is not None
    monitor.close()
    monitor.close()
    assert nvml.shutdowns == 1
    assert monitor.read() is None and not monitor.available


def test_close_before_any_read_does_not_touch_nvml() -> None:
    nvml = FakeNvml([card("4090")])
    VramMonitor(nvml).close()
    assert not nvml.initialised and nvml.shutdowns == 0


def test_no_gpu_gives_none_and_nvml_is_shut_down() -> None:
    nvml = FakeNvml([])
    monitor = VramMonitor(nvml)
    assert monitor.read() is None and not monitor.available
    assert nvml.shutdowns == 1


@pytest.mark.parametrize(
    "nvml",
    [
        FakeNvml([card("4090")], init_error=LIBRARY_NOT_FOUND),
        FakeNvml([card("4090")], init_error=DRIVER_NOT_LOADED),
        FakeNvml([card("4090")], init_exception=OSError("libnvidia-ml.so.1: bad ELF")),
    ],
    ids=["no-driver", "driver-not-loaded", "broken-library"],
)
def test_nvml_that_cannot_start_gives_none_and_is_not_tried_again(nvml: FakeNvml) -> None:
    monitor = VramMonitor(nvml)
    assert monitor.read() is None
    nvml.init_error, nvml.init_exception = None, None
    assert monitor.read() is None and not nvml.initialised  # one attempt only
    assert nvml.shutdowns == 0  # never started, so nothing to shut down


def test_a_gpu_lost_between_reads_gives_none_from_then_on() -> None:
    gpu = card("4090")
    nvml = FakeNvml([gpu])
    monitor = VramMonitor(nvml)
    assert monitor.read() is not None
    gpu.fail["memory"] = GPU_IS_LOST
    assert monitor.read() is None
    del gpu.fail["memory"]
    assert monitor.read() is None
    assert nvml.shutdowns == 1


def test_failure_while_listing_gpus_shuts_nvml_down() -> None:
    gpu = card("4090")
    gpu.fail["handle"] = GPU_IS_LOST
    nvml = FakeNvml([gpu])
    assert VramMonitor(nvml).read() is None
    assert nvml.shutdowns == 1


def test_missing_bindings_give_none(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_pynvml() -> None:
        raise ImportError("No module named 'pynvml'")

    monkeypatch.setattr(hardware, "load_nvml", no_pynvml)
    monitor = VramMonitor()
    assert monitor.read() is None and not monitor.available
