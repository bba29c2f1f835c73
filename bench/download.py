"""Download throughput of `pull` against curl, on one loopback server, and the cost of hashing.

A 1 GB GGUF-shaped file of random bytes is served from 127.0.0.1 by one server process
(sendfile, Range support) to both clients. Each round runs, in rotating order: curl writing it
to disk; `pull_model` (stream, sha256 while writing, fsync, rename, GGUF check); curl, then an
fsync. Medians over the rounds, after untimed warm-up rounds. Target: pull's throughput to the
last byte >= 0.9 of curl's. Hashing's cost: sha256 alone, and pull's client CPU beyond curl's.

Run `python bench/download.py [--size-mb 1024] [--rounds 5] [--rate-mbs N] [--out FILE [--append]]`.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import resource
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gptoss_local.store.progress import Progress

CURL = shutil.which("curl") or "/usr/bin/curl"
KINDS = ("curl", "pull", "curl+fsync")
NAME = "bench.gguf"


def write_gguf(path: Path, size: int) -> str:
    """A valid one-tensor gpt-oss GGUF of about `size` bytes; returns its sha256."""
    key, arch = b"general.architecture", b"gpt-oss"
    kv = struct.pack("<Q", len(key)) + key + struct.pack("<iQ", 8, len(arch)) + arch
    payload = (size - 256) // 4 * 4
    info = struct.pack("<Q", 8) + b"t.weight" + struct.pack("<IqiQ", 1, payload // 4, 0, 0)
    head = b"GGUF" + struct.pack("<IQQ", 3, 1, 1) + kv + info
    head += bytes(-len(head) % 32)
    digest = hashlib.sha256(head)
    with path.open("wb") as f:
        f.write(head)
        for done in range(0, payload, 1 << 24):
            block = os.urandom(min(1 << 24, payload - done))
            digest.update(block)
            f.write(block)
    return digest.hexdigest()


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        path: Path = self.server.file  # type: ignore[attr-defined]
        size = path.stat().st_size
        header = self.headers.get("Range", "")
        start = int(header[6:].split("-")[0]) if header.startswith("bytes=") else 0
        self.send_response(206 if start else 200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(size - start))
        if start:
            self.send_header("Content-Range", f"bytes {start}-{size - 1}/{size}")
        self.end_headers()
        rate: float = self.server.rate  # type: ignore[attr-defined]
        began, sent = time.perf_counter(), 0
        with path.open("rb") as f:
            while sent < size - start:  # 4 MiB at a time, paced when a line speed is set
                sent += self.connection.sendfile(f, start + sent, min(4 << 20, size - start - sent))
                if rate:
                    time.sleep(max(0.0, began + sent / rate - time.perf_counter()))


def serve_forever(file: Path, rate: float) -> None:
    """Serve `file` on a free loopback port (printed on stdout) until killed; `rate` in B/s."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.file, server.rate = file, rate  # type: ignore[attr-defined]
    print(server.server_address[1], flush=True)
    server.serve_forever()


def serve(file: Path, rate: float) -> tuple[subprocess.Popen, int]:
    """The server in its own process, so it never competes with the client for the GIL."""
    command = [sys.executable, __file__, "--serve", str(file), "--rate-mbs", str(rate / 1e6)]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    return proc, int(proc.stdout.readline())


def manifest(path: Path, port: int, size: int, sha: str) -> Path:
    """A manifest with one model (the bench file) whose only source is the loopback server."""
    from gptoss_local import catalog

    shape = vars(catalog.load().model("20b").shape)
    lines = ["schema = 1", "[sources.loopback]", f'url = "http://127.0.0.1:{port}/{{file}}"',
             "[models.bench]", 'aliases = ["bench"]', 'repo = "bench/bench"', 'revision = "x"',
             'license = "x"', 'ollama_tag = "x"', "[[models.bench.files]]", f'name = "{NAME}"',
             f"bytes = {size}", f'sha256 = "{sha}"', "[models.bench.shape]",
             *(f"{k} = {v}" for k, v in shape.items())]  # fmt: skip
    path.write_text("\n".join(lines) + "\n")
    return path


@dataclass(frozen=True)
class Timing:
    """One run: wall seconds to the last byte written and to the end; the client's CPU seconds
    in user space (its own work: hashing, Python) and in the kernel (copies, page cache)."""

    stream: float
    total: float
    user: float
    sys: float


def _cpu(who: int) -> tuple[float, float]:
    usage = resource.getrusage(who)
    return usage.ru_utime, usage.ru_stime


def _timing(stream: float, total: float, before: tuple[float, float], who: int) -> Timing:
    user, sys_ = _cpu(who)
    return Timing(stream, total, user - before[0], sys_ - before[1])


def time_curl(url: str, out: Path, durable: bool) -> Timing:
    """curl writing the file (and, with `durable`, an fsync of it afterwards)."""
    cpu, start = _cpu(resource.RUSAGE_CHILDREN), time.perf_counter()
    subprocess.run([CURL, "-sS", "-o", str(out), url], check=True)
    stream = time.perf_counter() - start
    timing = _timing(stream, stream, cpu, resource.RUSAGE_CHILDREN)
    if durable:  # the fsync runs here: count its CPU too, as pull's own fsync is counted
        own = _cpu(resource.RUSAGE_SELF)
        fd = os.open(out, os.O_RDONLY)
        os.fsync(fd)
        os.close(fd)
        extra = _timing(0, 0, own, resource.RUSAGE_SELF)
        timing = Timing(stream, time.perf_counter() - start, timing.user + extra.user,
                        timing.sys + extra.sys)  # fmt: skip
    out.unlink()
    return timing


