"""What a runner's log line means: the event kinds, and the pattern type each kind's table uses.

Each runner kind keeps its own table of `LogPattern`s in its folder (`llamacpp/log_lines.py`,
`ollama/log_lines.py`) and names it as its kind's `log_patterns()`; `logscan` reads a log with
the table of the kind that wrote it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import msgspec
from msgspec import field

Values = dict[str, object]

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


class LogEvent(msgspec.Struct, frozen=True):
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


class LogPattern(msgspec.Struct, frozen=True):
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


def pattern(name: str, kind: str, regex: str, flags: int = 0, **fixed: object) -> LogPattern:
    return LogPattern(name, kind, re.compile(regex, flags), fixed)
