#!/usr/bin/env bash
# Builds llama.cpp (the source llama-cpp-python vendors, packed by prepare.sh) as shared libraries
# plus llama-bench and llama-server (web UI off), for this machine's GPU.
# Usage: bench/gpu/build.sh [BUILD_DIR] [CUDA_ARCH]   CUDA_ARCH: 90 (H100/H200), 89 (Ada),
#        120 (RTX 50 / RTX PRO Blackwell), native, or "cpu" for a build without CUDA.
# Afterwards: LLAMA_CPP_LIB_PATH=BUILD_DIR/out/bin makes llama-cpp-python use these libraries.
set -euo pipefail
cd "$(dirname "$0")/../.."
build="${1:-/tmp/gptoss-llama}"
arch="${2:-native}"
mkdir -p "$build/src"
[ -d "$build/src/llama.cpp" ] || tar -xJf .device/llama.cpp.tar.xz -C "$build/src"
gpu=(-DGGML_CUDA=ON "-DCMAKE_CUDA_ARCHITECTURES=$arch")
[ "$arch" = cpu ] && gpu=(-DGGML_CUDA=OFF)
generator=(); command -v ninja >/dev/null && generator=(-G Ninja)
# Where the compiler finds no libstdc++.so (only its .a), each library would carry a static copy
# of libstdc++ and export it: two copies in one process, and llama.cpp's std::regex crashed in
# the vocabulary's load (issue 40, a one-card device list). Point the linker at the shared one.
# (The GPU machine's CXX is a GCC of its own under /opt/gcc that has only the archive.)
link=()
cxx="${CXX:-c++}"
if [ "$("$cxx" -print-file-name=libstdc++.so)" = libstdc++.so ]; then
  shared="$("$cxx" -print-file-name=libstdc++.so.6)"
  [ "$shared" = libstdc++.so.6 ] && shared="$(c++ -print-file-name=libstdc++.so.6)"
  mkdir -p "$build/libstdcxx"
  ln -sf "$shared" "$build/libstdcxx/libstdc++.so"
  link=("-DCMAKE_SHARED_LINKER_FLAGS=-L$build/libstdcxx" "-DCMAKE_EXE_LINKER_FLAGS=-L$build/libstdcxx")
fi
cmake -S "$build/src/llama.cpp" -B "$build/out" "${generator[@]}" "${link[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DBUILD_SHARED_LIBS=ON "${gpu[@]}" -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
  -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_CURL=OFF \
  -DLLAMA_BUILD_APP=OFF -DLLAMA_OPENSSL=OFF >"$build/configure.log"
# BUILD_TARGETS="llama" builds only what the Python side needs.
# shellcheck disable=SC2086
cmake --build "$build/out" --target ${BUILD_TARGETS:-llama llama-bench llama-server mtmd} -j "$(nproc)"
ls "$build/out/bin"
# The libraries must share the process's libstdc++, not carry one each.
if readelf -d "$build/out/bin/libllama.so" | grep -q "NEEDED.*libstdc++"; then
  echo "libllama.so links the shared libstdc++"
else
  echo "warning: libllama.so carries its own libstdc++ (no libstdc++.so found)" >&2
fi
