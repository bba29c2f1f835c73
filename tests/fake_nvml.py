"""A stand-in for the pynvml module describing GPUs we do not own, with NVML's failure modes."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace

MIB = 1 << 20

# NVML return codes used below (nvmlReturn_t).
NOT_SUPPORTED = 3
NO_PERMISSION = 4
DRIVER_NOT_LOADED = 9
LIBRARY_NOT_FOUND = 12
GPU_IS_LOST = 15
UNKNOWN = 999


class NVMLError(Exception):
    """Like pynvml.NVMLError: carries the return code in `.value`."""

    def __init__(self, value: int) -> None:
        super().__init__(f"NVML error {value}")
        self.value = value


@dataclass
class FakeCard:
    """One GPU as NVML would describe it. `fail` maps an NVML function name to an error code."""

    name: str
    total_mib: int
    free_mib: int
    brand: int = 5  # GeForce
    capability: tuple[int, int] = (8, 9)
    bus_width: int | None = None
    mem_clock_mhz: int | None = None
    fail: dict[str, int] = field(default_factory=dict)


class FakeNvml:
    """Implements the pynvml functions gptoss-local calls."""

    NVMLError = NVMLError

    def __init__(
        self,
        cards: list[FakeCard],
        *,
        init_error: int | None = None,
        init_exception: Exception | None = None,
        count_error: int | None = None,
        driver: str | bytes = "580.95.05",
        cuda: int = 13000,
    ) -> None:
        self.cards = cards
        self.init_error = init_error
        self.init_exception = init_exception
        self.count_error = count_error
        self.driver = driver
        self.cuda = cuda
        self.initialised = False
        self.shutdowns = 0

    def nvmlInit(self) -> None:
        if self.init_exception is not None:
            raise self.init_exception
        if self.init_error is not None:
            raise NVMLError(self.init_error)
        self.initialised = True

    def nvmlShutdown(self) -> None:
        self.shutdowns += 1

    def nvmlSystemGetDriverVersion(self) -> str | bytes:
        return self.driver

    def nvmlSystemGetCudaDriverVersion(self) -> int:
        return self.cuda

    def nvmlDeviceGetCount(self) -> int:
        if self.count_error is not None:
            raise NVMLError(self.count_error)
        return len(self.cards)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> FakeCard:
        card = self.cards[index]
        self._check(card, "handle")
        return card

    def nvmlDeviceGetName(self, card: FakeCard) -> str:
        self._check(card, "name")
        return card.name

    def nvmlDeviceGetMemoryInfo(self, card: FakeCard) -> SimpleNamespace:
        self._check(card, "memory")
        total, free = card.total_mib * MIB, card.free_mib * MIB
        return SimpleNamespace(total=total, free=free, used=total - free)

    def nvmlDeviceGetBrand(self, card: FakeCard) -> int:
        self._check(card, "brand")
        return card.brand

    def nvmlDeviceGetCudaComputeCapability(self, card: FakeCard) -> tuple[int, int]:
        self._check(card, "capability")
        return card.capability

    def nvmlDeviceGetMemoryBusWidth(self, card: FakeCard) -> int:
        if card.bus_width is None:
            raise NVMLError(NOT_SUPPORTED)
        return card.bus_width

    def nvmlDeviceGetMaxClockInfo(self, card: FakeCard, clock_type: int) -> int:
        if card.mem_clock_mhz is None or clock_type != 2:
            raise NVMLError(NOT_SUPPORTED)
        return card.mem_clock_mhz

    def nvmlDeviceGetPciInfo(self, card: FakeCard) -> SimpleNamespace:
        self._check(card, "pci")
        return SimpleNamespace(busId=f"00000000:{self._index(card) + 1:02X}:00.0".encode())

    def nvmlDeviceGetUUID(self, card: FakeCard) -> str:
        self._check(card, "uuid")
        return f"GPU-{self._index(card):08x}-fake-{card.total_mib}"

    def _index(self, card: FakeCard) -> int:
        return next(i for i, known in enumerate(self.cards) if known is card)

    def _check(self, card: FakeCard, what: str) -> None:
        if what in card.fail:
            raise NVMLError(card.fail[what])
