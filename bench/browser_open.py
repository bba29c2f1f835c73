"""The browser's `open` of hostile documents (issue 36): time and peak memory of a first `open`
and of a repeated one, for each of an 8 MB file of 4 million short lines, a 10 MiB file of one
line, and an HTML page of a million entities.

    python bench/browser_open.py [--out FILE] [DOCUMENT ...]

Each document is opened in a fresh Python process (so one's memory does not hide another's):
timed, with the process's peak RSS growth (ru_maxrss) over each open; then again, in another
process under tracemalloc, for the Python heap's peak over each open above what it held before
(the pages already kept are not counted again).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

MIB = 1024 * 1024
DOCUMENTS = {
    "lines.txt": "8 MB of 4,000,000 short lines",
    "one-line.txt": "10 MiB on one line",
    "entities.html": "HTML of 1,000,000 entities",
    "elements.html": "HTML of 800,000 elements of one entity each",
}

# Run in the child: open the document twice through a BrowserTool over an empty index.
CHILD = r"""
import json, resource, sys, time, tracemalloc
from pathlib import Path
from gptoss_local.library import Library
from gptoss_local.tools.browser import BrowserTool
folder, name, traced = Path(sys.argv[1]), sys.argv[2], sys.argv[3] == "1"
tool = BrowserTool(Library.open(folder.parent / "library.sqlite3"), (str(folder),))
arguments = {"id": str(folder / name), "loc": 0, "num_lines": 3}
result = {}
if traced:
    tracemalloc.start()
for run in ("first", "again"):
    if traced:
        tracemalloc.reset_peak()
        held = tracemalloc.get_traced_memory()[0]
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    out = tool.call("open", arguments)
    seconds = time.perf_counter() - started
    assert not out.error, out.content
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss
    result[run] = {"seconds": seconds, "rss_growth_kib": grown, "chars": len(out.content)}
    if traced:
        result[run]["heap_peak"] = tracemalloc.get_traced_memory()[1] - held
print(json.dumps(result))
"""


def write_documents(folder: Path) -> None:
    """The three documents of the issue."""
    (folder / "lines.txt").write_bytes(b"x\n" * 4_000_000)
    words = b"lorem ipsum dolor sit amet "
    (folder / "one-line.txt").write_bytes((words * (10 * MIB // len(words) + 1))[: 10 * MIB])
    (folder / "entities.html").write_bytes(b"<p>" + b"&amp;" * 1_000_000 + b"</p>\n")
    (folder / "elements.html").write_bytes(b"<b>&amp;</b>" * 800_000)


def measure(folder: Path, name: str, traced: bool) -> dict[str, dict[str, float]]:
    """One child's two opens of `name`."""
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(folder), name, "1" if traced else "0"],
        capture_output=True, text=True, check=True, cwd=folder,  # the path's code, not cwd's
    )  # fmt: skip
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="also write the report here")
    parser.add_argument("documents", nargs="*", help=f"of {', '.join(DOCUMENTS)} (default: all)")
    args = parser.parse_args()
    if set(args.documents) - set(DOCUMENTS):
        parser.error(f"documents are {', '.join(DOCUMENTS)}")
    lines = [
        "The browser's open of hostile documents (bench/browser_open.py)",
        "command: python " + " ".join(sys.argv),
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs; Python "
        f"{platform.python_version()}; {platform.platform()}; load average "
        + " ".join(f"{load:.1f}" for load in os.getloadavg()),
        "open(id=PATH, loc=0, num_lines=3) through BrowserTool.call; each document in its own "
        "process; memory: peak RSS growth over the call (ru_maxrss), and the Python heap's peak "
        "over the call above what it held before (tracemalloc, a second process)",
        "",
    ]
    with tempfile.TemporaryDirectory() as temp:
        folder = Path(temp) / "docs"
        folder.mkdir()
        write_documents(folder)
        for name, what in DOCUMENTS.items():
            if args.documents and name not in args.documents:
                continue
            timed, traced = measure(folder, name, False), measure(folder, name, True)
            size = (folder / name).stat().st_size / MIB
            lines.append(f"{name} ({what}, {size:.1f} MiB):")
            for run in ("first", "again"):
                lines.append(
                    f"  {run:5} open: {timed[run]['seconds']:7.3f} s, "
                    f"RSS +{timed[run]['rss_growth_kib'] / 1024:6.1f} MiB, "
                    f"heap peak {traced[run]['heap_peak'] / MIB:6.1f} MiB "
                    f"({timed[run]['chars']:,} characters shown)"
                )
            print(lines[-3], lines[-2], lines[-1], sep="\n", flush=True)
    report = "\n".join(lines) + "\n"
    if args.out:
        args.out.write_text(report)
    print(report, end="")


if __name__ == "__main__":
    main()
