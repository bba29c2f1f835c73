"""The GGUF checker: a valid synthetic model passes, and each kind of damage has its own reason."""

from __future__ import annotations

import dataclasses
import random
import struct
import time
from collections.abc import Callable
from pathlib import Path

import gguf
import pytest
from synthetic import TINY, plan_tensors, write_gguf

from gptoss_local.store.gguf_check import GgufError, GgufInfo, check_gguf

# GGUF value types and ggml tensor types used below.
U32, I32, STR, ARR, U64 = 4, 5, 8, 9, 10
F32, Q8_0 = 0, 8


# A hand-rolled writer, so each broken file differs from a valid one in exactly one place.
def gstr(text: str | bytes) -> bytes:
    raw = text.encode() if isinstance(text, str) else text
    return struct.pack("<Q", len(raw)) + raw


def kv(key: str, vtype: int, payload: bytes) -> bytes:
    return gstr(key) + struct.pack("<i", vtype) + payload


def kv_str(key: str, value: str) -> bytes:
    return kv(key, STR, gstr(value))


def kv_u32(key: str, value: int) -> bytes:
    return kv(key, U32, struct.pack("<I", value))


def tinfo(name: str, dims: list[int], ggml_type: int, offset: int) -> bytes:
    packed = struct.pack(f"<I{len(dims)}q", len(dims), *dims)
    return gstr(name) + packed + struct.pack("<iQ", ggml_type, offset)


ARCH = kv_str("general.architecture", "gpt-oss")
# Two tensors: 8 F32 values (32 bytes) and a 32x2 Q8_0 matrix (2 blocks of 34 bytes).
TENSORS = [tinfo("a.weight", [8], F32, 0), tinfo("b.weight", [32, 2], Q8_0, 32)]
DATA = bytes(32) + bytes(68)


def build(
    kvs: list[bytes] | None = None,
    infos: list[bytes] | None = None,
    data: bytes = DATA,
    *,
    header: bytes | None = None,
    alignment: int = 32,
) -> bytes:
    kvs = [ARCH, kv_str("general.name", "hand-made")] if kvs is None else kvs
    infos = TENSORS if infos is None else infos
    if header is None:
        header = b"GGUF" + struct.pack("<IQQ", 3, len(infos), len(kvs))
    body = header + b"".join(kvs) + b"".join(infos)
    return body + bytes(-len(body) % alignment) + data


def header(version: int = 3, n_tensors: int = 2, n_kv: int = 2, magic: bytes = b"GGUF") -> bytes:
    return magic + struct.pack("<IQQ", version, n_tensors, n_kv)


def refuse(path: Path, *words: str, **kwargs: object) -> str:
    """Checks that `path` is refused with a message naming it and containing `words`."""
    with pytest.raises(GgufError) as caught:
        check_gguf(path, **kwargs)  # type: ignore[arg-type]
    message = str(caught.value)
    assert message.startswith(str(path)), message
    for word in words:
        assert word in message, message
    return message


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_gguf(tmp_path_factory.mktemp("tiny") / "tiny.gguf", TINY, seed=0)


def test_synthetic_tiny_model_is_accepted(tiny: Path) -> None:
    info = check_gguf(tiny)
    reader = gguf.GGUFReader(tiny)
    assert isinstance(info, GgufInfo)
    assert (info.architecture, info.version, info.alignment) == ("gpt-oss", 3, 32)
    assert info.tensor_count == len(plan_tensors(TINY)) == len(reader.tensors)
    assert info.kv_count == len(reader.fields) - 3  # the reader counts the header's 3 fields
    assert info.data_offset == reader.data_offset
    assert info.file_size == tiny.stat().st_size
    assert info.metadata["general.name"] == "synthetic gpt-oss tiny"
    assert info.metadata["gpt-oss.expert_count"] == TINY.experts
    assert info.array_lengths["tokenizer.ggml.tokens"] == TINY.vocab_size
    assert "tokenizer.ggml.tokens" not in info.metadata
    assert info.split_count == 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        info.version = 2  # type: ignore[misc]


