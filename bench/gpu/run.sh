#!/usr/bin/env bash
# The GPU benchmark on a CUDA machine with no network, in as few steps as possible.
#   bench/gpu/prepare.sh                      (once, on a machine with the package index)
#   bench/gpu/run.sh OUT build                build llama.cpp (CUDA_ARCH=90 etc., default native)
#   bench/gpu/run.sh OUT unpack               only unpack a carried build and the Python side
#   bench/gpu/run.sh OUT model [SHAPE]        write the synthetic model only (default 20b)
#   bench/gpu/run.sh OUT measure [ARGS...]    every 20b-shape measurement (ARGS go to run_all.py)
#   bench/gpu/run.sh OUT tui                  the chat TUI headless on the 20b shape (tui_check.py)
#   bench/gpu/run.sh OUT prefill [ARGS...]    first-reply TTFT with and without prefill (bench/prefill.py)
#   bench/gpu/run.sh OUT serve [ARGS...]      serve vs llama-server at 1/4/8 clients (bench/serve.py)
#   bench/gpu/run.sh OUT codex [ARGS...]      a recorded Codex session replayed (bench/codex_replay.py)
#   bench/gpu/run.sh OUT structured [ARGS...] decode with a JSON schema against without (20b shape,
#                                             gpt-oss's real vocabulary)
#   bench/gpu/run.sh OUT speculative [ARGS...] drafts: verify cost, always-right ceiling (20b shape)
#   bench/gpu/run.sh OUT eagle [ARGS...]      EAGLE-3 drafts: head cost, ceiling, experts in RAM (20b)
#   bench/gpu/run.sh OUT cli                  the installed command on one GPU: doctor, run, run with
#                                             drafts (the planner through NVML, the engine's devices)
#   bench/gpu/run.sh OUT 120b                 the 120b shape in a tmpfs, offload fitted to 24/32 GB
#   bench/gpu/run.sh OUT multi [ARGS...]      two GPUs (issue 29): ballast to 24+12 and 16+16 GiB
#                                             free, plan, load, decode 20b and 120b (tmpfs) with
#                                             the planner's split; per-card VRAM against the
#                                             estimate; llama-bench with the same split
# A build packed by an earlier call (tar of BUILD/out/bin, xz, split: .device/prebuilt.tar.xz.*)
# is unpacked instead of building again; same machine kind and driver only.
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${1:?output folder}"
what="${2:-measure}"
shift 2 || true
build="${GPTOSS_BUILD:-/tmp/gptoss-llama}"
site=/tmp/gptoss-site
mkdir -p "$out"
if [ ! -d "$site/llama_cpp" ]; then
  mkdir -p "$site"
  tar -xJf .device/llama_cpp_py.tar.xz -C "$site"
  "${PYTHON:-python3}" -m pip install -q --no-index --no-deps --no-compile --target "$site" .device/wheels/*.whl
fi
if [ ! -e "$build/out/bin/libllama.so" ] && compgen -G ".device/prebuilt.tar.xz.*" >/dev/null; then
  mkdir -p "$build/out"
  cat .device/prebuilt.tar.xz.* | xz -d | tar -x -C "$build/out"
fi
export PYTHONPATH="$site:$PWD" LLAMA_CPP_LIB_PATH="$build/out/bin" PYTHONUNBUFFERED=1
# The synthetic model of shape $1 (written once, in a process of its own); prints its path.
synthetic() {
  "${PYTHON:-python3}" -c "import sys; sys.path[:0] = ['bench/gpu', 'tests']; from pathlib import Path; import steps; print(steps.synthetic_model('$1', Path('/tmp/gptoss-models')))"
}
case "$what" in
  build)
    start=$(date +%s)
    bash bench/gpu/build.sh "$build" "${CUDA_ARCH:-native}" >"$out/build.log" 2>&1
    echo "build of llama.cpp ($(cat .device/VERSION), CUDA_ARCH=${CUDA_ARCH:-native}): $(( $(date +%s) - start )) s" | tee "$out/build-time.txt"
    ;;
  unpack) ;;
  model)  # in its own process, before any CUDA work
    synthetic "${1:-20b}"
    ;;
  measure)
    [ -e "$build/out/bin/libllama.so" ] || bash "$0" "$out" build
    "${PYTHON:-python3}" bench/gpu/run_all.py --bin "$build/out/bin" --out "$out" --shape 20b "$@"
    ;;
  tui)
    [ -e "$build/out/bin/libllama.so" ] || bash "$0" "$out" build
    model=$(synthetic 20b)
    GPTOSS_LOCAL_HOME="${GPTOSS_LOCAL_HOME:-/tmp/gptoss-tui-home}" "${PYTHON:-python3}" bench/gpu/tui_check.py "$model" --out "$out" "$@"
    ;;
  prefill)
    [ -e "$build/out/bin/libllama.so" ] || bash "$0" "$out" build
    model=$(synthetic 20b)
    "${PYTHON:-python3}" bench/prefill.py "$model" --out "$out/prefill.json" "$@"
    ;;
  serve)
    [ -e "$build/out/bin/llama-server" ] || BUILD_TARGETS="llama llama-server" bash "$0" "$out" build
    model=$(synthetic 20b)
    "${PYTHON:-python3}" bench/serve.py "$model" --gpu-layers -1 --llama-server "$build/out/bin/llama-server" \
      --out "$out/serve.txt" --log "$out/serve-servers.log" "$@"
    ;;
  codex)
    [ -e "$build/out/bin/libllama.so" ] || bash "$0" "$out" build
    model=$(synthetic 20b)
    "${PYTHON:-python3}" bench/codex_replay.py "$model" --gpu-layers -1 --out "$out/codex-replay.txt" "$@"
    ;;
  structured)
    [ -e "$build/out/bin/libllama.so" ] || bash "$0" "$out" build
    model=$(synthetic 20b-o200k)
    gpu="$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1) (device machine), $(nproc) cores"
    "${PYTHON:-python3}" bench/structured_decode.py "$model" --gpu-layers -1 --device "$gpu" \
      --out "$out/structured-decode.txt" "$@"
    ;;
  speculative)
    [ -e "$build/out/bin/libllama.so" ] || bash "$0" "$out" build
    model=$(synthetic 20b)
    gpu="$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1) (device machine), $(nproc) cores"
    "${PYTHON:-python3}" bench/speculative.py "$model" --gpu-layers -1 --device "$gpu" \
      --out "$out/speculative.txt" "$@"
    ;;
  eagle)
    [ -e "$build/out/bin/libllama.so" ] || bash "$0" "$out" build
    model=$(synthetic 20b)
    mapfile -t heads < <("${PYTHON:-python3}" bench/gpu/eagle_heads.py /tmp/gptoss-models 1000)
    gpu="$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1) (device machine), $(nproc) cores"
    "${PYTHON:-python3}" bench/eagle.py "$model" --head "${heads[0]}" --pinned-head "${heads[1]}" \
      --pin 1000 --gpu-layers -1 --experts-in-ram 24 --device "$gpu" --out "$out/eagle.txt" "$@"
    ;;
  120b)
    [ -e "$build/out/bin/libllama.so" ] || bash "$0" "$out" build
    mkdir -p /mnt/gptoss-tmpfs
    mountpoint -q /mnt/gptoss-tmpfs || mount -t tmpfs -o size=68g tmpfs /mnt/gptoss-tmpfs
    "${PYTHON:-python3}" bench/gpu/run_all.py --bin "$build/out/bin" --out "$out" --shape 120b \
      --models /mnt/gptoss-tmpfs --steps offload planner --budgets 24,32 "$@"
    ;;
  cli)
    [ -e "$build/out/bin/libllama.so" ] || bash "$0" "$out" build
    model=$(synthetic 20b)
    mapfile -t heads < <("${PYTHON:-python3}" bench/gpu/eagle_heads.py /tmp/gptoss-models 1000)
    export GPTOSS_LOCAL_HOME="${GPTOSS_LOCAL_HOME:-/tmp/gptoss-cli-home}"
    cli=("${PYTHON:-python3}" -m gptoss_local)
    prompt="def area(width, height): return width * height. Explain it."
    "${cli[@]}" doctor --json >"$out/cli-doctor.json"
    for how in "plain:" "ngram:--draft ngram" "eagle3:--draft-model ${heads[0]}"; do
      name=${how%%:*}; extra=${how#*:}
      # shellcheck disable=SC2086
      "${cli[@]}" run --model-path "$model" --json --temperature 0 --max-tokens 256 $extra "$prompt" \
        >"$out/cli-run-$name.jsonl" 2>"$out/cli-run-$name.err" || echo "run $name failed: $?"
      tail -1 "$out/cli-run-$name.jsonl"
    done
    ;;
  multi)
    [ -e "$build/out/bin/llama-bench" ] || bash "$0" "$out" build
    [ "$(nvidia-smi -L | wc -l)" -ge 2 ] || { echo "multi needs two GPUs" >&2; exit 2; }
    mkdir -p /mnt/gptoss-tmpfs
    mountpoint -q /mnt/gptoss-tmpfs || mount -t tmpfs -o size=80g tmpfs /mnt/gptoss-tmpfs
    CUDA_DEVICE_ORDER=PCI_BUS_ID "${PYTHON:-python3}" bench/gpu/multi_gpu.py --bin "$build/out/bin" \
      --out "$out" --models /mnt/gptoss-tmpfs "$@"
    ;;
  *) echo "unknown step $what" >&2; exit 2 ;;
esac
