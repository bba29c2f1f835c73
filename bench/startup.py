"""Startup cost of the CLI against bare Python, as ratios measured side by side.

Targets: `gptoss-local --help` within 0.15 s of `python -c pass`; `doctor --json` under 1 s.
Run `python bench/startup.py [--runs N] [--out FILE]` where gptoss-local is installed.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def time_command(command: list[str], runs: int, env: dict[str, str]) -> float:
    """Median wall time in seconds of `runs` runs, after one warm-up run."""
    subprocess.run(command, check=True, capture_output=True, env=env)
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True, env=env)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def cli_command() -> list[str]:
    script = Path(sys.executable).with_name("gptoss-local")
    return [str(script)] if script.exists() else [sys.executable, "-m", "gptoss_local"]


def machine() -> str:
    gpu = (
        shutil.which("nvidia-smi")
        and subprocess.run(
            ["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    return (
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, GPU: {gpu or 'none'}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--out", type=Path, help="also write the report to this file")
    args = parser.parse_args()
    env = {**os.environ, "GPTOSS_LOCAL_HOME": tempfile.mkdtemp(prefix="gptoss-bench-")}
    bare = time_command([sys.executable, "-c", "pass"], args.runs, env)
    rows = [("python -c pass", bare)]
    for argv in (["--help"], ["doctor", "--json"]):
        rows.append(
            (f"gptoss-local {' '.join(argv)}", time_command(cli_command() + argv, args.runs, env))
        )
    lines = [
        f"command: python bench/startup.py --runs {args.runs}",
        f"machine: {machine()}; Python {platform.python_version()}",
        f"{'what':28} {'median s':>9} {'÷ bare':>7} {'− bare s':>9}",
    ]
    lines += [f"{name:28} {t:9.3f} {t / bare:7.1f} {t - bare:9.3f}" for name, t in rows]
    help_extra, doctor_time = rows[1][1] - bare, rows[2][1]
    lines.append(f"--help within 0.15 s of bare Python: {'yes' if help_extra <= 0.15 else 'NO'}")
    lines.append(f"doctor --json under 1 s: {'yes' if doctor_time < 1 else 'NO'}")
    report = "\n".join(lines) + "\n"
    sys.stdout.write(report)
    if args.out:
        args.out.write_text(report)


if __name__ == "__main__":
    main()
