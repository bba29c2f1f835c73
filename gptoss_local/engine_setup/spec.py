"""The data of an engine install: the target environment, the PC as the plan sees it, the plan."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from gptoss_local.engine_setup import toolkit
from gptoss_local.engine_setup.toolkit import Run, Which

_INSPECT = r"""
import json, sys, sysconfig, importlib.util
from importlib.metadata import version, PackageNotFoundError
try:
    installed = version("llama-cpp-python")
except PackageNotFoundError:
    installed = None
print(json.dumps({"prefix": sys.prefix, "platlib": sysconfig.get_paths()["platlib"],
    "python": "%d.%d" % sys.version_info[:2], "llama_cpp_python": installed,
    "pip": importlib.util.find_spec("pip") is not None}))
"""


@dataclass(frozen=True)
class Target:
    """The Python environment to rebuild llama-cpp-python in."""

    python: str
    prefix: str
    platlib: str
    python_version: str
    installed: str | None  # llama-cpp-python's version there
    has_pip: bool


@dataclass(frozen=True)
class Step:
    """One command of the plan. `env` holds only what it sets on top of the environment."""

    kind: str  # "toolkit", "build" or "check"
    title: str
    argv: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)


@dataclass
class InstallPlan:
    """Everything `engine install --cuda` will do, and what stops it."""

    target: Target
    archs: tuple[str, ...]
    arch_source: str
    toolkit: str  # "system" or "pip"
    toolkit_detail: str
    cuda_version: str | None
    requirement: str
    cmake_args: tuple[str, ...]
    env: dict[str, str]
    steps: list[Step]
    problems: list[str]
    notes: list[str]
    cuda_lib_dirs: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON output."""
        return asdict(self)


@dataclass(frozen=True)
class Machine:
    """How the plan sees this PC: injectable for tests of other OSes."""

    windows: bool = sys.platform == "win32"
    supported: bool = sys.platform == "win32" or sys.platform.startswith("linux")
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    which: Which | None = None
    run: Run = toolkit.run_text
    driver_library: Callable[[], Path | None] = toolkit.find_driver_library
    cpu_count: int = os.cpu_count() or 1
    usual_cuda: tuple[str, ...] = ("/usr/local/cuda",)

    def find(self, name: str) -> str | None:
        """`shutil.which`, or the injected one."""
        import shutil

        return self.which(name) if self.which else shutil.which(name)


def inspect_target(python: str, run: Run = toolkit.run_text) -> Target:
    """Ask the interpreter `python` where its environment is and what it has installed.

    Raises:
        OSError, subprocess.SubprocessError, ValueError: when it does not run or answer.
    """
    data = json.loads(run([python, "-c", _INSPECT]).strip().splitlines()[-1])
    return Target(
        python,
        data["prefix"],
        data["platlib"],
        data["python"],
        data["llama_cpp_python"],
        bool(data["pip"]),
    )
