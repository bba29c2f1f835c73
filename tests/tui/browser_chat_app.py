"""`gptoss-local chat` as a test drives it in a real terminal: the app as `commands/chat.py`
builds it (the history in GPTOSS_LOCAL_HOME, the tools from the settings: the browser over
the `docs` folder given), on the tiny model grammar-steered through search, open and a cited
answer (the command line cannot steer a model).

    python tests/tui/browser_chat_app.py TINY.gguf NOTES_FOLDER
"""

from __future__ import annotations

import sys
from pathlib import Path

TESTS = Path(__file__).parents[1]
sys.path[:0] = [str(TESTS), str(TESTS / "tools")]

from engine_helpers import open_tiny  # noqa: E402
from tool_browser_steer import browsing_turns  # noqa: E402

from gptoss_local.backends.base import GenerationSettings  # noqa: E402
from gptoss_local.chat.tool_host import ChatTools  # noqa: E402
from gptoss_local.config import Settings  # noqa: E402
from gptoss_local.session.history import History  # noqa: E402
from gptoss_local.tui.app import make_app  # noqa: E402


def main(gguf: Path, notes: Path) -> int:
    settings = Settings(docs=(str(notes.resolve()),))
    engine = open_tiny(gguf, context=8192)
    try:
        with History() as history:
            tools = ChatTools.from_settings(settings)  # asks before each tool, as by default
            app = make_app(history, lambda _progress: browsing_turns(engine),  # type: ignore[arg-type,return-value]
                           GenerationSettings(max_tokens=256), tools=tools)  # fmt: skip
            try:
                app.run()
            finally:
                app.close_backend()
    finally:
        engine.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(Path(sys.argv[1]), Path(sys.argv[2])))
