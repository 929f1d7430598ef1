#!/bin/sh
# Runs in the runner pod before Ollama starts: asks `vibey-gh slots allowed` how many slots this
# node may serve and leaves the answer in $VIBEY_GH_ANSWER_DIR for start-runner.sh.
# Every failure on the way means one slot, said in this container's log: one is always safe,
# and a runner that does not start serves nobody.
set -u

answer_dir=${VIBEY_GH_ANSWER_DIR:?VIBEY_GH_ANSWER_DIR is not set}
startup_host=127.0.0.1:${VIBEY_GH_STARTUP_PORT:-11436}
startup_wait=${VIBEY_GH_STARTUP_WAIT_SECONDS:-120}
model=${VIBEY_GH_MODEL:-}
pull_model=${VIBEY_GH_PULL_MODEL:-false}
node=${NODE_NAME:-this node}

say() {
    printf 'vibey-gh: %s\n' "$*" >&2
}

write_answer() {
    # the file is renamed into place so the runner never reads half an answer
    printf '%s\n' "$1" >"$answer_dir/num_parallel.tmp" &&
        mv "$answer_dir/num_parallel.tmp" "$answer_dir/num_parallel" &&
        printf '%s\n' "$2" >"$answer_dir/reason" || {
        say "cannot write the answer into $answer_dir"
        exit 1
    }
    say "node $node starts its runner with $1 slot(s): $2"
    exit 0
}

# A private server over the node's model store, so that `allowed` reads the runner version and
# the model digest that production is about to have. OLLAMA_NOPRUNE: a second server on a shared
# store must not prune blobs that another one is writing.
OLLAMA_HOST=$startup_host OLLAMA_NOPRUNE=1 ollama serve >"$answer_dir/startup-runner.log" 2>&1 &
server_pid=$!
trap 'kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null' EXIT

waited=0
until OLLAMA_HOST=$startup_host ollama list >/dev/null 2>&1; do
    if ! kill -0 "$server_pid" 2>/dev/null || [ "$waited" -ge "$startup_wait" ]; then
        say "the start-up runner on $startup_host did not answer; its log:"
        cat "$answer_dir/startup-runner.log" >&2
        write_answer 1 "the start-up runner did not answer, so this node was not asked"
    fi
    sleep 1
    waited=$((waited + 1))
done

if [ "$pull_model" = true ] && [ -n "$model" ]; then
    say "pulling $model into the node's model store"
    OLLAMA_HOST=$startup_host ollama pull "$model" >&2 || say "warning: pulling $model failed"
fi

if ! vibey-gh slots allowed --json >"$answer_dir/allowed.json"; then
    write_answer 1 "vibey-gh slots allowed failed (its message is above)"
fi

if ! parsed=$(python3 - "$answer_dir/allowed.json" <<'PY'
import json
import sys

try:
    with open(sys.argv[1], encoding="utf-8") as handle:
        answer = json.load(handle)
except (OSError, ValueError) as exc:
    sys.exit(f"the answer is not JSON ({exc})")
slots = answer.get("allowed") if isinstance(answer, dict) else None
if isinstance(slots, bool) or not isinstance(slots, int) or slots < 1:
    sys.exit(f"the answer has no positive integer under 'allowed' ({slots!r})")
reason = " ".join(str(answer.get("reason") or "no reason given").split())
print(slots)
print(reason)
PY
); then
    write_answer 1 "the answer of vibey-gh slots allowed could not be read"
fi

slots=$(printf '%s\n' "$parsed" | sed -n 1p)
reason=$(printf '%s\n' "$parsed" | sed -n 2p)
write_answer "$slots" "$reason"
