"""llama.cpp's log lines: the server's (current and b4747 wording) and libllama's (runners.md
§10). Embedded and llama-server write them, and so does every engine Ollama runs."""

from __future__ import annotations

import re

from ..log_patterns import LogPattern
from ..log_patterns import pattern as _p

# llama.cpp: the server's lines (current and b4747 wording) and libllama's (runners.md §10).
LLAMA_CPP_PATTERNS: tuple[LogPattern, ...] = (
    _p("slots-init", "slots", r"initializing(?: slots)?, n_slots = (?P<n_slots>\d+)"),
    _p(
        "slots-auto",
        "slots",
        r"n_parallel is set to auto, using n_parallel = (?P<n_slots>\d+)"
        r" and kv_unified = (?P<kv_unified>\w+)",
    ),
    _p("slots-n_seq_max", "slots", r": n_seq_max\s+= (?P<n_slots>\d+)"),
    _p("window-init", "slot_window", r"initializing, n_slots = \d+, n_ctx_slot = (?P<n_ctx>\d+)"),
    _p("window-new-slot", "slot_window", r"new slot,? n_ctx(?:_slot)? = (?P<n_ctx>\d+)"),
    _p(
        "window-n_ctx_seq",
        "slot_window",
        r": n_ctx_(?:seq|per_seq)\s+= (?P<n_ctx>\d+)",
    ),
    _p(
        "kv-size",
        "kv_cache",
        r"llama_kv_cache: size = \s*(?P<size_mib>[\d.]+) MiB \(\s*(?P<cells>\d+) cells,"
        r"\s*(?P<layers>\d+) layers,\s*(?P<seqs>\d+)/(?P<streams>\d+) seqs\)",
    ),
    _p("kv-self-size", "kv_cache", r"KV self size\s+=\s+(?P<size_mib>[\d.]+) MiB"),
    _p("kv-buffer", "kv_buffer", r"(?P<device>\S+) KV buffer size =\s+(?P<size_mib>[\d.]+) MiB"),
    _p("gpu-layers", "gpu_layers", r"offloaded (?P<gpu_layers>\d+)/(?P<layers>\d+) layers to GPU"),
    _p(
        "attention-device",
        "attention_fallback",
        r"is assigned to device \S+ but (?:the )?Flash Attention(?: tensor)? is assigned to"
        r" device (?P<device>\S+)",
    ),
    _p(
        "attention-disabled",
        "attention_fallback",
        r"Flash Attention (?:not supported|was auto), set to disabled",
        disabled=True,
    ),
    _p("load-start", "load", r"loading model '(?P<model>[^']+)'", phase="start"),
    _p("load-done", "load", r"\bmodel loaded\s*$", phase="done"),
    _p(
        "truncation-input",
        "truncation",
        r"input truncated, n_ctx = (?P<n_ctx>\d+), n_keep = (?P<n_keep>\d+),"
        r" n_left = (?P<n_left>\d+), n_prompt_tokens = (?P<n_prompt_tokens>\d+)",
    ),
    _p("truncation-release", "truncation", r"stop processing: n_tokens = \d+, truncated = [1-9]"),
    _p(
        "context-shift",
        "context_shift",
        r"slot context shift, n_keep = (?P<n_keep>\d+), n_left = (?P<n_left>\d+),"
        r" n_discard = (?P<n_discard>\d+)",
    ),
    _p(
        "metal-command-buffer",
        "device_failure",
        r"command buffer (?P<buffer>\d+) failed with status (?P<status>\d+)",
    ),
    _p("backend-error-state", "device_failure", r"backend is in error state"),
    _p("compute-error", "device_failure", r"Compute error\."),
    _p("cuda-error", "device_failure", r"\bCUDA error\b"),
    _p(
        "oom",
        "oom",
        r"out of memory|out-of-memory|out of device memory|cudaMalloc failed|hipMalloc failed"
        r"|failed to allocate|allocation failed|not enough memory|insufficient memory"
        r"|vk_error_out_of_device_memory|erroroutofmemory",
        re.IGNORECASE,
    ),
    _p("ggml-assert", "runner_died", r"GGML_ASSERT\(", cause="assert"),
    _p("send-error", "request_error", r"task id = (?P<task>-?\d+), error: (?P<message>.+)$"),
    _p("decode-failed", "decode_failure", r"failed to decode, ret = (?P<ret>-?\d+)"),
    _p("decode-batch", "decode_failure", r"failed to decode the batch"),
    _p("kv-no-space", "decode_failure", r"failed to find free space in the KV cache"),
)
