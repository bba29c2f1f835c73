"""Windows import libraries for cuBLAS: dumpbin's export list → .def → lib (stand-in tools)."""

from __future__ import annotations

from pathlib import Path

from gptoss_local.engine_setup import implib

DUMPBIN = """
Dump of file cublas64_13.dll

File Type: DLL

  Section contains the following exports for cublas64_13.dll

    00000000 characteristics
           0 ordinal base
         612 number of functions
         612 number of names

    ordinal hint RVA      name

          1    0 000A1B20 cublasAlloc
          2    1 000A1B40 cublasAsumEx
          3    2          cublasForwarded (forwarded to cublasLt64_13.cublasLtCreate)
         12    B 000C0000 cublasCreate_v2

  Summary

        1000 .data
"""


def test_exports_are_read_in_order() -> None:
    names = implib.exports(DUMPBIN)
    assert names == ["cublasAlloc", "cublasAsumEx", "cublasForwarded", "cublasCreate_v2"]


def test_def_file_names_the_dll_and_its_exports() -> None:
    text = implib.def_text("cublas64_13.dll", ["cublasAlloc", "cublasCreate_v2"])
    assert text == "LIBRARY cublas64_13.dll\nEXPORTS\n    cublasAlloc\n    cublasCreate_v2\n"


def test_main_runs_dumpbin_then_lib_for_each_dll(tmp_path: Path) -> None:
    calls: list[list[str]] = []

    def run(argv: list[str]) -> str:
        calls.append(argv)
        return DUMPBIN if argv[0] == "dumpbin" else ""

    out = tmp_path / "lib"
    code = implib.main(["--out", str(out), "cublas=C:/x/cublas64_13.dll"], run)
    assert code == 0
    assert calls[0] == ["dumpbin", "/nologo", "/exports", "C:/x/cublas64_13.dll"]
    assert calls[1] == [
        "lib",
        "/nologo",
        f"/def:{out / 'cublas.def'}",
        f"/out:{out / 'cublas.lib'}",
        "/machine:x64",
    ]
    assert (out / "cublas.def").read_text().startswith("LIBRARY cublas64_13.dll\n")


def test_a_dll_without_exports_fails_with_the_reason(tmp_path: Path, capsys) -> None:
    code = implib.main(["--out", str(tmp_path), "cublasLt=C:/x/none.dll"], lambda argv: "")
    assert code == 1 and "no exports" in capsys.readouterr().err
