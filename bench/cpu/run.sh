#!/usr/bin/env bash
# The CPU comparison of issue 40: builds llama-bench and llama-server of the bindings' own llama.cpp
# (once, cached; bench/cpu/build.sh), writes the random-weight models (once, cached), then runs
# bench/cpu/compare.py. Writes OUT/cpu-vs-llamacpp.{txt,json} and OUT/servers-*.log.
#   bench/cpu/run.sh OUT [--shapes small medium] [--repeats 5] [--turns 20] [--steps engine serve]
# env: PYTHON (default: .venv/bin/python if present, else python3), GPTOSS_BENCH_CACHE.
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${1:?output folder}"
shift
python="${PYTHON:-python3}"
[ -z "${PYTHON:-}" ] && [ -x .venv/bin/python ] && python=.venv/bin/python
cache="${GPTOSS_BENCH_CACHE:-$HOME/.cache/gptoss-local-bench}"
bin=$(bash bench/cpu/build.sh "$python" | tail -1)
mkdir -p "$out"
PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" "$python" bench/cpu/compare.py --bin "$bin" \
  --out "$out" --models "$cache/models" "$@"
