"""Windows: import libraries for cuBLAS, which NVIDIA's pip wheels ship as DLLs only.

MSVC links against a DLL through its import library (`cublas.lib`); the CUDA 13 wheels carry
`cublas64_13.dll` and `cublasLt64_13.dll` but no `.lib`. MSVC's own tools make one: `dumpbin
/exports` lists the DLL's functions, a module-definition file names them, and `lib /def:` turns
that into the import library. The build needs MSVC anyway, so nothing else is asked of the user.

Run as `python -m gptoss_local.engine_setup.implib --out DIR NAME=DLL ...` (a step of the plan).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

Run = Callable[[list[str]], str]
# "     12    B 000A1B20 cublasCreate_v2" (ordinal, hint, RVA, name); forwarded names lack the RVA.
_EXPORT = re.compile(r"^\s+\d+\s+[0-9A-Fa-f]+\s+(?:[0-9A-Fa-f]{8}\s+)?([A-Za-z_?@$][^\s=]*)")


def exports(dumpbin_output: str) -> list[str]:
    """The exported names in `dumpbin /exports` output, in order."""
    names: list[str] = []
    started = False
    for line in dumpbin_output.splitlines():
        if re.match(r"^\s+ordinal\s+hint", line):
            started = True
            continue
        if started and line.strip() == "Summary":
            break
        match = _EXPORT.match(line) if started else None
        if match:
            names.append(match.group(1))
    return names


def def_text(dll_name: str, names: Sequence[str]) -> str:
    """A module-definition file exporting `names` from `dll_name`."""
    return "\n".join([f"LIBRARY {dll_name}", "EXPORTS", *[f"    {n}" for n in names]]) + "\n"


def make_import_library(name: str, dll: Path, out_dir: Path, run: Run) -> Path:
    """Write `out_dir/<name>.lib` for `dll` with MSVC's dumpbin and lib; returns its path."""
    names = exports(run(["dumpbin", "/nologo", "/exports", str(dll)]))
    if not names:
        raise OSError(f"dumpbin found no exports in {dll}")
    out_dir.mkdir(parents=True, exist_ok=True)
    definition = out_dir / f"{name}.def"
    definition.write_text(def_text(dll.name, names), encoding="ascii")
    library = out_dir / f"{name}.lib"
    run(["lib", "/nologo", f"/def:{definition}", f"/out:{library}", "/machine:x64"])
    return library


def _run(argv: list[str]) -> str:
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout


def main(argv: Sequence[str] | None = None, run: Run = _run) -> int:
    """Command line of the plan's step; exit 1 with the reason when a tool fails."""
    parser = argparse.ArgumentParser(prog="implib")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("pairs", nargs="+", metavar="NAME=DLL")
    args = parser.parse_args(argv)
    for pair in args.pairs:
        name, _, dll = pair.partition("=")
        try:
            print(make_import_library(name, Path(dll), args.out, run))
        except (OSError, subprocess.CalledProcessError) as exc:
            print(f"could not make {name}.lib from {dll}: {exc}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
