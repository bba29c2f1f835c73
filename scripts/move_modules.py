#!/usr/bin/env python3
"""Move backends/ into one folder per engine (issue 37), and rewrite every reference to a moved
module: imports, dotted names in strings (monkeypatch and mock targets), file paths in docs and
the catalogs' `#:` comments.

Usage: scripts/move_modules.py [--check]

Idempotent: a file already moved stays, a name already new is left alone, so it can run again
on a tree merged with branches that still name the old modules (`--check` lists what it would
change and exits 1 if anything). Then run `ruff check --fix` and `ruff format`: a rewritten
import may need sorting or wrapping. A tool of one wave, kept in scripts/ until the branches of
issue 37 are merged; delete it then.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
B = "gptoss_local.backends"
LLAMA = f"{B}.llamacpp"
GRAMMAR = f"{LLAMA}.structured"
SCHEMAS = "gptoss_local.schemas"

# Old dotted module name -> new one.
MODULES = {
    f"{B}.llama_cpp": f"{LLAMA}.backend",
    f"{B}.llama_options": f"{LLAMA}.options",
    f"{B}.llama_load": f"{LLAMA}.load",
    f"{B}.llama_native": f"{LLAMA}.native",
    f"{B}.llama_runtime": f"{LLAMA}.runtime",
    **{f"{B}.{name}": f"{LLAMA}.{name}" for name in (
        "token_chunks", "token_loop", "reply_progress", "sampling", "prompt_cache",
        "saved_states", "parallel", "drafting", "eagle_drafting", "eagle_native")},
    **{f"{B}.structured.{name}": f"{GRAMMAR}.{name}" for name in (
        "gate", "gbnf", "harmony", "race", "token_trie", "utf8")},
    f"{B}.structured.schema": f"{SCHEMAS}.keywords",
    f"{B}.structured.schema_error": f"{SCHEMAS}.errors",
    f"{B}.structured.schema_types": f"{SCHEMAS}.nodes",
    f"{B}.structured.pattern": f"{SCHEMAS}.pattern",
    f"{B}.structured.loops": f"{SCHEMAS}.loops",
    f"{B}.structured.answer": f"{SCHEMAS}.answer",
    f"{B}.ollama": f"{B}.ollama.backend",
    f"{B}.ollama_messages": f"{B}.ollama.messages",
    f"{B}.ollama_daemon": f"{B}.ollama.daemon",
    f"{B}.ollama_probe": f"{B}.ollama.probe",
    f"{B}.ollama_spawn": f"{B}.ollama.spawn",
    f"{B}.ollama_status": f"{B}.ollama.status",
    f"{B}.win_job": f"{B}.ollama.win_job",
    f"{B}.openai_client": f"{B}.openai.backend",
    f"{B}.openai_http": f"{B}.openai.http",
    f"{B}.openai_messages": f"{B}.openai.messages",
}  # fmt: skip
NEW_MODULES = set(MODULES.values())
# Old packages (their __init__ moves too) and where each name they exported lives now.
PACKAGES = {f"{B}.structured": GRAMMAR}
PACKAGE_NAMES = {
    f"{B}.structured": {
        **{name: SCHEMAS for name in ("AnswerError", "check_answer", "check_arguments",
                                      "check_schema", "SchemaError", "SchemaLoop")},
        **{name: GRAMMAR for name in ("ReplyGrammar", "ToolChoiceError", "reply_grammar")},
    },
}  # fmt: skip
NEW_PACKAGES = (f"{B}.llamacpp", GRAMMAR, f"{B}.ollama", f"{B}.openai", SCHEMAS)
SUFFIXES = (".py", ".md", ".po", ".pot", ".toml")
PLACES = ["gptoss_local", "tests", "bench", "scripts", "docs", "README.md", "pyproject.toml"]

FROM_IMPORT = re.compile(
    r"^(?P<indent>[ \t]*)from (?P<mod>gptoss_local(?:\.\w+)*) import "
    r"(?P<names>\([^)]*\)|[^\n]*)",
    re.MULTILINE,
)
DOTTED = re.compile(r"(?<![\w./])(?:gptoss_local|backends)(?:\.\w+)+")
PATH = re.compile(r"(?<![\w/.])((?:gptoss_local/)?backends/(?:structured/)?\w+\.py|"
                  r"(?:gptoss_local/)?backends/structured(?![\w.]))")  # fmt: skip


def path_of(module: str, package: bool = False) -> Path:
    """Where the source of a dotted module name lives."""
    base = ROOT.joinpath(*module.split("."))
    return base / "__init__.py" if package else base.with_suffix(".py")


def move_files() -> list[str]:
    """`git mv` each old module (and old package __init__) not yet moved; new packages get an
    __init__.py if they have none."""
    moves = [(path_of(o), path_of(n)) for o, n in MODULES.items() if o not in PACKAGES]
    moves += [(path_of(o, True), path_of(n, True)) for o, n in PACKAGES.items()]
    done = []
    for old, new in moves:
        if old.exists() and not new.exists():
            new.parent.mkdir(parents=True, exist_ok=True)
            subprocess.run(["git", "mv", str(old), str(new)], cwd=ROOT, check=True)
            done.append(f"{old.relative_to(ROOT)} -> {new.relative_to(ROOT)}")
    for package in NEW_PACKAGES:
        init = path_of(package, True)
        if not init.exists():
            init.parent.mkdir(parents=True, exist_ok=True)
            init.write_text('"""(moved by scripts/move_modules.py: say what it holds)"""\n')
            subprocess.run(["git", "add", str(init)], cwd=ROOT, check=True)
    return done


def new_dotted(name: str) -> str:
    """A dotted name (module, or module.attribute...) with its module's new name."""
    parts = name.split(".")
    prefixes = [".".join(parts[:i]) for i in range(len(parts), 1, -1)]
    old = next((p for p in prefixes if p in MODULES or p in PACKAGES), None)
    new = next((p for p in prefixes if p in NEW_MODULES), None)
    if old is None or (new is not None and len(new) >= len(old)):
        return name
    rest = parts[old.count(".") + 1 :]
    if old in PACKAGES:
        if rest and rest[0] in PACKAGE_NAMES[old]:
            return ".".join([PACKAGE_NAMES[old][rest[0]], *rest])
        return ".".join([PACKAGES[old], *rest])
    return ".".join([MODULES[old], *rest])


