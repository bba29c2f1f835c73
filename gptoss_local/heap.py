"""Python's full garbage collections, moved to moments nobody waits on.

A full collection walks every tracked object while holding the GIL. With a model loaded and
the chat app running one took ~130 ms on the H200 machine; falling inside a reply, it stopped
the engine thread (which needs the GIL between tokens), and the chat's first reply ran at 0.90
of the engine's speed (bench/results/gpu/tui-first-reply-h200.txt). Collecting in full where the
user waits anyway (the end of a load, the end of a reply) resets the collector's counts, so the
next full collection is far away; what a load leaves (libraries, the UI, the model's tables) is
frozen as well, so later full collections skip it and stay short.
"""

from __future__ import annotations

import gc


def settle(freeze: bool = False) -> None:
    """Collect everything now; with `freeze`, exempt the survivors from later collections (they
    are never freed, so only for what lives as long as the process)."""
    gc.collect()
    if freeze:
        gc.freeze()