def test_hand_made_file_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "ok.gguf"
    path.write_bytes(build())
    info = check_gguf(path)
    assert (info.tensor_count, info.kv_count, info.metadata["general.name"]) == (2, 2, "hand-made")
    path.write_bytes(build(header=header(version=2)))
    assert check_gguf(path).version == 2


def _strings(*items: str) -> bytes:
    return struct.pack("<iQ", STR, len(items)) + b"".join(gstr(item) for item in items)


def _string_overrun() -> bytes:
    return build([ARCH, kv("general.name", STR, struct.pack("<Q", 100_000) + b"x")])


# (case id, file bytes, words the message must contain)
BROKEN: list[tuple[str, Callable[[], bytes], tuple[str, ...]]] = [
    ("empty", lambda: b"", ("is empty (0 bytes)",)),
    ("html", lambda: b"<!DOCTYPE html><html>Not found</html>", ("'<!DO'", "error page")),
    ("json", lambda: b'{"error": "unauthorized"}', ("not a GGUF file", "error page")),
    ("lfs pointer", lambda: b"version https://git-lfs.github.com/spec/v1\n", ("Git LFS",)),
    ("bad magic", lambda: build(header=header(magic=b"GGML")), ("starts with 'GGML'",)),
    ("short magic", lambda: b"GG", ("truncated", "inside the header")),
    ("version 1", lambda: build(header=header(version=1)), ("version 1", "no longer")),
    ("version 99", lambda: build(header=header(version=99)), ("unknown GGUF version 99",)),
    ("big endian", lambda: build(header=header(version=3 << 24)), ("big-endian",)),
    ("tensor count", lambda: build(header=header(n_tensors=2**40)), ("1,099,511,627,776 tensors",)),
    ("kv count", lambda: build(header=header(n_kv=2**63)), ("keys (the limit is 100,000)",)),
    ("counts vs size", lambda: build(header=header(n_tensors=500_000)), ("need at least",)),
    ("string overrun", _string_overrun, ("string of 100,000 bytes", "are left in the file")),
    (
        "string limit",
        lambda: build([ARCH, kv("general.name", STR, struct.pack("<Q", 2**40))]),
        ("(the limit is 1,048,576)",),
    ),
    (
        "key limit",
        lambda: build([ARCH, struct.pack("<Q", 70_000)]),
        ("name of metadata key #1", "(the limit is 65,536)"),
    ),
    ("empty key", lambda: build([ARCH, kv_u32("", 1)]), ("key #1 has an empty name",)),
    ("duplicate key", lambda: build([ARCH, ARCH]), ("'general.architecture' appears twice",)),
    (
        "unknown value type",
        lambda: build([ARCH, kv("general.name", 13, b"\0" * 8)]),
        ("'general.name' has unknown value type 13",),
    ),
    (
        "array element type",
        lambda: build([ARCH, kv("x.list", ARR, struct.pack("<iQ", 77, 0))]),
        ("array of unknown value type 77",),
    ),
    (
        "nested array",
        lambda: build([ARCH, kv("x.list", ARR, struct.pack("<iQ", ARR, 1))]),
        ("array of arrays",),
    ),
    (
        "array overrun",
        lambda: build([ARCH, kv("x.list", ARR, struct.pack("<iQ", I32, 1_000_000))]),
        ("array of 1,000,000 values", "4,000,000 bytes"),
    ),
    (
        "string array limit",
        lambda: build([ARCH, kv("x.list", ARR, struct.pack("<iQ", STR, 1 << 25))]),
        ("claims 33,554,432 values (the limit is 16,777,216)",),
    ),
    (
        "array string overrun",
        lambda: build([ARCH, kv("x.list", ARR, struct.pack("<iQQ", STR, 1, 5000))]),
        ("'x.list' (element #0) claims a string of 5,000 bytes",),
    ),
    (
        "alignment not power of two",
        lambda: build([ARCH, kv_u32("general.alignment", 48)], alignment=48),
        ("general.alignment is 48, which is not a power of two",),
    ),
    (
        "alignment type",
        lambda: build([ARCH, kv("general.alignment", U64, struct.pack("<Q", 32))]),
        ("general.alignment is not a uint32",),
    ),
    (
        "offset past end",
        lambda: build(infos=[TENSORS[0], tinfo("b.weight", [32, 2], Q8_0, 1 << 20)]),
        ("tensor 'b.weight' starts at byte", "past the end of the file"),
    ),
    (
        "data past end",
        lambda: build(data=DATA[:-10]),
        ("truncated: tensor 'b.weight' ends at byte", "download it again"),
    ),
    (
        "misaligned offset",
        lambda: build(infos=[TENSORS[0], tinfo("b.weight", [32, 2], Q8_0, 33)]),
        ("offset 33, which is not a multiple of the file's alignment (32)",),
    ),
    (
        "overlapping tensors",
        lambda: build(infos=[TENSORS[0], tinfo("b.weight", [32, 2], Q8_0, 0)]),
        ("the tensors before it end at 32",),
    ),
    ("n_dims 0", lambda: build(infos=[tinfo("a", [], F32, 0)]), ("'a' has 0 dimensions",)),
    ("n_dims 5", lambda: build(infos=[tinfo("a", [1] * 5, F32, 0)]), ("'a' has 5 dimensions",)),
    ("zero dim", lambda: build(infos=[tinfo("a", [8, 0], F32, 0)]), ("impossible shape [8, 0]",)),
    ("negative dim", lambda: build(infos=[tinfo("a", [-8], F32, 0)]), ("impossible shape",)),
    (
        "huge shape",
        lambda: build(infos=[tinfo("a", [2**40, 2**40], F32, 0)]),
        ("impossible shape",),
    ),
    ("unknown ggml type", lambda: build(infos=[tinfo("a", [8], 99, 0)]), ("ggml type 99",)),
    ("removed ggml type", lambda: build(infos=[tinfo("a", [8], 4, 0)]), ("ggml type 4",)),
    (
        "row not whole blocks",
        lambda: build(infos=[tinfo("a", [33], Q8_0, 0)]),
        ("33 values per row, not a multiple of the Q8_0 block size 32",),
    ),
    (
        "duplicate tensor",
        lambda: build(infos=[TENSORS[0], tinfo("a.weight", [8], F32, 32)]),
        ("tensor 'a.weight' appears twice",),
    ),
    ("long tensor name", lambda: build(infos=[tinfo("n" * 64, [8], F32, 0)]), ("64-byte name",)),
    (
        "llama",
        lambda: build([kv_str("general.architecture", "llama")]),
        ("is a 'llama' model, not gpt-oss",),
    ),
    (
        "ollama",
        lambda: build([kv_str("general.architecture", "gptoss")]),
        ("Ollama", "llama.cpp cannot load", "`gptoss-local pull`"),
    ),
    ("no architecture", lambda: build([kv_u32("x", 1)]), ("no general.architecture key",)),
    (
        "tensor not 32-byte aligned in the file",
        lambda: build(
            [ARCH, kv_u32("general.alignment", 8)],
            [tinfo("a.weight", [2], F32, 0), tinfo("b.weight", [32, 2], Q8_0, 8)],
            bytes(8) + bytes(68),
            alignment=8,
        ),
        ("not a multiple of 32, which llama.cpp needs", "general.alignment is 8"),
    ),
    (
        "repeated token",
        lambda: build([ARCH, kv("tokenizer.ggml.tokens", ARR, _strings("a", "b", "a"))]),
        ("'tokenizer.ggml.tokens' repeats an earlier token at #2",),
    ),
    (
        "architecture type",
        lambda: build([kv_u32("general.architecture", 1)]),
        ("general.architecture is not a short string",),
    ),
]