def _names(text: str) -> list[tuple[str, str | None]]:
    """The (name, alias) pairs of an import's name list."""
    text = re.sub(r"#[^\n]*", "", text.strip().removeprefix("(").removesuffix(")"))
    pairs = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, _, alias = item.partition(" as ")
        pairs.append((name.strip(), alias.strip() or None))
    return pairs


def _target(mod: str, name: str, alias: str | None) -> tuple[str, str, str | None]:
    """Where `from mod import name as alias` imports from now: (module, name, alias)."""
    full = f"{mod}.{name}"
    if full in MODULES and full not in NEW_MODULES:
        parent, _, leaf = MODULES[full].rpartition(".")
        return parent, leaf, None if (alias or name) == leaf else (alias or name)
    if mod in PACKAGE_NAMES and name in PACKAGE_NAMES[mod]:
        return PACKAGE_NAMES[mod][name], name, alias
    return mod, name, alias


def _rewrite_import(match: re.Match[str]) -> str:
    indent, mod, names = match["indent"], match["mod"], match["names"]
    pairs = _names(names)
    if mod in MODULES and not any(f"{mod}.{n}" in NEW_MODULES for n, _ in pairs):
        return f"{indent}from {MODULES[mod]} import {names}"
    targets = [_target(mod, name, alias) for name, alias in pairs]
    if all(t == (mod, n, a) for t, (n, a) in zip(targets, pairs, strict=True)):
        return match[0]
    groups: dict[str, list[str]] = {}
    for module, name, alias in targets:
        groups.setdefault(module, []).append(f"{name} as {alias}" if alias else name)
    return "\n".join(f"{indent}from {m} import {', '.join(ns)}" for m, ns in groups.items())


def _rewrite_package_object(text: str) -> str:
    """`from gptoss_local.backends import structured` and `structured.X`: the one package all
    the names used now come from."""
    for old in PACKAGES:
        parent, _, leaf = old.rpartition(".")
        line = re.compile(rf"^([ \t]*)from {re.escape(parent)} import {leaf}$", re.MULTILINE)
        if not line.search(text):
            continue
        used = set(re.findall(rf"(?<![\w.]){leaf}\.(\w+)", text))
        homes = {PACKAGE_NAMES[old].get(name) for name in used if name in PACKAGE_NAMES[old]}
        if len(homes) != 1 or None in homes:
            sys.exit(f"move_modules: `{leaf}.` names of more than one package: by hand")
        new_parent, _, new_leaf = homes.pop().rpartition(".")  # type: ignore[union-attr]
        text = line.sub(rf"\1from {new_parent} import {new_leaf}", text)
        uses = "|".join(sorted(PACKAGE_NAMES[old]))
        text = re.sub(rf"(?<![\w.]){leaf}\.({uses})\b", rf"{new_leaf}.\1", text)
    return text


def _rewrite_dotted(match: re.Match[str]) -> str:
    # The module of a `from ... import` was read with its names (the package `ollama` is
    # also the old module's name); inline ones (`python -c "..."`) are named in the report.
    before = match.string[max(0, match.start() - 5) : match.start()]
    if before == "from " and match.string.startswith(" import ", match.end()):
        return match[0]
    if match[0].startswith("backends."):  # prose: `backends.llama_native.lib`
        return new_dotted(f"gptoss_local.{match[0]}").removeprefix("gptoss_local.")
    return new_dotted(match[0])


def _rewrite_path(match: re.Match[str]) -> str:
    path = match[1]
    prefix = "gptoss_local/" if path.startswith("gptoss_local/") else ""
    dotted = "gptoss_local." + path.removeprefix(prefix).removesuffix(".py").replace("/", ".")
    new = new_dotted(dotted)
    if new == dotted:
        return path
    folder = not path.endswith(".py")
    return prefix + new.removeprefix("gptoss_local.").replace(".", "/") + ("" if folder else ".py")


def rewrite(text: str) -> str:
    """`text` with every reference to an old module made to its new one."""
    text = _rewrite_package_object(text)
    text = FROM_IMPORT.sub(_rewrite_import, text)
    text = DOTTED.sub(_rewrite_dotted, text)
    return PATH.sub(_rewrite_path, text)


def files() -> list[Path]:
    """The tracked text files that may name a module."""
    listed = subprocess.run(["git", "ls-files", *PLACES], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout.split()  # fmt: skip
    me = Path(__file__).resolve()
    return [ROOT / p for p in listed if p.endswith(SUFFIXES) and (ROOT / p).resolve() != me]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="change nothing, list what would")
    check = parser.parse_args().check
    if not check:
        for line in move_files():
            print("moved", line)
    changed = []
    for path in files():
        if not path.exists():
            continue
        text = path.read_text(encoding="utf-8")
        new = rewrite(text)
        if new != text:
            changed.append(str(path.relative_to(ROOT)))
            if not check:
                path.write_text(new, encoding="utf-8")
    for name in changed:
        print("rewrote" if not check else "would rewrite", name)
    return 1 if check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
