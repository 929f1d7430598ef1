#!/bin/sh
# One node's calibration, run by the Job pinned to that node. It waits for the node's own
# production runner (the Service only routes to the runner on this node), makes sure there is a
# corpus, logs what `vibey-gh slots allowed` answers before, runs `vibey-gh slots calibrate`
# with this script's arguments and the corpus, and logs the answer after. The exit status is
# the calibration's.
set -u

production=${VIBEY_GH_PRODUCTION_URL:?VIBEY_GH_PRODUCTION_URL is not set}
corpus=${VIBEY_GH_CORPUS:?VIBEY_GH_CORPUS is not set}
window=${VIBEY_GH_WINDOW:?VIBEY_GH_WINDOW is not set}
lanes=${VIBEY_GH_SLOTS_DIR:?VIBEY_GH_SLOTS_DIR is not set}/lanes
wait_seconds=${VIBEY_GH_WAIT_FOR_RUNNER_SECONDS:-3600}
interval=${VIBEY_GH_WAIT_INTERVAL_SECONDS:-10}
node=${NODE_NAME:-this node}

say() {
    printf 'vibey-gh: %s\n' "$*" >&2
}

waited=0
until OLLAMA_HOST=$production ollama list >/dev/null 2>&1; do
    if [ "$waited" -ge "$wait_seconds" ]; then
        say "the runner on $node ($production) did not answer within ${wait_seconds}s; is the runner pod on this node ready?"
        exit 1
    fi
    sleep "$interval"
    waited=$((waited + interval))
done

# One corpus for every node: built once from what the workers' lanes sent, then kept, so every
# node is measured on the same turns and an interrupted sweep resumes on the same corpus.
if [ ! -f "$corpus" ]; then
    say "no corpus at $corpus: building one from the lane records in $lanes"
    if ! vibey-gh slots corpus --from-lanes "$lanes" --window "$window" --out "$corpus"; then
        say "no corpus: put one at $corpus (vibey-gh slots corpus ... --out $corpus), or let" \
            "workers record lanes in $lanes first; until it is measured, $node runs one slot"
        exit 1
    fi
fi

say "node $node before calibration:"
vibey-gh slots allowed || say "vibey-gh slots allowed failed before calibration"

say "vibey-gh slots calibrate --corpus $corpus $*"
vibey-gh slots calibrate --corpus "$corpus" "$@"
status=$?

say "node $node after calibration (exit $status); the runner follows a new answer once it is idle:"
vibey-gh slots allowed || say "vibey-gh slots allowed failed after calibration"
exit "$status"