@pytest.mark.parametrize(("make", "words"), [c[1:] for c in BROKEN], ids=[c[0] for c in BROKEN])
def test_broken_file_is_refused(
    tmp_path: Path, make: Callable[[], bytes], words: tuple[str, ...]
) -> None:
    path = tmp_path / "model.gguf"
    path.write_bytes(make())
    refuse(path, *words)


def test_every_broken_file_has_its_own_reason(tmp_path: Path) -> None:
    reasons = set()
    for i, (_, make, _words) in enumerate(BROKEN):
        path = tmp_path / f"{i}.gguf"
        path.write_bytes(make())
        with pytest.raises(GgufError) as caught:
            check_gguf(path)
        reasons.add(caught.value.reason)
    assert len(reasons) == len(BROKEN)


def _cut_points(path: Path) -> dict[str, tuple[int, str]]:
    """Cut points inside each part of the file, found with the gguf package's own reader."""
    reader = gguf.GGUFReader(path)
    tokens = reader.fields["tokenizer.ggml.tokens"].offset
    first, last = reader.tensors[0], reader.tensors[-1]
    return {
        "header": (10, "inside the header"),
        "metadata": (tokens + 5000, "inside the metadata (key 'tokenizer.ggml.tokens')"),
        "tensor infos": (first.field.offset + 30, "inside the tensor infos (tensor 'token_embd"),
        "padding": (reader.data_offset - 3, "before the tensor data"),
        "first tensor": (reader.data_offset + 1000, "tensor 'token_embd.weight' ends at byte"),
        "last tensor": (path.stat().st_size - 1, f"tensor '{last.name}' ends at byte"),
    }


