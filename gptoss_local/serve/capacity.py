"""How much `serve` runs at once, and how much RAM it gives the caches of conversations
waiting for their next turn."""

from __future__ import annotations

MIB = 1 << 20
# Replies decoded together on a GPU: eight clients of the 20b shape got 1.7 times a queue's
# tokens per second on an H200 (bench/RESULTS.md, "serve"); on a CPU one at a time is as fast.
GPU_PARALLEL = 4
# llama-server keeps up to 8 GiB of prompt caches; half that holds some 35 conversations of 4,000
# tokens of gpt-oss-20b (about 100 MB each: 24 KiB a token in its full-attention layers).
DEFAULT_CACHE_RAM_MIB = 4096


def cache_ram_bytes(mib: int | None) -> int:
    """`--cache-ram` in bytes; unset: a quarter of the RAM free now, at most the default."""
    if mib is not None:
        return mib * MIB
    import psutil  # deferred: only `serve` needs it, and it costs a few ms to import

    return min(DEFAULT_CACHE_RAM_MIB * MIB, psutil.virtual_memory().available // 4)
