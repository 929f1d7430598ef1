#!/bin/sh
# The runner container: Ollama with as many slots as allowed-at-start.sh found for this node.
# An answer that is missing or not a positive whole number means one slot.
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

export OLLAMA_NUM_PARALLEL="$slots"
say "starting ollama serve with OLLAMA_NUM_PARALLEL=$slots and OLLAMA_CONTEXT_LENGTH=${OLLAMA_CONTEXT_LENGTH:-unset}"
exec ollama serve