@pytest.mark.parametrize(
    "part", ["header", "metadata", "tensor infos", "padding", "first tensor", "last tensor"]
)
def test_truncated_file_says_where(tiny: Path, tmp_path: Path, part: str) -> None:
    cut, words = _cut_points(tiny)[part]
    path = tmp_path / "cut.gguf"
    path.write_bytes(tiny.read_bytes()[:cut])
    refuse(path, "is truncated", words, "download it again")


def test_surgery_on_the_tiny_file(tiny: Path, tmp_path: Path) -> None:
    raw, path = tiny.read_bytes(), tmp_path / "patched.gguf"
    path.write_bytes(raw[:4] + struct.pack("<I", 1) + raw[8:])
    refuse(path, "version 1")
    # token_embd.weight's type sits just before its offset, 12 bytes before the next info.
    after = gguf.GGUFReader(tiny).tensors[1].field.offset
    path.write_bytes(raw[: after - 12] + struct.pack("<i", 200) + raw[after - 8 :])
    refuse(path, "tensor 'token_embd.weight' has unknown ggml type 200")


def test_long_strings_are_checked_but_not_kept(tmp_path: Path) -> None:
    path = tmp_path / "template.gguf"
    path.write_bytes(build([ARCH, kv_str("tokenizer.chat_template", "x" * 100_000)]))
    info = check_gguf(path)
    assert "tokenizer.chat_template" not in info.metadata
    assert info.metadata["general.architecture"] == "gpt-oss"


def test_any_architecture_when_not_asked(tmp_path: Path) -> None:
    path = tmp_path / "llama.gguf"
    path.write_bytes(build([kv_str("general.architecture", "llama")]))
    assert check_gguf(path, expect_architecture=None).architecture == "llama"
    path.write_bytes(build([kv_u32("x", 1)]))
    assert check_gguf(path, expect_architecture=None).architecture is None


def test_missing_file_and_directory(tmp_path: Path) -> None:
    refuse(tmp_path / "nothing.gguf", "does not exist")
    refuse(tmp_path, "cannot be read")


