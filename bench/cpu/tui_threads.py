"""bench/gpu/tui_check.py with llama.cpp's thread count fixed (issue 40's CPU follow-up): the
chat app's decode against the engine alone, at N threads.

Run: python bench/cpu/tui_threads.py N MODEL --out OUT [--engine-alone]   (tui_check's arguments)
"""

import runpy
import sys
from pathlib import Path

import gptoss_local.backends.llamacpp.load as load

threads = int(sys.argv.pop(1))
load.default_threads = lambda: threads  # what the loader takes when no count is asked for
sys.argv[0] = str(Path(__file__).resolve().parents[1] / "gpu" / "tui_check.py")
runpy.run_path(sys.argv[0], run_name="__main__")
