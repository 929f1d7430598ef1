#!/usr/bin/env bash
# Create GuideLLM's own virtual environment, outside the project's dependencies.
#
#   bash bench/peer/setup_guidellm.sh            # venv in ~/.cache/vibey-gh-bench/guidellm-venv
#   PEER_VENV=/some/dir bash bench/peer/setup_guidellm.sh
#
# torch comes first and pinned: 2.13.0 has a CPU-only build, which is all a benchmark client
# needs (GuideLLM imports torch through transformers, it never runs a model).
set -euo pipefail

PY="${PY:-python3}"
PEER_VENV="${PEER_VENV:-$HOME/.cache/vibey-gh-bench/guidellm-venv}"
GUIDELLM_VERSION="${GUIDELLM_VERSION:-0.8.1}"

if [ ! -x "$PEER_VENV/bin/python" ]; then
  "$PY" -m venv "$PEER_VENV"
fi
"$PEER_VENV/bin/python" -m pip install -q --upgrade pip
"$PEER_VENV/bin/python" -m pip install -q "torch==2.13.0"
"$PEER_VENV/bin/python" -m pip install -q "guidellm==${GUIDELLM_VERSION}"
"$PEER_VENV/bin/guidellm" --version
echo "GuideLLM is ready in $PEER_VENV"
