"""Record a multi-turn Codex CLI session against `serve`, for bench/codex_replay.py.

The real Codex CLI (tests/clients, installed by scripts/test) works in a scratch folder through
`gptoss-local codex` against the tiny model, steered through a script of an ordinary agent task
in three user turns: it lists and reads files, patches them with apply_patch, runs them, and
answers. Every request body Codex sends is saved as it came (NN.json), so the replay sends what
Codex really sends: its instructions, tools, reasoning items, calls and outputs.

Run: python bench/record_codex_session.py [--out bench/codex_session]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

GREET = """*** Begin Patch
*** Update File: hello.py
@@
-print("hi")
+def greet():
+    print("hello")
+
+
+greet()
*** End Patch
"""
NAMED = """*** Begin Patch
*** Update File: hello.py
@@
-def greet():
-    print("hello")
+import sys
+
+
+def greet(name="world"):
+    print(f"hello {name}")
@@
-greet()
+if __name__ == "__main__":
+    greet(*sys.argv[1:2])
*** End Patch
"""
TEST = """*** Begin Patch
*** Add File: test_hello.py
+import contextlib
+import io
+
+from hello import greet
+
+
+def test_greet():
+    out = io.StringIO()
+    with contextlib.redirect_stdout(out):
+        greet("Ada")
+    assert out.getvalue() == "hello Ada\\n"
+
+
+test_greet()
+print("ok")
*** End Patch
"""
TURNS = (
    "Add a greet function to hello.py and check that it runs",
    "Make greet take a name from the command line",
    "Add a small test for greet",
)


def script() -> list[Any]:
    from codex_helpers import Step, answer, shell

    return [
        shell("Look at the files first", "ls -la"),
        shell("Read hello.py", "cat hello.py"),
        Step("Wrap the print in a function", "apply_patch", GREET),
        shell("Run it to check", "python3 hello.py"),
        answer("It works", "I added greet() to hello.py; running it prints hello."),
        shell("Read the current file", "cat hello.py"),
        Step("Take the name from argv", "apply_patch", NAMED),
        shell("Try it with a name", "python3 hello.py Ada"),
        answer(
            "Works with a name", "greet now takes a name: `python3 hello.py Ada` prints hello Ada."
        ),
        Step("Add a test file", "apply_patch", TEST),
        shell("Run the test", "python3 test_hello.py"),
        answer("Test passes", "Added test_hello.py; it passes."),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "codex_session")
    args = parser.parse_args()

    from codex_helpers import CONTEXT, exec_args, run_codex, scripted
    from serve_helpers import running_server
    from synthetic import TINY, write_gguf

    from gptoss_local.serve.service import Service

    bodies: list[dict[str, Any]] = []
    post = Service.post

    def recorded(self: Service, path: str, data: Any, cancel: Any) -> Any:
        bodies.append(data)
        return post(self, path, data, cancel)

    Service.post = recorded  # type: ignore[method-assign]
    with tempfile.TemporaryDirectory() as scratch:
        home = Path(scratch)
        shape = dataclasses.replace(TINY, name="tiny-roomy", context_length=CONTEXT)
        model = write_gguf(home / "roomy.gguf", shape, seed=1)
        work = home / "work"
        work.mkdir()
        (work / "hello.py").write_text('print("hi")\n')
        with running_server(model, context=CONTEXT, steer=scripted(*script())) as server:
            for number, prompt in enumerate(TURNS):
                resume = ("resume", "--last") if number else ()
                done = run_codex(work, home, "--port", str(server.port),
                                 *exec_args(prompt, *resume))  # fmt: skip
                if done.returncode != 0:
                    raise SystemExit(f"codex failed on turn {number + 1}:\n{done.stderr}")
        files = {p.name: p.read_text() for p in sorted(work.iterdir()) if p.is_file()}
    args.out.mkdir(parents=True, exist_ok=True)
    for old in args.out.glob("*.json"):
        old.unlink()
    for number, body in enumerate(bodies, 1):
        (args.out / f"{number:02d}.json").write_text(json.dumps(body, indent=1) + "\n")
    print(f"{len(bodies)} requests in {args.out}; the folder ended with: {sorted(files)}")
    print(files.get("hello.py", ""))


if __name__ == "__main__":
    main()
