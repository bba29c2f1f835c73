"""Command line: ``python -m synthetic OUT.gguf --shape tiny|small|20b|120b``."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

from synthetic.shapes import PRESETS
from synthetic.writer import Progress, write_gguf


def _progress_printer() -> Progress:
    last = [-1]

    def report(done: int, total: int) -> None:
        # Print whole-percent steps only; the 120b file has ~700 tensors.
        pct = done * 100 // max(total, 1)
        if pct != last[0]:
            last[0] = pct
            print(f"\r{pct:3d}% of {total / 1e9:.2f} GB", end="", file=sys.stderr, flush=True)

    return report


def main(argv: Sequence[str] | None = None) -> int:
    """Writes a synthetic gpt-oss GGUF as the command line asks.

    Args:
        argv: Arguments without the program name; defaults to ``sys.argv[1:]``.

    Returns:
        The process exit status.
    """
    parser = argparse.ArgumentParser(prog="python -m synthetic")
    parser.add_argument("out", help="output .gguf path")
    parser.add_argument("--shape", choices=sorted(PRESETS), default="tiny")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    path = write_gguf(args.out, PRESETS[args.shape], args.seed, _progress_printer())
    seconds = time.perf_counter() - start
    print(f"\nwrote {path} ({path.stat().st_size:,} bytes) in {seconds:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
