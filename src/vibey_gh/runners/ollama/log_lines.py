"""Ollama's own log lines, eras A (<= 0.11.4), B (0.11.5-0.24) and C (0.30+) (runners.md §1,
§6). Ollama's log also holds the llama.cpp lines of the engine it runs: its table is these and
llama.cpp's (`kind.OllamaKind.log_patterns`)."""

from __future__ import annotations

import re

from ..log_patterns import LogPattern, Values
from ..log_patterns import pattern as _p


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
    values: Values = {"n_slots": slots}
    return values | ({"n_ctx_total": total} if total is not None else {})


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
