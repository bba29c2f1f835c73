"""The browser's index on a generated folder: indexing 10,000 files (time, index size), an update
when nothing changed and one after edits, and search latency (p50/p99), the index's own and as
the model reads it (the browser's `search`, its results page included).

    python bench/library_index.py [--files 10000] [--queries 500] [--seed 1]

The folder is generated in a temporary directory: Markdown notes, Python modules, HTML pages and
plain text in nested folders, their words drawn Zipf-like from a made-up vocabulary of 8,000
words (so common words are common and rare ones rare, as in real notes).
"""

from __future__ import annotations

import argparse
import itertools
import os
import platform
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

from gptoss_local.library import Library
from gptoss_local.tools.browser import BrowserTool

SYLLABLES = "ka lo mi nu pe ri sa te vo ba de fi go hu ja ke li mo na pi ru si to va we xi yo zu"
SYLLABLES_LIST = SYLLABLES.split()


def vocabulary(rng: random.Random, size: int) -> list[str]:
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(SYLLABLES_LIST) for _ in range(rng.randint(2, 4))))
    return sorted(words)


class Writer:
    """Sentences of Zipf-distributed words."""

    def __init__(self, rng: random.Random, words: list[str]) -> None:
        self.rng, self.words = rng, words
        self.cumulative = list(itertools.accumulate(1 / (rank + 1) for rank in range(len(words))))

    def sentence(self, length: int) -> str:
        picked = self.rng.choices(self.words, cum_weights=self.cumulative, k=length)
        return " ".join(picked).capitalize() + "."

    def paragraph(self) -> str:
        return " ".join(
            self.sentence(self.rng.randint(6, 16)) for _ in range(self.rng.randint(2, 6))
        )


def generate(folder: Path, files: int, writer: Writer) -> int:
    """Write `files` files; returns their total size in bytes."""
    total = 0
    for number in range(files):
        sub = folder / f"area{number % 20}" / f"topic{number % 13}" / f"batch{number % 5}"
        sub.mkdir(parents=True, exist_ok=True)
        kind = number % 4
        paragraphs = [writer.paragraph() for _ in range(writer.rng.randint(2, 8))]
        if kind == 0:
            path = sub / f"note{number}.md"
            text = f"# {writer.sentence(4)}\n\n" + "\n\n".join(paragraphs) + "\n"
        elif kind == 1:
            path = sub / f"module{number}.py"
            body = "\n".join(f"    # {p}\n    value_{i} = {i}" for i, p in enumerate(paragraphs))
            text = f'def function_{number}():\n    """{writer.sentence(8)}"""\n{body}\n'
        elif kind == 2:
            path = sub / f"page{number}.html"
            text = (f"<html><head><title>{writer.sentence(4)}</title></head><body>"
                    + "".join(f"<p>{p}</p>" for p in paragraphs) + "</body></html>")  # fmt: skip
        else:
            path = sub / f"log{number}.txt"
            text = "\n".join(paragraphs) + "\n"
        path.write_text(text)
        total += len(text.encode())
    return total


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    words = vocabulary(rng, 8000)
    writer = Writer(rng, words)
    print("The browser's index on a generated folder (bench/library_index.py)")
    print(f"command: python bench/library_index.py --files {args.files} --queries {args.queries}"
          f" --seed {args.seed}")  # fmt: skip
    python = platform.python_version()
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs; Python {python};"
          f" SQLite {sqlite3.sqlite_version}; {platform.platform()}")  # fmt: skip
    with tempfile.TemporaryDirectory() as temp:
        folder = Path(temp) / "corpus"
        started = time.perf_counter()
        size = generate(folder, args.files, writer)
        print(f"corpus: {args.files:,} files, {size / 2**20:.1f} MiB of text "
              f"(written in {time.perf_counter() - started:.1f} s)")  # fmt: skip
        index = Path(temp) / "library.sqlite3"
        with Library.open(index) as library:
            report = library.update([str(folder)])
            stored = library.size_bytes()
            print(f"index from nothing: {report.seconds:.2f} s ({args.files / report.seconds:,.0f} "
                  f"files/s), {report.added:,} added; index {stored / 2**20:.1f} MiB "
                  f"({stored / size:.2f}x the text)")  # fmt: skip
            again = library.update([str(folder)])
            print(f"update, nothing changed: {again.seconds:.2f} s ({again.unchanged:,} unchanged)")
            files = sorted(folder.rglob("*.md"))
            for path in files[:100]:
                path.write_text(path.read_text() + "\n" + writer.paragraph() + "\n")
            for path in files[100:200]:
                os.utime(path, (time.time() + 10, time.time() + 10))  # touched, same bytes
            for path in files[200:300]:
                path.unlink()
            edited = library.update([str(folder)])
            print(f"update after 100 edits, 100 touches, 100 deletions: {edited.seconds:.2f} s "
                  f"(changed {edited.changed}, removed {edited.removed}, unchanged "
                  f"{edited.unchanged:,})")  # fmt: skip
            queries = [" ".join(rng.sample(words[:3000], rng.randint(1, 4)))
                       for _ in range(args.queries)]  # fmt: skip
            plain, shown = [], []
            browser = BrowserTool(library, (str(folder),))
            for query in queries:
                start = time.perf_counter()
                library.search(query, 10)
                plain.append((time.perf_counter() - start) * 1000)
                start = time.perf_counter()
                browser.call("search", {"query": query})
                shown.append((time.perf_counter() - start) * 1000)
                browser.fresh()
            for label, values in (("index search, top 10", plain),
                                  ("browser.search (results page)", shown)):  # fmt: skip
                print(f"{label}: p50 {statistics.median(values):.2f} ms, p99 "
                      f"{percentile(values, 0.99):.2f} ms, max {max(values):.2f} ms "
                      f"({len(values)} queries of 1-4 words)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
