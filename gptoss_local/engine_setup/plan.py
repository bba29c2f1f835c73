"""The plan of a CUDA rebuild of llama-cpp-python: which environment, toolkit, flags and steps.

`make_plan()` only looks (it changes nothing), so `engine install --dry-run` prints exactly what
`engine install` would run. The environment rebuilt is the one of a Python interpreter: by
default the one running gptoss-local (pipx's venv), or `--python`.
"""

from __future__ import annotations

import re

from gptoss_local.engine_setup import flags, toolkit
from gptoss_local.engine_setup.spec import InstallPlan, Machine, Step, Target
from gptoss_local.engine_setup.toolkit import SystemToolkit
from gptoss_local.hardware.engine import DISTRIBUTION, REQUIREMENT
from gptoss_local.hardware.machine import Hardware
from gptoss_local.i18n import _

ToolkitChoice = str  # "auto", "system" or "pip"
_ARCH = re.compile(r"^(\d{2,3})$|^(\d{1,2})\.(\d)$")


def parse_archs(text: str) -> tuple[str, ...]:
    """'89', '8.9' or '86,89' → ('89',) / ('86', '89'); ValueError for anything else."""
    archs = []
    for part in re.split(r"[,;\s]+", text.strip()):
        match = _ARCH.match(part)
        if not match:
            raise ValueError(
                _("not a compute capability: {part!r} (examples: 89, 8.9, 120)").format(part=part)
            )
        archs.append(match.group(1) or match.group(2) + match.group(3))
    return tuple(dict.fromkeys(archs))


def gpu_archs(hardware: Hardware) -> tuple[str, ...]:
    """The compute capabilities of the GPUs NVML found, as CMake wants them ('89')."""
    found = [g.compute_capability for g in hardware.gpus if g.compute_capability]
    return tuple(dict.fromkeys(cc.replace(".", "") for cc in found))


def requirement_for(installed: str | None) -> str:
    """Rebuild the installed version when gptoss-local accepts it, else the accepted range."""
    if installed and _accepted(installed):
        return f"{DISTRIBUTION}=={installed}"
    return REQUIREMENT


def _accepted(version: str) -> bool:
    numbers = tuple(int(n) for n in re.findall(r"\d+", version)[:3])
    return (0, 3, 36) <= numbers < (0, 4)


def make_plan(
    target: Target,
    hardware: Hardware,
    arch: str | None = None,
    choice: ToolkitChoice = "auto",
    machine: Machine | None = None,
) -> InstallPlan:
    """Decide how to rebuild llama-cpp-python with CUDA; looks only, changes nothing.

    Args:
        target: The environment to rebuild in (`inspect_target`).
        hardware: What `hardware.probe()` found (GPUs, their compute capability, the driver).
        arch: `--arch`; None takes the GPUs' compute capabilities.
        choice: "system" (installed CUDA toolkit), "pip" (NVIDIA's packages) or "auto".
        machine: The PC's OS, environment and tools (default: this one).
    """
    machine = machine or Machine()
    problems: list[str] = []
    notes: list[str] = []
    archs, arch_source = _archs(hardware, arch, problems)
    if not machine.supported:
        problems.append(_("CUDA builds are for Linux and Windows; this OS has no CUDA."))
    if not target.has_pip:
        problems.append(
            _(
                "pip is not available in {python}'s environment: add it with "
                "`{python} -m ensurepip`, or reinstall gptoss-local with pipx."
            ).format(python=target.python)
        )
    compiler = toolkit.compiler_problem(machine.windows, machine.find)
    if compiler:
        problems.append(compiler)
    system = toolkit.find_system_toolkit(
        machine.env, machine.find, machine.run, machine.windows, machine.usual_cuda
    )
    kind = _choose_toolkit(choice, system, archs, hardware, problems, notes)
    plan = InstallPlan(
        target=target,
        archs=archs,
        arch_source=arch_source,
        toolkit=kind,
        toolkit_detail="",
        cuda_version=None,
        requirement=requirement_for(target.installed),
        cmake_args=(),
        env={},
        steps=[],
        problems=problems,
        notes=notes,
    )
    if kind == "pip":
        flags.pip_toolkit(plan, machine)
    elif system is not None:
        flags.system_toolkit(plan, system, machine)
    plan.steps += _build_and_check(plan)
    return plan


