#!/bin/sh
# The runner container: Ollama with as many slots as allowed-at-start.sh found for this node.
# An answer that is missing or not a positive whole number means one slot. With
# $VIBEY_GH_FOLLOW_SECONDS set, follow-answer.sh runs beside it and stops this process (its pid
# stays the same through exec) when the node's answer changes and the runner is idle; the
# kubelet then starts this script again, which reads the new answer.
set -u

answer=${VIBEY_GH_ANSWER_DIR:?VIBEY_GH_ANSWER_DIR is not set}/num_parallel

say() {
    printf 'vibey-gh: %s\n' "$*" >&2
}

slots=
if [ -r "$answer" ]; then
    read -r slots <"$answer" || slots=
fi
case $slots in
'' | *[!0-9]* | 0*)
    say "no usable answer in $answer (${slots:-empty}): one slot"
    slots=1
    ;;
esac

if [ "${VIBEY_GH_FOLLOW_SECONDS:-0}" -gt 0 ] 2>/dev/null; then
    VIBEY_GH_RUNNER_PID=$$ /bin/sh "$(dirname "$0")/follow-answer.sh" &
    say "following this node's answer every ${VIBEY_GH_FOLLOW_SECONDS}s"
fi

export OLLAMA_NUM_PARALLEL="$slots"
say "starting ollama serve with OLLAMA_NUM_PARALLEL=$slots and OLLAMA_CONTEXT_LENGTH=${OLLAMA_CONTEXT_LENGTH:-unset}"
exec ollama serve
