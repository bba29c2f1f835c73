#!/usr/bin/env bash
# How long Ctrl+Q takes while the app prefills a long chat (it waits for the prefill's batch).
#   bench/quit_during_prefill.sh MODEL HOME [RUNS]
# HOME is a GPTOSS_LOCAL_HOME whose most recent saved chat is long (thousands of tokens). The
# script starts `gptoss-local chat` in tmux, opens a new chat, picks that chat in the sidebar
# (which starts its prefill), presses Ctrl+Q 0.5 s later and times the exit.
set -euo pipefail
model="${1:?model file}" home="${2:?GPTOSS_LOCAL_HOME with a long chat}" runs="${3:-3}"
python="${PYTHON:-python3}"
done_file=$(mktemp)
for _ in $(seq "$runs"); do
  session="quit-$$-$RANDOM"
  : >"$done_file"
  tmux new-session -d -s "$session" -x 120 -y 35 -e "GPTOSS_LOCAL_HOME=$home" \
    "$python -m gptoss_local chat --model-path $model --context 32768; date +%s.%N > $done_file"
  for _ in $(seq 300); do tmux capture-pane -p -t "$session" | grep -q llamacpp && break; sleep 0.2; done
  sleep 1
  tmux send-keys -t "$session" C-n; sleep 1.5
  tmux send-keys -t "$session" C-b; sleep 0.7
  tmux send-keys -t "$session" Enter; sleep 0.5
  start=$(date +%s.%N)
  tmux send-keys -t "$session" C-q
  for _ in $(seq 400); do [ -s "$done_file" ] && break; sleep 0.05; done
  python3 -c "print('Ctrl+Q 0.5 s into the prefill: back at the shell after %.2f s' % ($(cat "$done_file") - $start))"
  tmux kill-session -t "$session" 2>/dev/null || true
done
rm -f "$done_file"
