"""The package's layers, checked from its source: imports point downward.

No import cycle between modules (deferred imports included, `if TYPE_CHECKING:` ones not); the
command-line layer (`commands/`) is imported only by `cli.py`; textual only inside `tui/`; and
modules of the package import each other at the top of the file, not inside functions (heavy
third-party libraries stay deferred to where they are used, so `--help` stays fast). The
conversation sits at the bottom, with the Harmony format just above it, and the conversation's
types are imported from the conversation module, not from the format or the backends. Each
engine is a folder under backends/ that imports none of the others, and the rest of the package
reaches into one only through the few modules `DOORS` names (the engine registry in `launch/`
opens them); the JSON-schema checks that serve and `run` share sit below them in `schemas/`.
And docs/architecture.md names every module of the package, so the page stays true to the code.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parent.parent / "gptoss_local"
# Imported inside functions on purpose: cli.py loads one command's module when it runs, and the
# TUI (textual: ~0.2 s) is loaded only by the command that opens it.
DEFERRED_SOURCES = {"gptoss_local.cli"}
DEFERRED_TARGETS = ("gptoss_local.tui",)


@dataclass(frozen=True)
class Import:
    """One import statement's target module, where it is, and whether it runs at import time."""

    source: str
    target: str
    line: int
    top_level: bool


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in PACKAGE.rglob("*.py")}


def _resolve(module: str, names: list[str]) -> list[str]:
    """`from module import a, b`: the submodules named, else the module itself."""
    found = [f"{module}.{n}" for n in names if f"{module}.{n}" in MODULES]
    return found or [module]


def imports_of(source: str) -> Iterator[Import]:
    """Every import in module `source` (those for type checking only too), with the module it
    loads."""
    tree = ast.parse(MODULES[source].read_text(encoding="utf-8"))

    def walk(node: ast.AST, top: bool) -> Iterator[Import]:
        for child in ast.iter_child_nodes(node):
            # Imports for type checking only count too: a cycle through them is still a circle
            # in the design, and an upward one still a layer broken.
            if isinstance(child, ast.Import):
                for alias in child.names:
                    yield Import(source, alias.name, child.lineno, top)
            elif isinstance(child, ast.ImportFrom) and child.module and not child.level:
                names = [alias.name for alias in child.names]
                for target in _resolve(child.module, names):
                    yield Import(source, target, child.lineno, top)
            else:
                inner = isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                yield from walk(child, top and not inner)

    yield from walk(tree, True)


ALL = [imp for module in sorted(MODULES) for imp in imports_of(module)]
INTERNAL = [imp for imp in ALL if imp.target.split(".")[0] == "gptoss_local"]


