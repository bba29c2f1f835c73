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


# Connections beyond those that may run or wait: clients sending their bodies, /health and
# /v1/models, kept-alive connections between requests.
CONNECTION_HEADROOM = 32
# The kernel's queue of connections not yet accepted: when it overflows, Linux drops the
# handshake or resets the connection, so it holds a burst well beyond what is served and the
# excess gets a 503 from the server instead (Linux caps it at net.core.somaxconn, 4096).
MIN_BACKLOG = 1024
MAX_BACKLOG = 4096


def connection_limit(max_waiting: int, running: int) -> int:
    """Connections served at once; a request on any further one is answered 503."""
    return max_waiting + running + CONNECTION_HEADROOM


def listen_backlog(max_waiting: int, running: int) -> int:
    """The listening socket's backlog for a server with these limits."""
    return min(MAX_BACKLOG, max(MIN_BACKLOG, 4 * connection_limit(max_waiting, running)))
