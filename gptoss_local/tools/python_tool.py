"""gpt-oss's built-in python tool: its description for the model, and calls run in a session.

The description follows the one gpt-oss was trained with (openai-harmony's python namespace),
with what holds here: the time limit, where the scratch folder is, and whether the network is
really off. The session (`python_session.py`) starts with the first call.
"""

from __future__ import annotations

import threading
from typing import Any

from gptoss_local.conversation import BuiltinTool
from gptoss_local.tools.python_session import PROCESS_LIMIT, PythonSession
from gptoss_local.tools.result import ToolOutput

NAME = "python"
# RLIMIT_NPROC does not bind root, and only root can usually make a pids cgroup: where neither
# works (root in a container with a read-only /sys/fs/cgroup) nothing caps the code's processes.
UNCAPPED = "not enforced: root without a writable pids cgroup"


def describe(*, timeout: float, folder: str, network_blocked: bool) -> str:
    """The python tool's description, as the model reads it in the system message."""
    network = (
        "Internet access for this session is disabled. Do not make external web requests or "
        "API calls as they will fail."
        if network_blocked
        else "Do not make external web requests or API calls."
    )
    return (
        "Use this tool to execute Python code in your chain of thought. The code will not be "
        "shown to the user. This tool should be used for internal reasoning, but not for code "
        "that is intended to be visible to the user (e.g. when creating plots, tables, or "
        "files).\n\n"
        "When you send a message containing Python code to python, it will be executed in a "
        "stateful Jupyter notebook environment. python will respond with the output of the "
        f"execution or time out after {timeout:.1f} seconds. The drive at '{folder}' can be "
        f"used to save and persist user files. {network}"
    )


class PythonTool:
    """The python tool of one chat (or one run) around its lazily started `PythonSession`
    (scratch folder, time and memory limits, sandbox)."""

    def __init__(self, session: PythonSession) -> None:
        self.session = session
        self.sandbox = session.sandbox

    @property
    def builtin(self) -> BuiltinTool:
        """The tool as the renderer offers it."""
        folder = self.sandbox.folder(self.session.scratch)
        text = describe(
            timeout=self.session.timeout,
            folder=folder,
            network_blocked=self.sandbox.network_blocked,
        )
        return BuiltinTool(NAME, text)

    @property
    def note(self) -> str:
        """What is enforced, for the user (listings and approval prompts)."""
        memory = f"memory limit {self.session.memory_mb:,} MiB" if self.session.memory_mb else ""
        if self.session.memory_limited is False and memory:
            memory += " (not enforced on this system)"
        processes = f"at most {PROCESS_LIMIT} processes"
        if not self.session.processes_capped:
            processes += f" ({UNCAPPED})"
        parts = [self.sandbox.summary, f"time limit {self.session.timeout:g} s", memory, processes]
        return "; ".join(p for p in parts if p)

    def call(self, arguments: dict[str, Any], cancel: threading.Event | None = None) -> ToolOutput:
        """Run ``arguments["code"]``; the output (cut to size) or the error is the result."""
        code = arguments.get("code")
        if not isinstance(code, str):
            return ToolOutput('python takes the code to run, e.g. {"code": "print(1)"}', True)
        out = self.session.run(code, cancel)
        notes = []
        if not self.sandbox.network_blocked:
            notes.append(self.sandbox.summary)
        if not self.session.processes_capped:
            notes.append(f"processes: {UNCAPPED}")
        if out.restarted:
            notes.append("the python session was restarted; its state is gone")
        return ToolOutput.of(out.text, error=out.error, note="; ".join(notes))

    def close(self) -> None:
        """Stop the worker process."""
        self.session.close()