def _write_shards(folder: Path, count: int = 3, prefix: str = "big") -> list[Path]:
    paths = []
    for no in range(count):
        kvs = ([ARCH] if no == 0 else []) + _split_kvs(no, count)
        if no == 0:
            kvs.append(kv("split.tensors.count", I32, struct.pack("<i", 2 * count)))
        path = folder / f"{prefix}-{no + 1:05d}-of-{count:05d}.gguf"
        path.write_bytes(build(kvs))
        paths.append(path)
    return paths


def test_split_model_with_all_shards(tmp_path: Path) -> None:
    first = _write_shards(tmp_path)[0]
    info = check_gguf(first)
    assert (info.split_count, info.tensor_count, info.architecture) == (3, 2, "gpt-oss")


def test_split_model_with_a_missing_shard(tmp_path: Path) -> None:
    paths = _write_shards(tmp_path)
    paths[2].unlink()
    refuse(paths[0], "shard 3 (big-00003-of-00003.gguf) is missing", "download all 3 shards")
    assert check_gguf(paths[0], check_shards=False).split_count == 3


def test_split_model_with_a_damaged_shard(tmp_path: Path) -> None:
    paths = _write_shards(tmp_path)
    paths[1].write_bytes(paths[1].read_bytes()[:-5])
    with pytest.raises(GgufError) as caught:
        check_gguf(paths[0])
    assert caught.value.path == paths[1]
    assert "big-00002-of-00003.gguf is truncated" in str(caught.value)


def _split_kvs(no: int, count: int) -> list[bytes]:
    return [
        kv("split.no", 2, struct.pack("<H", no)),
        kv("split.count", 2, struct.pack("<H", count)),
    ]


def test_split_model_shard_mixups(tmp_path: Path) -> None:
    paths = _write_shards(tmp_path)
    refuse(paths[1], "is shard 2 of 3; check big-00001-of-00003.gguf instead")
    renamed = paths[0].rename(tmp_path / "big.gguf")
    refuse(renamed, "does not end in -00001-of-00003.gguf")
    renamed.rename(paths[0])
    paths[2].write_bytes(paths[1].read_bytes())  # shard 2 saved under shard 3's name
    with pytest.raises(GgufError, match=r"big-00003-of-00003\.gguf is not shard 3 of 3"):
        check_gguf(paths[0])
    llama = kv_str("general.architecture", "llama")
    paths[2].write_bytes(build([llama, *_split_kvs(2, 3)]))
    with pytest.raises(GgufError, match=r"00003-of-00003\.gguf is a 'llama' model, not gpt-oss"):
        check_gguf(paths[0])
    paths[2].write_bytes(build(_split_kvs(2, 3), infos=[TENSORS[0]], data=DATA[:32]))
    refuse(paths[0], "shards hold 6 tensors, but they hold 5")


def _mutate(raw: bytes, rng: random.Random, header_end: int) -> bytes:
    data = bytearray(raw)
    if rng.random() < 0.7:
        for _ in range(rng.randint(1, 8)):
            # Mostly where the structure is: damage to tensor data goes unnoticed by design.
            at = rng.randrange(header_end if rng.random() < 0.9 else len(data))
            data[at] = (
                rng.randrange(256) if rng.random() < 0.5 else data[at] ^ (1 << rng.randrange(8))
            )
    if rng.random() < 0.4:
        del data[rng.randrange(len(data)) :]
    return bytes(data)


def test_fuzzed_files_only_ever_raise_gguf_error(tiny: Path, tmp_path: Path) -> None:
    raw, rng = tiny.read_bytes(), random.Random(1234)
    header_end = gguf.GGUFReader(tiny).data_offset
    path, outcomes = tmp_path / "fuzz.gguf", {"accepted": 0, "refused": 0}
    started = time.monotonic()
    for _ in range(300):
        path.write_bytes(_mutate(raw, rng, header_end))
        try:
            check_gguf(path)
            outcomes["accepted"] += 1
        except GgufError:
            outcomes["refused"] += 1
    assert time.monotonic() - started < 10
    assert outcomes["refused"] > 150 and outcomes["accepted"] > 0, outcomes