def _archs(
    hardware: Hardware, arch: str | None, problems: list[str]
) -> tuple[tuple[str, ...], str]:
    if arch:
        try:
            return parse_archs(arch), "--arch"
        except ValueError as exc:
            problems.append(f"--arch: {exc}")
            return (), "--arch"
    found = gpu_archs(hardware)
    if found:
        names = ", ".join(
            _("{name} (compute {capability})").format(name=g.name, capability=g.compute_capability)
            for g in hardware.gpus
        )
        return found, names
    why = hardware.nvml_error or _("NVML reported no devices")
    problems.append(
        _(
            "No NVIDIA GPU found ({why}), so its architecture is unknown: give it with --arch "
            "(RTX 20: 75, RTX 30: 86, RTX 40: 89, RTX 50 / RTX PRO Blackwell: 120)."
        ).format(why=why)
    )
    return (), _("no GPU")


def _choose_toolkit(
    choice: ToolkitChoice,
    system: SystemToolkit | None,
    archs: tuple[str, ...],
    hardware: Hardware,
    problems: list[str],
    notes: list[str],
) -> str:
    can_build = system is not None and all(
        toolkit.arch_supported(int(a), system.version) for a in archs
    )
    if choice == "system" or (choice == "auto" and can_build):
        if system is None:
            problems.append(
                _(
                    "No CUDA toolkit found (nvcc under CUDA_PATH, on PATH or in "
                    "/usr/local/cuda): leave out --toolkit system to use pip's."
                )
            )
        elif not can_build:
            problems.append(
                _(
                    "CUDA {version} at {root} cannot build for "
                    "compute {archs}: update it, or use --toolkit pip."
                ).format(version=system.version, root=system.root, archs=", ".join(archs))
            )
        return "system"
    if choice == "auto" and system is not None:
        notes.append(
            _(
                "CUDA {version} at {root} cannot build for compute "
                "{archs}: using NVIDIA's pip packages instead."
            ).format(version=system.version, root=system.root, archs=", ".join(archs))
        )
    _check_pip_toolkit(archs, hardware, problems)
    return "pip"


def _check_pip_toolkit(archs: tuple[str, ...], hardware: Hardware, problems: list[str]) -> None:
    old = [a for a in archs if int(a) < toolkit.PIP_MIN_ARCH]
    if old:
        problems.append(
            _(
                "Compute {archs} is older than CUDA 13 supports (7.5, RTX 20): pip has "
                "no CUDA 12 compiler, so install the CUDA 12 toolkit and use --toolkit system."
            ).format(archs=", ".join(old))
        )
    driver = hardware.cuda_driver_version
    if driver and toolkit.major(driver) < 13:
        problems.append(
            _(
                "The NVIDIA driver {driver_version} supports CUDA {driver}; pip's CUDA "
                "compiler is CUDA {pip_cuda}, which needs a driver of the 580 "
                "series or newer. Update the driver, or install the CUDA 12 toolkit and use "
                "--toolkit system (pip's CUDA 12 packages have no compiler)."
            ).format(
                driver_version=hardware.driver_version,
                driver=driver,
                pip_cuda=toolkit.PIP_CUDA_VERSION,
            )
        )


def _build_and_check(plan: InstallPlan) -> list[Step]:
    # --force-reinstall alone would rebuild numpy & co. too; an environment without
    # llama-cpp-python yet still needs them, so only an existing install keeps --no-deps.
    keep_deps = ("--no-deps",) if plan.target.installed else ()
    pip = (plan.target.python, "-m", "pip", "install", "--verbose", "--force-reinstall")
    build = (*pip, *keep_deps, "--no-cache-dir", "--no-binary", DISTRIBUTION, plan.requirement)
    title = _("Build {distribution} (CUDA, compute {archs})").format(
        distribution=DISTRIBUTION, archs=", ".join(plan.archs) or "?"
    )
    return [
        Step("build", title, build, plan.env),
        Step("check", _("Check that it loads and offloads to the GPU"), (plan.target.python,)),
    ]
