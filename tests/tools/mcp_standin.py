"""A stand-in MCP server for the hostile-server tests: plain JSON-RPC over stdio (no SDK, so it
starts in milliseconds), with one tool, ``echo``, and a way to misbehave.

    python mcp_standin.py serve
    python mcp_standin.py junk N       N lines of non-JSON on stdout first, 3 more per call
    python mcp_standin.py flood MB     MB megabytes on stderr first, then "flood done"
    python mcp_standin.py hang PIDS    never answers; ignores SIGTERM, starts a child that does
                                       too, and writes both pids to the file PIDS
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

TOOL = {
    "name": "echo",
    "description": "Echo the text.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}},
                    "required": ["text"]},
}  # fmt: skip


def serve(junk_per_call: int = 0) -> None:
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:
            continue  # a notification (initialized)
        method, params = message["method"], message.get("params") or {}
        reply: dict[str, object] = {"jsonrpc": "2.0", "id": message["id"]}
        if method == "initialize":
            reply["result"] = {"protocolVersion": params["protocolVersion"],
                               "capabilities": {"tools": {}},
                               "serverInfo": {"name": "standin", "version": "1"}}  # fmt: skip
        elif method == "tools/list":
            reply["result"] = {"tools": [TOOL]}
        elif method == "tools/call":
            for number in range(junk_per_call):
                print(f"debug: handling call, step {number}", flush=True)
            text = params["arguments"]["text"]
            reply["result"] = {"content": [{"type": "text", "text": f"echo: {text}"}]}
        else:
            reply["error"] = {"code": -32601, "message": f"no method {method}"}
        print(json.dumps(reply), flush=True)


def hang(pid_file: str) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # inherited by the child through exec
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
    with open(pid_file, "w") as out:
        out.write(f"{os.getpid()} {child.pid}\n")
    time.sleep(300)


def main() -> None:
    mode, *rest = sys.argv[1:]
    if mode == "junk":
        for number in range(int(rest[0])):
            print(f"starting up... {number} <not json>")
        sys.stdout.flush()
        serve(junk_per_call=3)
    elif mode == "flood":
        line = "x" * 1023 + "\n"
        for _ in range(int(rest[0]) * 1024):
            sys.stderr.write(line)
        sys.stderr.write("flood done\n")
        sys.stderr.flush()
        serve()
    elif mode == "hang":
        hang(rest[0])
    else:
        serve()


if __name__ == "__main__":
    main()