def time_pull(home: Path) -> Timing:
    """`pull_model` end to end: stream, sha256 while writing, fsync, rename, GGUF check."""
    from gptoss_local import catalog
    from gptoss_local.store.pull import PullOptions, pull_model

    cat = catalog.load()
    streamed = [0.0]
    cpu, start = _cpu(resource.RUSAGE_SELF), time.perf_counter()

    def progress(report: Progress) -> None:
        if report.phase == "download" and report.done == report.total and not streamed[0]:
            streamed[0] = time.perf_counter() - start

    pull_model(cat.model("bench"), cat, PullOptions(reuse=False, disk_margin=0), progress)
    total = time.perf_counter() - start
    timing = _timing(streamed[0] or total, total, cpu, resource.RUSAGE_SELF)
    shutil.rmtree(home / "models")
    return timing


def time_sha256(path: Path) -> float:
    """Seconds to hash `path` (warm page cache) with the store's own hasher."""
    from gptoss_local.store.hashing import sha256_file

    sha256_file(path)  # warm the page cache
    start = time.perf_counter()
    sha256_file(path)
    return time.perf_counter() - start


def _settle() -> None:
    """Start each run with no dirty pages left by the one before (writeback skews the next)."""
    if hasattr(os, "sync"):
        os.sync()
    time.sleep(0.2)


def machine() -> str:
    """CPU, cores, OS, Python and curl versions."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    curl = subprocess.run([CURL, "--version"], capture_output=True, text=True).stdout.split()[:2]
    return (f"{cpu}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}, "
            f"Python {platform.python_version()}, {' '.join(curl)}")  # fmt: skip


def main() -> int:
    """Run the rounds and print (and optionally write) the report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=1, help="untimed rounds first")
    parser.add_argument("--dir", type=Path, help="work folder (default: a temporary one)")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--append", action="store_true", help="add to --out, do not replace it")
    parser.add_argument(
        "--rate-mbs", type=float, default=0, help="line speed of the server in MB/s (0: no limit)"
    )
    parser.add_argument("--serve", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve_forever(args.serve, args.rate_mbs * 1e6)
        return 0
    work = Path(tempfile.mkdtemp(prefix="gptoss-bench-", dir=args.dir))
    try:
        return _run(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _run(args: argparse.Namespace, work: Path) -> int:
    size = args.size_mb << 20
    served = work / "served" / NAME
    served.parent.mkdir()
    sha = write_gguf(served, size)
    size = served.stat().st_size
    server, port = serve(served, args.rate_mbs * 1e6)
    os.environ["GPTOSS_LOCAL_HOME"] = str(work / "home")
    os.environ["GPTOSS_LOCAL_MANIFEST"] = str(manifest(work / "m.toml", port, size, sha))
    url = f"http://127.0.0.1:{port}/{NAME}"
    runs: dict[str, list[Timing]] = {k: [] for k in KINDS}
    for round_no in range(-args.warmup, args.rounds):
        order = KINDS[round_no % len(KINDS) :] + KINDS[: round_no % len(KINDS)]  # no order bias
        for kind in order:
            _settle()
            if kind == "pull":
                timing = time_pull(work / "home")
            else:
                timing = time_curl(url, work / "curl.out", durable=kind == "curl+fsync")
            if round_no >= 0:  # warm-up rounds fault the page cache's memory in first
                runs[kind].append(timing)
    server.kill()
    server.wait()
    report = _report(args, size, runs, time_sha256(served))
    print(report)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        with args.out.open("a" if args.append else "w", encoding="utf-8") as f:
            f.write(("\n" if args.append else "") + report + "\n")
    return 0


def _report(
    args: argparse.Namespace, size: int, runs: dict[str, list[Timing]], sha_s: float
) -> str:
    def med(kind: str, what: str) -> float:
        return statistics.median(getattr(t, what) for t in runs[kind])

    def best(kind: str) -> float:  # the least disturbed run
        return min(t.stream for t in runs[kind])

    gb = size / 1e9
    lines = [
        "# bench/download.py: loopback pull vs curl, one server process, same disk",
        f"command: python bench/download.py {' '.join(sys.argv[1:])}".rstrip(),
        f"machine: {machine()}",
        f"file: {size:,} bytes; server line speed: "
        f"{f'{args.rate_mbs:g} MB/s' if args.rate_mbs else 'unlimited'}; {args.warmup} untimed "
        f"round(s), then {args.rounds} rounds of {len(KINDS)} runs; medians",
        "",
        "run          to last byte   MB/s  end to end  CPU s/GB user, kernel  (to last byte, each)",
    ]  # CPU: the client's, end to end (fsync included); the server's is not counted
    for kind in KINDS:
        each = ", ".join(f"{t.stream:.2f}" for t in runs[kind])
        lines.append(
            f"{kind:<12} {med(kind, 'stream'):10.2f} s {size / med(kind, 'stream') / 1e6:6.0f}"
            f" {med(kind, 'total'):9.2f} s {med(kind, 'user') / gb:10.2f}, "
            f"{med(kind, 'sys') / gb:.2f}   ({each})"
        )
    lines += [
        "",
        f"ratio pull/curl to the last byte (sha256 on): median "
        f"{med('curl', 'stream') / med('pull', 'stream'):.2f}, best of each "
        f"{best('curl') / best('pull'):.2f}  (target >= 0.9)",
        f"ratio pull/curl end to end (pull: fsync, rename, GGUF check; curl: then fsync): "
        f"{med('curl+fsync', 'total') / med('pull', 'total'):.2f}",
        f"sha256 alone, store hasher, warm page cache: {size / sha_s / 1e6:.0f} MB/s "
        f"({sha_s / gb:.2f} CPU s/GB)",
        f"user CPU per GB beyond curl's (sha256, Python): "
        f"{(med('pull', 'user') - med('curl', 'user')) / gb:+.2f} s",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
