"""The oracle's vocabulary comes from toktok, and openai-harmony then never goes online."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from harmony_oracle import SHA256_HEAD, SHA256_TAIL, VOCAB_FILE, write_vocab

# A port nothing listens on: any download openai-harmony tries goes there and fails.
DEAD_PROXY = "http://127.0.0.1:9"
LOAD = (
    "from openai_harmony import HarmonyEncodingName, load_harmony_encoding\n"
    "encoding = load_harmony_encoding(HarmonyEncodingName.HARMONY_GPT_OSS)\n"
    "print(encoding.encode('<|start|>user', allowed_special='all'))\n"
)


def _load_in_child(cache: Path, base: Path | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if "PROXY" not in k.upper()}
    env.pop("TIKTOKEN_ENCODINGS_BASE", None)
    env |= {"TIKTOKEN_RS_CACHE_DIR": str(cache), "HTTPS_PROXY": DEAD_PROXY}
    env |= {"HTTP_PROXY": DEAD_PROXY, "ALL_PROXY": DEAD_PROXY}
    if base is not None:
        env["TIKTOKEN_ENCODINGS_BASE"] = str(base)
    return subprocess.run(
        [sys.executable, "-c", LOAD], env=env, capture_output=True, text=True, timeout=60
    )


def test_vocabulary_file_from_toktok(oracle: Any) -> None:
    data = (oracle.folder / VOCAB_FILE).read_bytes()
    lines = data.split(b"\n")
    assert lines[0] == b"IQ== 0" and lines[-2].endswith(b" 199997") and lines[-1] == b""
    assert len(lines) == 199_999
    digest = hashlib.sha256(data).hexdigest()
    assert digest.startswith(SHA256_HEAD) and digest.endswith(SHA256_TAIL)


def test_openai_harmony_loads_offline_from_the_folder(tmp_path: Path) -> None:
    base, cache = tmp_path / "base", tmp_path / "cache"
    base.mkdir()
    cache.mkdir()
    write_vocab(base)
    done = _load_in_child(cache, base)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[200006, 1428]"
    assert list(cache.iterdir()) == []  # nothing downloaded, nothing cached


def test_without_the_folder_it_would_download(tmp_path: Path) -> None:
    # The check above would notice a download: without the variable the load goes online,
    # meets the dead proxy, and fails.
    done = _load_in_child(tmp_path, None)
    assert done.returncode != 0
    assert "download" in done.stderr.lower()