def _cycles() -> list[list[str]]:
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for imp in INTERNAL:
        if imp.target in MODULES and imp.target != imp.source:
            graph[imp.source].add(imp.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_package_has_no_import_cycle() -> None:
    assert _cycles() == []


# docs/architecture.md's layers, top to bottom: a module may import its own package, the
# packages on its line, and those below, never above.
LAYERS = (
    ("cli", "__main__"),
    ("commands",),
    ("agents",),
    ("tui",),
    ("chat",),
    ("launch", "benchmark"),
    ("doctor",),
    ("engine_setup",),
    ("plan",),
    ("serve",),
    ("tools",),
    ("library",),
    ("session",),
    ("attachments",),
    ("hardware",),
    ("backends",),
    ("schemas",),
    ("store",),
    ("harmony",),
    ("catalog",),
    ("events", "conversation"),
    ("config", "paths"),
    ("errors", "kinds", "units", "urls", "tomlread", "heap", "i18n"),
)
RANK = {name: depth for depth, names in enumerate(LAYERS) for name in names}


def _part(module: str) -> str:
    """The top-level package or module of `gptoss_local` that `module` belongs to."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_every_package_has_a_place_in_the_layers() -> None:
    placed = {_part(m) for m in MODULES} - {"__init__"}
    assert placed <= set(RANK), f"add to LAYERS and docs/architecture.md: {placed - set(RANK)}"


def test_imports_point_down_the_layers() -> None:
    upward = sorted(
        f"{imp.source} imports {imp.target}"
        for imp in INTERNAL
        if _part(imp.source) in RANK
        and _part(imp.target) in RANK
        and RANK[_part(imp.target)] < RANK[_part(imp.source)]
    )
    assert upward == []


def test_only_the_cli_imports_the_commands() -> None:
    upward = [
        f"{imp.source}:{imp.line} imports {imp.target}"
        for imp in INTERNAL
        if imp.target.startswith("gptoss_local.commands")
        and not imp.source.startswith("gptoss_local.commands")
        and imp.source not in ("gptoss_local.cli", "gptoss_local.__main__")
    ]
    assert upward == []


def test_textual_is_imported_only_in_the_tui() -> None:
    leaks = [
        f"{imp.source}:{imp.line}"
        for imp in ALL
        if imp.target.split(".")[0] == "textual" and not imp.source.startswith("gptoss_local.tui")
    ]
    assert leaks == []


def test_the_package_imports_itself_at_the_top_of_files() -> None:
    deferred = [
        f"{imp.source}:{imp.line} imports {imp.target}"
        for imp in INTERNAL
        if not imp.top_level
        and imp.source not in DEFERRED_SOURCES
        and not imp.target.startswith(DEFERRED_TARGETS)
    ]
    assert deferred == []


# The engines, one folder each under backends/, beside the contract (backends/base.py) they keep.
ENGINES = ("llamacpp", "ollama", "openai")
LAUNCH = ("gptoss_local.launch", "gptoss_local.benchmark")  # the registry that opens engines
# An engine's modules that the rest of the package may import, and who may: the engine itself
# for the registry; llama.cpp's library (what it can do, where its runtime is) for the hardware
# probe and `engine install`; Ollama's daemon finder and status for `doctor`. Nothing else.
DOORS = {
    "gptoss_local.backends.llamacpp.backend": LAUNCH,
    "gptoss_local.backends.llamacpp.options": LAUNCH,
    "gptoss_local.backends.llamacpp.load": LAUNCH,
    "gptoss_local.backends.llamacpp.native": ("gptoss_local.hardware", "gptoss_local.engine_setup"),
    "gptoss_local.backends.llamacpp.runtime": ("gptoss_local.engine_setup",),
    "gptoss_local.backends.ollama.backend": LAUNCH,
    "gptoss_local.backends.ollama.daemon": (*LAUNCH, "gptoss_local.engine_setup"),
    "gptoss_local.backends.ollama.status": ("gptoss_local.doctor",),
    "gptoss_local.backends.openai.backend": LAUNCH,
}


def _engine(module: str) -> str | None:
    """The engine folder `module` belongs to, if any."""
    parts = module.split(".")
    if len(parts) > 2 and parts[1] == "backends" and parts[2] in ENGINES:
        return parts[2]
    return None


def _cross_engine(imports: list[Import]) -> list[str]:
    """Imports of one engine from another, or from the contract (or backends/__init__)."""
    return [
        f"{imp.source}:{imp.line} imports {imp.target}"
        for imp in imports
        if _engine(imp.target)
        and _within(imp.source, "gptoss_local.backends")
        and _engine(imp.source) != _engine(imp.target)
    ]


def _past_the_doors(imports: list[Import]) -> list[str]:
    """Imports of an engine's module from outside backends/ that its doors do not let in."""
    return [
        f"{imp.source}:{imp.line} imports {imp.target}"
        for imp in imports
        if _engine(imp.target)
        and not _within(imp.source, "gptoss_local.backends")
        and not any(_within(imp.source, p) for p in DOORS.get(imp.target, ()))
    ]


def test_the_engines_import_none_of_each_other() -> None:
    assert _cross_engine(INTERNAL) == []


def test_an_engine_is_opened_only_through_its_doors() -> None:
    assert _past_the_doors(INTERNAL) == []


@pytest.mark.parametrize(
    ("source", "target", "cross", "past"),
    [
        ("gptoss_local.backends.ollama.backend", "gptoss_local.backends.llamacpp.native", 1, 0),
        ("gptoss_local.backends.base", "gptoss_local.backends.openai.http", 1, 0),
        ("gptoss_local.backends.llamacpp.backend", "gptoss_local.backends.llamacpp.load", 0, 0),
        ("gptoss_local.serve.formats", "gptoss_local.backends.llamacpp.structured", 0, 1),
        ("gptoss_local.hardware.engine", "gptoss_local.backends.llamacpp.backend", 0, 1),
        ("gptoss_local.launch.runner", "gptoss_local.backends.llamacpp.backend", 0, 0),
        ("gptoss_local.serve.formats", "gptoss_local.schemas", 0, 0),
    ],
)
def test_the_engine_rules_see_what_they_forbid(
    source: str, target: str, cross: int, past: int
) -> None:
    imports = [Import(source, target, 1, True)]
    assert (len(_cross_engine(imports)), len(_past_the_doors(imports))) == (cross, past)


# What these may import of the package besides themselves: the conversation is a leaf (the
# parsed call a record is made from aside), and the format renders it knowing nothing above.
FLOORS = {
    "gptoss_local.conversation": ("gptoss_local.events",),
    "gptoss_local.harmony": ("gptoss_local.conversation", "gptoss_local.events",
                             "gptoss_local.kinds"),
}  # fmt: skip
# Still import the conversation's types from where they used to be; to be moved over.
CONVERSATION_TRANSITION: set[str] = set()


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_the_conversation_and_its_format_import_nothing_above_them() -> None:
    upward = [
        f"{imp.source}:{imp.line} imports {imp.target}"
        for imp in INTERNAL
        for package, allowed in FLOORS.items()
        if _within(imp.source, package)
        and not _within(imp.target, package)
        and not any(_within(imp.target, floor) for floor in allowed)
    ]
    assert upward == []


def _conversation_names() -> set[str]:
    tree = ast.parse(MODULES["gptoss_local.conversation"].read_text(encoding="utf-8"))
    names = {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    assigned = [t for n in tree.body if isinstance(n, ast.Assign) for t in n.targets]
    assigned += [n.target for n in tree.body if isinstance(n, ast.AnnAssign)]
    return names | {t.id for t in assigned if isinstance(t, ast.Name)}


def test_the_conversation_types_come_from_the_conversation_module() -> None:
    owned = _conversation_names()
    elsewhere = []
    for source in sorted(set(MODULES) - CONVERSATION_TRANSITION):
        for node in ast.walk(ast.parse(MODULES[source].read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module != "gptoss_local.conversation":
                found = {a.name for a in node.names} & owned
                if (node.module or "").startswith("gptoss_local") and found:
                    elsewhere.append(f"{source}:{node.lineno} {sorted(found)} from {node.module}")
    assert elsewhere == []


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("import gptoss_local.paths\n", ["gptoss_local.paths"]),
        ("def f():\n    from gptoss_local import paths, config\n", ["gptoss_local.paths"]),
        ("if TYPE_CHECKING:\n    from gptoss_local import paths\n", ["gptoss_local.paths"]),
    ],
)
def test_the_walk_sees_imports_where_they_are(
    code: str, expected: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / "probe.py"
    fake.write_text(code)
    monkeypatch.setitem(MODULES, "probe", fake)
    found = [imp.target for imp in imports_of("probe") if imp.target.startswith("gptoss_local")]
    assert found[: len(expected)] == expected and (expected or not found)


def _unnamed_modules(text: str) -> list[str]:
    """The package's module files (`__init__.py` aside) whose stem `text` never names as a word."""
    return [
        str(path.relative_to(PACKAGE))
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.stem != "__init__" and not re.search(rf"(?<![\w.]){path.stem}\b", text)
    ]


def test_the_architecture_page_names_every_module() -> None:
    text = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert _unnamed_modules(text) == []


def test_the_module_check_sees_a_module_the_page_leaves_out() -> None:
    unnamed = _unnamed_modules("cli.py, conversation (the messages), commands/run.py")
    assert "cli.py" not in unnamed and "conversation.py" not in unnamed
    assert "config.py" in unnamed and "events.py" in unnamed
