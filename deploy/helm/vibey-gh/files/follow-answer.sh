#!/bin/sh
# Started in the background by start-runner.sh, inside the runner container (so `allowed` sees
# the device, GPU and memory limit the runner has, and computes the runner's fingerprint): every
# $VIBEY_GH_FOLLOW_SECONDS it asks `vibey-gh slots allowed --json` for this node and
#   - writes the answer's gauges where node-exporter's textfile collector reads them
#     ($VIBEY_GH_TEXTFILE, when set);
#   - annotates this pod with the answer (when $VIBEY_GH_ANNOTATE is true);
#   - when the answer differs from the slots the runner serves with, waits until the runner is
#     idle (no open connection to its port, $VIBEY_GH_IDLE_CHECKS asks in a row), writes the new
#     answer and stops the runner ($VIBEY_GH_RUNNER_PID): the kubelet starts the runner
#     container again and its start script reads the new answer. A runner that serves a request is never stopped.
# An answer that rests on a failure (production not answering while the runner restarts, a
# config that does not parse) is logged and not followed: only a measured fact changes a runner.
set -u

answer_dir=${VIBEY_GH_ANSWER_DIR:?VIBEY_GH_ANSWER_DIR is not set}
runner_pid=${VIBEY_GH_RUNNER_PID:?VIBEY_GH_RUNNER_PID is not set}
port=${VIBEY_GH_RUNNER_PORT:-11434}
interval=${VIBEY_GH_FOLLOW_SECONDS:-300}
idle_checks=${VIBEY_GH_IDLE_CHECKS:-2}
idle_wait=${VIBEY_GH_IDLE_WAIT_SECONDS:-5}
passes=${VIBEY_GH_FOLLOW_PASSES:-0}
textfile=${VIBEY_GH_TEXTFILE:-}
annotate=${VIBEY_GH_ANNOTATE:-false}
proc_net=${VIBEY_GH_PROC_NET:-/proc/net}
node=${NODE_NAME:-this node}

say() {
    printf 'vibey-gh follow: %s\n' "$*" >&2
}

# Connections to the runner's port that are open now (TCP state 01, ESTABLISHED), from the
# kernel's tables: the pod shares one network namespace, so they are the runner's clients.
open_connections() {
    hex_port=$(printf '%04X' "$port")
    cat "$proc_net/tcp" "$proc_net/tcp6" 2>/dev/null | awk -v port="$hex_port" '
        NR > 0 && $4 == "01" { split($2, local, ":"); if (local[2] == port) open++ }
        END { print open + 0 }'
}

runner_idle() {
    checks=0
    while [ "$checks" -lt "$idle_checks" ]; do
        [ "$(open_connections)" -eq 0 ] || return 1
        checks=$((checks + 1))
        [ "$checks" -lt "$idle_checks" ] && sleep "$idle_wait"
    done
    return 0
}

serving_slots() {
    slots=
    [ -r "$answer_dir/num_parallel" ] && read -r slots <"$answer_dir/num_parallel"
    printf '%s\n' "${slots:-1}"
}

follow_once() {
    if [ -n "$textfile" ]; then
        asked=$(vibey-gh slots allowed --json --textfile "$textfile") || {
            say "vibey-gh slots allowed failed (its message is above); nothing changes"
            return
        }
    else
        asked=$(vibey-gh slots allowed --json) || {
            say "vibey-gh slots allowed failed (its message is above); nothing changes"
            return
        }
    fi
    parsed=$(printf '%s\n' "$asked" | python3 -c '
import json
import sys

answer = json.load(sys.stdin)
slots = answer.get("allowed")
if isinstance(slots, bool) or not isinstance(slots, int) or slots < 1:
    sys.exit("the answer has no positive integer under allowed")
print(slots)
print(answer.get("reason_code") or "unknown")
print(" ".join(str(answer.get("reason") or "no reason given").split()))
') || {
        say "the answer of vibey-gh slots allowed could not be read; nothing changes"
        return
    }
    slots=$(printf '%s\n' "$parsed" | sed -n 1p)
    code=$(printf '%s\n' "$parsed" | sed -n 2p)
    reason=$(printf '%s\n' "$parsed" | sed -n 3p)
    [ "$annotate" = true ] && annotate_pod "$slots" "$code"
    current=$(serving_slots)
    if [ "$slots" = "$current" ]; then
        return
    fi
    case $code in
    production_unreachable | config_error | unknown)
        say "allowed answers $slots ($reason); not followed: it rests on a failure, not on evidence"
        return
        ;;
    esac
    if ! runner_idle; then
        say "allowed answers $slots, the runner serves $current; it is busy: next pass"
        return
    fi
    printf '%s\n' "$slots" >"$answer_dir/num_parallel.tmp" &&
        mv "$answer_dir/num_parallel.tmp" "$answer_dir/num_parallel" &&
        printf '%s\n' "$reason" >"$answer_dir/reason" || {
        say "cannot write the answer into $answer_dir"
        return
    }
    say "node $node: allowed now answers $slots (was $current): $reason; restarting the idle runner"
    kill -TERM "$runner_pid" 2>/dev/null || say "the runner (pid $runner_pid) was already gone"
}

# The answer as annotations on this pod, through the API server with the pod's own token.
annotate_pod() {
    python3 - "$1" "$2" <<'PY' || say "warning: could not annotate the pod (see above)"
import json
import os
import ssl
import sys
import urllib.request

slots, code = sys.argv[1], sys.argv[2]
account = os.environ.get("VIBEY_GH_SERVICE_ACCOUNT_DIR", "/var/run/secrets/kubernetes.io/serviceaccount")
api = os.environ.get("VIBEY_GH_KUBE_API") or "https://{}:{}".format(
    os.environ["KUBERNETES_SERVICE_HOST"], os.environ["KUBERNETES_SERVICE_PORT"]
)
with open(os.path.join(account, "token"), encoding="utf-8") as handle:
    token = handle.read().strip()
url = "{}/api/v1/namespaces/{}/pods/{}".format(api, os.environ["POD_NAMESPACE"], os.environ["POD_NAME"])
body = {"metadata": {"annotations": {"vibey-gh/slots-allowed": slots, "vibey-gh/reason-code": code}}}
request = urllib.request.Request(
    url,
    data=json.dumps(body).encode("utf-8"),
    method="PATCH",
    headers={"Authorization": "Bearer " + token, "Content-Type": "application/merge-patch+json"},
)
context = None
if url.startswith("https://"):
    context = ssl.create_default_context(cafile=os.path.join(account, "ca.crt"))
try:
    with urllib.request.urlopen(request, timeout=10, context=context) as response:
        response.read()
except Exception as exc:  # one line in the log, never a stopped loop
    sys.exit("annotating {}: {}".format(url, exc))
PY
}

# The runner has just started with the answer its start-up check found: the first ask waits.
done_passes=0
while :; do
    sleep "$interval"
    follow_once
    done_passes=$((done_passes + 1))
    if [ "$passes" -gt 0 ] && [ "$done_passes" -ge "$passes" ]; then
        exit 0
    fi
done
