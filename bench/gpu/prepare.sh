#!/usr/bin/env bash
# Run on a machine WITH the package index (not the GPU box): packs what bench/gpu/run.sh needs
# into .device/ — llama.cpp's source as vendored by the pinned llama-cpp-python (trimmed of
# models, docs, web UI sources and other GPU vendors' backends), llama-cpp-python's Python
# package, and pure-Python wheels the GPU box may lack.
set -euo pipefail
cd "$(dirname "$0")/../.."
VERSION="${LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
OUT=.device
# A worktree's .git is a file: ask git where its exclude list is.
exclude=$(git rev-parse --git-path info/exclude 2>/dev/null || echo .git/info/exclude)
mkdir -p "$OUT" && grep -qxF "/$OUT/" "$exclude" 2>/dev/null || echo "/$OUT/" >> "$exclude"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m pip download -q --no-deps --no-binary :all: -d "$work" "llama-cpp-python==$VERSION"
tar -xzf "$work"/llama_cpp_python-"$VERSION".tar.gz -C "$work"
src="$work/llama_cpp_python-$VERSION"
llama="$src/vendor/llama.cpp"
rm -rf "$llama"/{models,docs,media,gguf-py,benches,examples,tests,.github}
find "$llama/tools/ui" -mindepth 1 -maxdepth 1 ! -name CMakeLists.txt ! -name '*.in' ! -name '*.cmake' -exec rm -rf {} +
for backend in sycl vulkan opencl hexagon metal webgpu openvino et cann musa kompute rpc zdnn virtgpu blas; do
  rm -rf "$llama/ggml/src/ggml-$backend"
done
tar -cJf "$OUT/llama.cpp.tar.xz" -C "$llama/.." llama.cpp
tar -cJf "$OUT/llama_cpp_py.tar.xz" -C "$src" llama_cpp
mkdir -p "$OUT/wheels"
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
  --implementation cp --platform manylinux_2_17_x86_64 -d "$OUT/wheels" \
  platformdirs==4.14.5 gguf==0.19.0 diskcache==5.6.3 \
  jsonschema==4.26.0 jsonschema-specifications==2025.9.1 referencing==0.37.0 rpds-py==2026.9.1 \
  toktok-rs==0.3.0
# The chat TUI, for bench/gpu/tui_check.py (all pure Python).
python3 -m pip download -q --no-deps --only-binary=:all: -d "$OUT/wheels" \
  textual==8.2.8 rich==15.0.0 markdown-it-py==4.3.0 mdurl==0.1.2 mdit-py-plugins==0.7.0 \
  linkify-it-py==2.2.0 uc-micro-py==1.0.3 Pygments==2.21.0 typing_extensions==4.16.0
echo "$VERSION" > "$OUT/VERSION"
du -sh "$OUT"/*
