"""The model manifest: the shipped facts, the override variable, and errors that name the entry."""

from __future__ import annotations

from pathlib import Path

import pytest

from gptoss_local import catalog
from gptoss_local.catalog import ManifestError
from gptoss_local.catalog.schema import check_file_name
from gptoss_local.errors import UnknownModelError, UnknownSourceError

SHIPPED = Path(__file__).parent.parent / "models" / "manifest.toml"


def test_shipped_manifest_has_both_models_with_their_files() -> None:
    cat = catalog.load()
    small, big = cat.model("20b"), cat.model("gpt-oss-120b")
    assert small.entry_file.name == "gpt-oss-20b-mxfp4.gguf"
    assert small.total_bytes == 12_109_566_560
    assert small.entry_file.sha256.startswith("be37a636")
    assert big.files[0].name.endswith("-00001-of-00003.gguf")
    assert len(big.files) == 3 and big.total_bytes > 63e9
    assert (small.ollama_tag, big.ollama_tag) == ("gpt-oss:20b", "gpt-oss:120b")
    assert small.license == big.license == "Apache-2.0"
    assert (small.shape.layers, big.shape.layers, big.shape.experts) == (24, 36, 128)


def test_source_urls_and_hf_endpoint() -> None:
    cat = catalog.load()
    spec = cat.model("20b")
    hf = cat.source("huggingface")
    url = hf.url_for(spec, spec.entry_file, env={})
    assert url == (
        "https://huggingface.co/ggml-org/gpt-oss-20b-GGUF/resolve/"
        "e1dc459feff949ff451ce107337a2026daa80df8/gpt-oss-20b-mxfp4.gguf"
    )
    mirrored = hf.url_for(spec, spec.entry_file, env={"HF_ENDPOINT": "https://mirror.example/"})
    assert mirrored.startswith("https://mirror.example/ggml-org/gpt-oss-20b-GGUF/resolve/")
    scope = cat.source("modelscope").url_for(spec, spec.entry_file, env={})
    assert (
        scope
        == "https://modelscope.cn/models/ggml-org/gpt-oss-20b-GGUF/resolve/master/gpt-oss-20b-mxfp4.gguf"
    )
    assert cat.source_names == ("huggingface", "hf-mirror", "modelscope")


def test_known_gpu_prefers_the_longest_match() -> None:
    cat = catalog.load()
    assert cat.known_gpu("NVIDIA GeForce RTX 4060 Ti").match == "RTX 4060 Ti"
    assert cat.known_gpu("NVIDIA GeForce RTX 4060").match == "RTX 4060"
    assert cat.known_gpu("NVIDIA GeForce GT 710") is None


def test_unknown_names_list_the_choices() -> None:
    cat = catalog.load()
    with pytest.raises(UnknownModelError, match="gpt-oss-20b, 20b"):
        cat.model("llama")
    with pytest.raises(UnknownSourceError, match="huggingface"):
        cat.source("nowhere")


def test_manifest_override_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    alt = tmp_path / "alt.toml"
    alt.write_text(SHIPPED.read_text().replace('aliases = ["20b"]', 'aliases = ["20b", "small"]'))
    monkeypatch.setenv("GPTOSS_LOCAL_MANIFEST", str(alt))
    assert catalog.manifest_path() == alt
    assert catalog.load().model("small").name == "gpt-oss-20b"


BREAKAGES = [
    ("schema = 1", "schema = 7", "schema"),
    ('sha256 = "be37', 'sha256 = "zz37', "models.gpt-oss-20b.files[0].sha256"),
    ("bytes = 12_109_566_560", "bytes = -1", "models.gpt-oss-20b.files[0].bytes"),
    (
        'name = "gpt-oss-20b-mxfp4.gguf"',
        'name = "../../etc/passwd"',
        "models.gpt-oss-20b.files[0].name",
    ),
    (
        'name = "gpt-oss-20b-mxfp4.gguf"',
        'name = "/abs/file.gguf"',
        "models.gpt-oss-20b.files[0].name",
    ),
    ("layers = 24\n", 'layers = "24"\n', "models.gpt-oss-20b.shape.layers"),
    ("experts_used = 4\n", "experts_used = 400\n", "models.gpt-oss-20b.shape.experts_used"),
    ('url = "https://hf-mirror.com', 'url = "http://hf-mirror.com', "sources.hf-mirror.url"),
    ("decode = { gpt-oss-20b = [58, 66] }", "decode = { gpt-oss-20b = [66] }", "gpus[0].decode"),
    ('repo = "ggml-org/gpt-oss-120b-GGUF"\n', "", "models.gpt-oss-120b.repo"),
]


@pytest.mark.parametrize(("old", "new", "entry"), BREAKAGES)
def test_malformed_manifest_names_the_bad_entry(
    tmp_path: Path, old: str, new: str, entry: str
) -> None:
    text = SHIPPED.read_text()
    assert old in text
    bad = tmp_path / "bad.toml"
    bad.write_text(text.replace(old, new, 1))
    with pytest.raises(ManifestError) as caught:
        catalog.load(bad)
    assert str(bad) in str(caught.value) and entry in str(caught.value)


def test_unparsable_or_missing_manifest(tmp_path: Path) -> None:
    broken = tmp_path / "broken.toml"
    broken.write_text("[models\n")
    with pytest.raises(ManifestError, match="cannot read"):
        catalog.load(broken)
    with pytest.raises(ManifestError, match="cannot read"):
        catalog.load(tmp_path / "absent.toml")


@pytest.mark.parametrize(
    "name", ["", ".", "..", "a/b.gguf", "a\\b.gguf", "C:evil.gguf", "x\x00.gguf"]
)
def test_unsafe_file_names_are_refused(name: str) -> None:
    with pytest.raises(ValueError, match="unsafe"):
        check_file_name(name)


def test_plain_file_names_pass() -> None:
    check_file_name("gpt-oss-120b-mxfp4-00001-of-00003.gguf")
