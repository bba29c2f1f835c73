"""The suite's tiers, given to each test as it is collected (conftest's
`pytest_collection_modifyitems`): `terminal` for a test that drives tmux, `clients` for one that
runs a real API client (the Codex CLI, node's openai package, the Python SDKs), `slow` for the
slowest of the rest. A test gets its tier from what its code, its fixtures and the test helpers
they call name, so a new test file needs no marker of its own; `slow` alone is also a list.

The fast lane is `-m "not slow and not terminal and not clients"` (README, "Tests").
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import CodeType, FunctionType, ModuleType
from typing import Any

import pytest

TESTS = Path(__file__).resolve().parent
# Where a name comes from (its top-level module) that makes a test `terminal` or `clients`.
TERMINAL_MODULES = frozenset({"terminal_helpers"})
CLIENT_MODULES = frozenset({"openai", "agents", "langchain", "langchain_core", "langchain_openai",
                            "pydantic_ai", "litellm", "llm", "codex_helpers",
                            "anthropic"})  # fmt: skip
TERMINAL_WORDS = frozenset({"tmux"})  # a string the code holds: tmux run directly
CLIENT_FOLDERS = ("compat",)  # every test there runs a client (node's included)
# A fixture that makes a test slow: the 63 MB model takes seconds a reply on two cores.
SLOW_FIXTURES = frozenset({"small_gguf"})
# The slowest of the rest: files, or tests (all their parameters), under tests/. Chosen from one
# `pytest --durations=0` run, then the slowest files of the fast lane (the chat app's Pilot tests
# among them) until it took under 3 minutes on two quiet cores.
SLOW = (
    "backends/test_backend_conformance.py::test_a_reply_streams_reasoning_then_the_answer_then_its_stats",
    "backends/test_eagle_drafting.py",
    "backends/test_llama_backend.py::test_steered_tool_call_is_parsed_and_stops_on_call",
    "backends/test_llama_conversations.py",
    "backends/test_llama_long_words.py",
    "backends/test_llama_prefill.py::test_regenerating_after_a_prefill_gives_what_a_fresh_model_gives",
    "backends/test_llama_token_reuse.py",
    "backends/test_ollama_proxy.py",
    "backends/test_speculative.py",
    "backends/test_structured_choice.py",
    "backends/test_structured_draws.py",
    "backends/test_structured_replies.py",
    "backends/test_structured_sampling.py",
    "chat/test_context_keeper.py::test_a_chat_past_its_context_is_compacted_and_goes_on",
    "first_run/test_tui_first_run.py",
    "library/test_docs_cli.py::test_run_allows_the_browser_only_with_folders",
    "library/test_index_damaged.py",
    "store/test_gguf_fuzz.py::test_the_installed_command_says_what_is_wrong",
    "store/test_store_offline.py::test_nothing_but_pull_opens_a_connection",
    "test_bench_scripts.py",
    "test_install.py",
    "test_install.py::test_installed_version_and_doctor",
    "test_run_cli.py::test_prompt_from_stdin_and_reasoning_on_stderr",
    "test_run_draft.py",
    "test_run_schema.py::test_a_file_that_is_not_json_is_refused_by_the_command",
    "test_tiers.py",
    "tools/test_browser_engine.py",
    "tools/test_browser_hostile.py",
    "tools/test_tools_cli.py::test_tools_with_an_mcp_server",
    "tools/test_tools_mcp.py::test_a_server_that_never_answers_times_out",
    "tools/test_tools_mcp_hostile.py",
    "tools/test_tools_python_sandbox.py::test_a_timeout_kills_processes_that_left_the_session",
    "tools/test_tools_python_sandbox.py::test_without_a_cgroup_the_keeper_still_ends_them",
    "tui/test_tui_attachment_widgets.py",
    "tui/test_tui_chat.py",
    "tui/test_tui_copy.py",
    "tui/test_tui_export.py",
    "tui/test_tui_help.py",
    "tui/test_tui_input_history.py",
    "tui/test_tui_instructions.py",
    "tui/test_tui_sidebar.py",
    "tui/test_tui_snapshots.py",
    "tui/test_tui_stop_errors.py",
    "tui/test_tui_tools.py",
)  # fmt: skip


def mark_tiers(items: list[pytest.Item]) -> None:
    """Add the `terminal`, `clients` and `slow` markers the rules above give each item."""
    for item in items:
        if not isinstance(item, pytest.Function):
            continue
        modules, words = set(), set()
        for kind, name in _named(item):
            (modules if kind == "module" else words).add(name)
        if modules & TERMINAL_MODULES or words & TERMINAL_WORDS:
            item.add_marker(pytest.mark.terminal)
        if modules & CLIENT_MODULES or _under(item, CLIENT_FOLDERS):
            item.add_marker(pytest.mark.clients)
        if SLOW_FIXTURES & set(item.fixturenames) or _listed(item, SLOW):
            item.add_marker(pytest.mark.slow)


def _relative(item: pytest.Item) -> str:
    return item.path.resolve().relative_to(TESTS).as_posix()


def _under(item: pytest.Item, folders: tuple[str, ...]) -> bool:
    return _relative(item).split("/")[0] in folders


def _listed(item: pytest.Item, listed: tuple[str, ...]) -> bool:
    """Whether the item's file, or the item itself (`file::test`, any parameters), is listed."""
    here = _relative(item)
    test = f"{here}::{item.originalname}"
    return any(entry in (here, test) for entry in listed)


def _named(item: pytest.Function) -> Iterator[tuple[str, str]]:
    """("module", the top-level module of a name) for what the test and its fixtures name,
    and ("word", a string) for the strings their code holds."""
    functions: list[Any] = [item.function]
    for definitions in item._fixtureinfo.name2fixturedefs.values():
        functions.extend(definition.func for definition in definitions)
    seen: set[CodeType] = set()
    for function in functions:
        code = getattr(function, "__code__", None)
        if isinstance(code, CodeType) and _in_tests(code):  # not pytest's own fixtures
            yield from _walk(code, function.__globals__, seen)


def _walk(code: CodeType, names: dict[str, Any], seen: set[CodeType]) -> Iterator[tuple[str, str]]:
    """What `code` (and its inner functions, and the test helpers it calls) names."""
    if code in seen:
        return
    seen.add(code)
    for const in _consts(code.co_consts):
        if isinstance(const, CodeType):
            yield from _walk(const, names, seen)
        elif isinstance(const, str):
            yield "word", const
    for name in code.co_names:
        value = names.get(name)
        if value is None:
            continue
        module = (
            value.__name__ if isinstance(value, ModuleType) else getattr(value, "__module__", None)
        )
        if isinstance(module, str):
            yield "module", module.split(".")[0]
        if isinstance(value, FunctionType) and _in_tests(value.__code__):
            yield from _walk(value.__code__, value.__globals__, seen)


def _consts(consts: tuple[object, ...]) -> Iterator[object]:
    """The constants, those in tuples too (a list of literals is compiled to one)."""
    for const in consts:
        if isinstance(const, (tuple, frozenset)):
            yield from _consts(tuple(const))
        else:
            yield const


def _in_tests(code: CodeType) -> bool:
    return Path(code.co_filename).resolve().is_relative_to(TESTS)
