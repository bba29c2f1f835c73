#!/usr/bin/env bash
# Builds llama-bench and llama-server for the CPU from the llama.cpp source that the installed
# llama-cpp-python vendors (the same version, so both sides run the same kernels), once, into a
# cache folder outside the repository; prints the folder of the binaries.
# Source, first found: $LLAMA_CPP_SRC (a llama.cpp folder), .device/llama.cpp.tar.xz of this
# checkout or of $GPTOSS_DEVICE_DIR (bench/gpu/prepare.sh packs it), else the sdist of the
# installed version fetched with pip.
# Usage: bench/cpu/build.sh [PYTHON]     (env: GPTOSS_BENCH_CACHE, default ~/.cache/gptoss-local-bench)
set -euo pipefail
cd "$(dirname "$0")/../.."
python="${1:-${PYTHON:-python3}}"
version=$("$python" -c "import importlib.metadata as m; print(m.version('llama_cpp_python'))")
cache="${GPTOSS_BENCH_CACHE:-$HOME/.cache/gptoss-local-bench}"
build="$cache/llama.cpp-$version-cpu"
if [ -x "$build/out/bin/llama-bench" ] && [ -x "$build/out/bin/llama-server" ]; then
  echo "$build/out/bin"
  exit 0
fi
mkdir -p "$build/src"
if [ ! -d "$build/src/llama.cpp" ]; then
  packed=""
  for dir in .device "${GPTOSS_DEVICE_DIR:-}"; do
    [ -n "$dir" ] && [ -f "$dir/llama.cpp.tar.xz" ] && [ "$(cat "$dir/VERSION" 2>/dev/null)" = "$version" ] \
      && packed="$dir/llama.cpp.tar.xz" && break
  done
  if [ -n "${LLAMA_CPP_SRC:-}" ]; then
    cp -r "$LLAMA_CPP_SRC" "$build/src/llama.cpp"
  elif [ -n "$packed" ]; then
    tar -xJf "$packed" -C "$build/src"
  else
    "$python" -m pip download -q --no-deps --no-binary :all: -d "$build/sdist" "llama-cpp-python==$version" >&2
    tar -xzf "$build/sdist/llama_cpp_python-$version.tar.gz" -C "$build/sdist"
    mv "$build/sdist/llama_cpp_python-$version/vendor/llama.cpp" "$build/src/llama.cpp"
  fi
fi
generator=(); command -v ninja >/dev/null && generator=(-G Ninja)
start=$(date +%s)
{
  cmake -S "$build/src/llama.cpp" -B "$build/out" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DBUILD_SHARED_LIBS=ON -DGGML_CUDA=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
    -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_CURL=OFF \
    -DLLAMA_BUILD_APP=OFF -DLLAMA_OPENSSL=OFF
  nice -n 10 cmake --build "$build/out" --target llama-bench llama-server -j "$(nproc)"
} >"$build/build.log" 2>&1 || { tail -30 "$build/build.log" >&2; exit 1; }
echo "llama.cpp $version for the CPU: built in $(( $(date +%s) - start )) s" >"$build/build-time.txt"
echo "$build/out/bin"
