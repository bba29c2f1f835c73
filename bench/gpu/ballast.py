"""Ballast: processes that hold GPU memory so that NVML reports a chosen amount free per card,
to stand a large GPU in for a smaller one (an H200 for a 24 GB or 12 GB card).

One holder process per card (`python bench/gpu/ballast.py GPU FREE_MIB`): it sees only its card
(CUDA_VISIBLE_DEVICES, with CUDA_DEVICE_ORDER=PCI_BUS_ID so that CUDA's device 0 is NVML's card
GPU), creates the card's primary context through the CUDA driver API (libcuda, present wherever
the driver is: no PyTorch or toolkit needed), allocates until NVML says at most FREE_MIB +
`SLACK_MIB` is free, prints "ready <free MiB>", and keeps it all until its stdin closes. The
context's own memory counts as ballast too, since NVML sees it as used.

    with Ballast({0: 24 * 1024, 1: 12 * 1024}) as free:   # MiB free per NVML index
        ...                                                 # free: what NVML reports now
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

MIB = 1 << 20
SLACK_MIB = 64  # how far above the target the free memory may stay
STEP_MIB = 64  # the last allocations' size, to come close to the target


def next_allocation(free_mib: int, target_mib: int) -> int:
    """MiB to allocate next: most of the way at once (one large block leaves a margin for the
    driver's own bookkeeping), then `STEP_MIB` at a time; 0 once within `SLACK_MIB`."""
    excess = free_mib - target_mib
    if excess <= SLACK_MIB:
        return 0
    if excess > 4 * 1024:
        return excess - 1024
    return min(STEP_MIB, excess)


def free_mib(index: int) -> int:
    """NVML's free memory of card `index` (NVML numbers cards in PCI bus order)."""
    import pynvml

    pynvml.nvmlInit()
    try:
        return int(pynvml.nvmlDeviceGetMemoryInfo(pynvml.nvmlDeviceGetHandleByIndex(index)).free)
    finally:
        pynvml.nvmlShutdown()


def _check(result: int, what: str) -> None:
    if result != 0:
        raise RuntimeError(f"{what} failed with CUDA error {result}")


def hold(index: int, target_mib: int) -> None:
    """The holder: allocate on the only visible card until NVML card `index` has `target_mib`
    free (within the slack), report, and wait for stdin to close."""
    cuda = ctypes.CDLL("libcuda.so.1")
    _check(cuda.cuInit(0), "cuInit")
    device, context = ctypes.c_int(), ctypes.c_void_p()
    _check(cuda.cuDeviceGet(ctypes.byref(device), 0), "cuDeviceGet")
    _check(cuda.cuDevicePrimaryCtxRetain(ctypes.byref(context), device), "cuDevicePrimaryCtxRetain")
    _check(cuda.cuCtxSetCurrent(context), "cuCtxSetCurrent")
    blocks = []
    while size := next_allocation(free_mib(index) // MIB, target_mib):
        pointer = ctypes.c_uint64()
        _check(cuda.cuMemAlloc_v2(ctypes.byref(pointer), ctypes.c_size_t(size * MIB)), "cuMemAlloc")
        blocks.append(pointer)
    print(f"ready {free_mib(index) // MIB}", flush=True)
    sys.stdin.read()  # until the parent closes our stdin (or dies)


@contextmanager
def Ballast(targets: dict[int, int]) -> Iterator[dict[int, int]]:
    """Holders for every card in `targets` (NVML index → MiB to leave free); yields the MiB
    each card has free once they are ready, and ends them on the way out."""
    holders = {}
    env = {**os.environ, "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}
    try:
        for index, target in targets.items():
            holders[index] = subprocess.Popen(
                [sys.executable, __file__, str(index), str(target)],
                env={**env, "CUDA_VISIBLE_DEVICES": str(index)},
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            )  # fmt: skip
        free = {}
        for index, holder in holders.items():
            assert holder.stdout is not None
            line = holder.stdout.readline().split()
            if line[:1] != ["ready"]:
                raise RuntimeError(f"the ballast on GPU {index} did not get ready: {line}")
            free[index] = int(line[1])
        yield free
    finally:
        for holder in holders.values():
            if holder.stdin:
                holder.stdin.close()
            try:
                holder.wait(timeout=30)
            except subprocess.TimeoutExpired:
                holder.kill()


if __name__ == "__main__":
    hold(int(sys.argv[1]), int(sys.argv[2]))
