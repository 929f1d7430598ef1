"""Read a runner's log for what its API does not say: slots, windows, KV cache, loads, reloads,
truncations, context shifts, device failures, out-of-memory, evictions and deaths.

One pattern table per runner family and era (reference: runners.md §1, §3, §6, §10). A log is
scanned with every era of its runner at once: the eras' strings do not collide, and a
calibration runner's era is whatever binary the operator has. Embedded and llama-server share
the llama.cpp table; Ollama adds its own, because every Ollama era copies the llama.cpp lines of
the engine it runs into the same log.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from dataclasses import field
from pathlib import Path
from typing import Any

from ..errors import BadInput
from ..interfaces.values import frozen_value

Values = dict[str, Any]

EVENT_KINDS = (
    "slots",  # number of parallel sequences
    "slot_window",  # context tokens per slot
    "kv_cache",  # KV cache size
    "kv_buffer",  # one device's KV buffer
    "gpu_layers",  # how many of the model's layers were put on a GPU
    "attention_fallback",  # flash attention not on the layers' device (runs on the CPU) or off
    "load",  # a model load started or finished
    "reload",  # a loaded model was loaded again
    "truncation",  # a prompt was cut to fit
    "context_shift",  # tokens were discarded to keep generating
    "device_failure",  # GPU command buffer / backend error / compute error
    "oom",  # out of memory, host or device
    "eviction",  # a model was unloaded to make room or expired
    "runner_died",  # the engine process ended or aborted
    "request_error",  # one request failed inside the runner
    "decode_failure",  # a batch could not be decoded
)


@frozen_value
class LogEvent:
    kind: str
    line_no: int  # 1-based line number in the log
    text: str
    values: Values = field(default_factory=dict)


def _number(text: str) -> int | float | str:
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    if re.fullmatch(r"-?\d+\.\d*", text):
        return float(text)
    return text


def _groups(match: re.Match[str]) -> Values:
    return {k: _number(v) for k, v in match.groupdict().items() if v is not None}


@frozen_value
class LogPattern:
    """One line shape. `values` turns the match into the event's values (named groups by
    default); `fixed` adds constant values such as the era or the cause."""

    name: str
    kind: str
    regex: re.Pattern[str]
    fixed: Values = field(default_factory=dict)
    values: Callable[[re.Match[str]], Values | None] = _groups

    def event(self, line: str, line_no: int) -> LogEvent | None:
        match = self.regex.search(line)
        if match is None:
            return None
        values = self.values(match)
        if values is None:
            return None
        return LogEvent(self.kind, line_no, line, {**self.fixed, **values})


def _p(name: str, kind: str, regex: str, flags: int = 0, **fixed: Any) -> LogPattern:
    return LogPattern(name, kind, re.compile(regex, flags), fixed)


def _flag_int(line: str, *flags: str) -> int | None:
    for flag in flags:
        found = re.search(rf"(?:^|\s){re.escape(flag)}[ =](\d+)", line)
        if found:
            return int(found.group(1))
    return None


def _cmd_slots(match: re.Match[str]) -> Values | None:
    """N slots and the total context from a command line Ollama logged (eras A and C)."""
    line = match.string
    slots = _flag_int(line, "-np", "--parallel")
    total = _flag_int(line, "-c", "--ctx-size")
    if slots is None:
        return None
    return {"n_slots": slots} | ({"n_ctx_total": total} if total is not None else {})


def _cmd_window(match: re.Match[str]) -> Values | None:
    slots = _flag_int(match.string, "-np", "--parallel")
    total = _flag_int(match.string, "-c", "--ctx-size")
    if not slots or total is None:
        return None
    return {"n_ctx": total // slots}


def _load_request_window(match: re.Match[str]) -> Values | None:
    slots, total = int(match.group("slots")), int(match.group("kv"))
    return {"n_ctx": total // slots} if slots else None


_UNITS = {"B": 1 / (1 << 20), "KiB": 1 / 1024, "KB": 1 / 1024, "MiB": 1.0, "MB": 1.0}
_UNITS |= {"GiB": 1024.0, "GB": 1024.0, "TiB": 1 << 20, "TB": 1 << 20}


def _human_size(match: re.Match[str]) -> Values:
    size = float(match.group("size")) * _UNITS[match.group("unit")]
    return {"device": match.group("device"), "size_mib": round(size, 2)}


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

# Ollama's own lines, eras A (<= 0.11.4), B (0.11.5-0.24) and C (0.30+) (runners.md §1, §6).
OLLAMA_PATTERNS: tuple[LogPattern, ...] = (
    LogPattern(
        "ollama-cmd-slots",
        "slots",
        re.compile(r'msg="starting (?:llama server|llama-server)" cmd='),
        values=_cmd_slots,
    ),
    LogPattern(
        "ollama-cmd-window",
        "slot_window",
        re.compile(r'msg="starting (?:llama server|llama-server)" cmd='),
        values=_cmd_window,
    ),
    _p("ollama-load-request-slots", "slots", r"msg=load request=.*\bParallel:(?P<n_slots>\d+)"),
    LogPattern(
        "ollama-load-request-window",
        "slot_window",
        re.compile(r"msg=load request=.*\bParallel:(?P<slots>\d+).*\bKvSize:(?P<kv>\d+)"),
        values=_load_request_window,
    ),
    LogPattern(
        "ollama-kv-cache",
        "kv_cache",
        re.compile(
            r'msg="kv cache" device=(?P<device>\S+) size="(?P<size>[\d.]+) (?P<unit>[KMGT]?i?B)"'
        ),
        values=_human_size,
    ),
    _p(
        "ollama-starting",
        "load",
        r'msg="(?:starting llama server|starting runner|starting llama-server)"',
        phase="start",
    ),
    _p(
        "ollama-started",
        "load",
        r"(?:llama runner|llama-server) started in (?P<seconds>[\d.]+) seconds",
        phase="done",
    ),
    _p("ollama-reloading", "reload", r'msg="?reloading\b'),
    _p(
        "ollama-truncating",
        "truncation",
        r'msg="truncating (?:input prompt|input messages which exceed context length'
        r'|native chat messages which exceed context length)"',
    ),
    _p("ollama-shift", "context_shift", r'msg="context limit hit - shifting"'),
    _p("ollama-shift-failed", "context_shift", r"unable to shift context", failed=True),
    _p(
        "ollama-evict-room",
        "eviction",
        r"max runners achieved, unloading one to make room"
        r"|resetting model to expire immediately to make room"
        r"|evicting a model to make space"
        r"|predicted to exceed available memory, evicting"
        r"|evicting all other (?:loaded )?models",
        cause="memory",
    ),
    _p(
        "ollama-expire",
        "eviction",
        r"runner with zero duration has gone idle, expiring to unload"
        r"|timer expired, expiring to unload",
        cause="expired",
    ),
    _p("ollama-runtime-oom", "oom", r"runtime OOM detected"),
    _p(
        "ollama-runner-terminated",
        "runner_died",
        r"(?:llama-server|llama runner) (?:process has )?terminated"
        r"|model runner has unexpectedly stopped",
        cause="terminated",
    ),
    _p(
        "ollama-gin-error",
        "request_error",
        r'\[GIN\] .*?\|\s*(?P<status>[45]\d\d)\s*\|.*\|\s*(?P<method>[A-Z]+)\s+"(?P<path>[^"]+)"',
    ),
    _p(
        "ollama-run-error",
        "request_error",
        r'an error was encountered while running the model: (?P<message>[^"]+)',
    ),
)

PATTERNS_BY_RUNNER: dict[str, tuple[LogPattern, ...]] = {
    "embedded": LLAMA_CPP_PATTERNS,
    "llama-server": LLAMA_CPP_PATTERNS,
    "ollama": OLLAMA_PATTERNS + LLAMA_CPP_PATTERNS,
    "simulated": LLAMA_CPP_PATTERNS,
}


def patterns_for(runner_kind: str) -> tuple[LogPattern, ...]:
    try:
        return PATTERNS_BY_RUNNER[runner_kind]
    except KeyError:
        valid = ", ".join(PATTERNS_BY_RUNNER)
        raise BadInput(f"unknown runner {runner_kind!r}; valid runners: {valid}") from None


def scan_line(line: str, line_no: int, patterns: Iterable[LogPattern]) -> list[LogEvent]:
    """Events of one line: at most one per kind (the first pattern of that kind that matches)."""
    events: list[LogEvent] = []
    seen: set[str] = set()
    for pattern in patterns:
        if pattern.kind in seen:
            continue
        event = pattern.event(line, line_no)
        if event is not None:
            seen.add(pattern.kind)
            events.append(event)
    return events


def scan_lines(lines: Iterable[str], runner_kind: str, first_line_no: int = 1) -> list[LogEvent]:
    patterns = patterns_for(runner_kind)
    events: list[LogEvent] = []
    for offset, line in enumerate(lines):
        events.extend(scan_line(line.rstrip("\r\n"), first_line_no + offset, patterns))
    return events


class LogTail:
    """New events of a growing log since the last call; meant to be polled once a second.

    Keeps a byte offset and consumes only complete lines, so a line the runner is half-way
    through writing is read whole on the next call. A log that shrank (rotated or recreated) is
    read again from the start.
    """

    def __init__(self, path: Path, runner_kind: str) -> None:
        self.path = path
        self.runner_kind = runner_kind
        self._patterns = patterns_for(runner_kind)
        self._offset = 0
        self._line_no = 0

    def new_events(self) -> list[LogEvent]:
        try:
            size = os.stat(self.path).st_size
        except FileNotFoundError:
            return []
        if size < self._offset:
            self._offset, self._line_no = 0, 0
        if size == self._offset:
            return []
        with self.path.open("rb") as handle:
            handle.seek(self._offset)
            chunk = handle.read(size - self._offset)
        end = chunk.rfind(b"\n")
        if end < 0:
            return []
        complete = chunk[: end + 1]
        self._offset += len(complete)
        events: list[LogEvent] = []
        for raw in complete[:-1].split(b"\n"):
            self._line_no += 1
            line = raw.decode("utf-8", errors="replace").rstrip("\r")
            events.extend(scan_line(line, self._line_no, self._patterns))
        return events
