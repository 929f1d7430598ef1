from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.runners import log_lines
from vibey_gh.errors import BadInput
from vibey_gh.runners.llamacpp.log_lines import LLAMA_CPP_PATTERNS
from vibey_gh.runners.log_patterns import EVENT_KINDS, LogEvent
from vibey_gh.runners.logscan import LogTail, patterns_for, scan_lines
from vibey_gh.runners.ollama.log_lines import OLLAMA_PATTERNS

LOGS = {
    "embedded_2x1024.log": "embedded",
    "llama_server_b4747.log": "llama-server",
    "llama_server_current.log": "llama-server",
    # a CUDA build 11434 whose flash attention has no CUDA kernel (lines in that build's words)
    "llama_server_cuda_fa_cpu.log": "llama-server",
    "ollama_era_a.log": "ollama",
    "ollama_era_b.log": "ollama",
    "ollama_era_c.log": "ollama",
}


def events_of(name: str) -> list[LogEvent]:
    return scan_lines(log_lines(name), LOGS[name])


def kinds(events: list[LogEvent]) -> set[str]:
    return {e.kind for e in events}


def first(events: list[LogEvent], kind: str) -> LogEvent:
    return next(e for e in events if e.kind == kind)


def test_every_pattern_matches_a_line_of_a_recorded_log() -> None:
    matched: set[str] = set()
    for name, runner in LOGS.items():
        for line in log_lines(name):
            matched.update(p.name for p in patterns_for(runner) if p.event(line, 1))
    every = {p.name for p in LLAMA_CPP_PATTERNS + OLLAMA_PATTERNS}
    assert every - matched == set()
    assert {p.kind for p in LLAMA_CPP_PATTERNS + OLLAMA_PATTERNS} <= set(EVENT_KINDS)


def test_gpu_layers_and_a_flash_attention_fallback_are_read() -> None:
    events = events_of("llama_server_cuda_fa_cpu.log")
    assert first(events, "gpu_layers").values == {"gpu_layers": 29, "layers": 29}
    fallback = [e.values for e in events if e.kind == "attention_fallback"]
    assert fallback == [{"device": "CPU"}, {"disabled": True}]
    assert "attention_fallback" not in kinds(events_of("embedded_2x1024.log"))


def test_pattern_names_are_unique() -> None:
    names = [p.name for p in LLAMA_CPP_PATTERNS + OLLAMA_PATTERNS]
    assert len(names) == len(set(names))


def test_real_embedded_log_shows_two_slots_their_window_and_the_kv_cache() -> None:
    events = events_of("embedded_2x1024.log")
    assert {e.values["n_slots"] for e in events if e.kind == "slots"} == {2}
    assert {e.values["n_ctx"] for e in events if e.kind == "slot_window"} == {1024}
    kv = first(events, "kv_cache")
    assert kv.values == {"size_mib": 45.0, "cells": 1024, "layers": 30, "seqs": 2, "streams": 2}
    assert kv.text.endswith("V (f16):   22.50 MiB")
    refused = first(events, "request_error")
    assert "exceeds the available context size (1024 tokens)" in refused.values["message"]
    # a healthy run: nothing that breaks a bound
    bad = {"truncation", "context_shift", "device_failure", "oom", "eviction", "runner_died"}
    assert kinds(events) & bad == set()


def test_line_numbers_point_at_the_line() -> None:
    lines = log_lines("embedded_2x1024.log")
    for event in events_of("embedded_2x1024.log"):
        assert lines[event.line_no - 1] == event.text


def test_llama_server_b4747_wording() -> None:
    events = events_of("llama_server_b4747.log")
    assert first(events, "slot_window").values == {"n_ctx": 4096}
    assert first(events, "kv_cache").values == {"size_mib": 448.0}
    assert first(events, "truncation").values == {
        "n_ctx": 4096,
        "n_keep": 0,
        "n_left": 4096,
        "n_prompt_tokens": 2964,
    }
    assert first(events, "context_shift").values == {"n_keep": 0, "n_left": 4095, "n_discard": 2047}
    assert sum(e.kind == "truncation" for e in events) == 2  # the input cut and "truncated = 1"
    assert sum(e.kind == "decode_failure" for e in events) == 2


def test_llama_server_current_wording_and_failures() -> None:
    events = events_of("llama_server_current.log")
    assert first(events, "slots").values == {"n_slots": 4, "kv_unified": "true"}
    assert first(events, "kv_buffer").values == {"device": "CUDA0", "size_mib": 1920.0}
    metal = first(events, "device_failure")
    assert metal.values == {"buffer": 0, "status": 5}
    assert sum(e.kind == "device_failure" for e in events) == 4  # metal, error state, compute, CUDA
    assert sum(e.kind == "oom" for e in events) == 4
    assert first(events, "runner_died").values == {"cause": "assert"}
    assert first(events, "load").values["phase"] == "start"


def test_a_line_gives_at_most_one_event_of_a_kind_but_several_kinds() -> None:
    events = scan_lines(["0.05.000.000 E CUDA error: out of memory"], "llama-server")
    assert sorted(e.kind for e in events) == ["device_failure", "oom"]


def test_ollama_era_a_command_line_gives_slots_and_window() -> None:
    events = events_of("ollama_era_a.log")
    assert first(events, "slots").values == {"n_slots": 2, "n_ctx_total": 8192}
    assert first(events, "slot_window").values == {"n_ctx": 4096}
    started = [e for e in events if e.kind == "load" and e.values["phase"] == "done"]
    assert started[0].values["seconds"] == 2.01
    assert first(events, "truncation").text.endswith("new=4096")
    assert first(events, "eviction").values == {"cause": "expired"}


def test_ollama_era_b_load_request_and_events() -> None:
    events = events_of("ollama_era_b.log")
    assert first(events, "slots").values == {"n_slots": 2}
    assert first(events, "slot_window").values == {"n_ctx": 8192}
    assert first(events, "kv_cache").values == {"device": "CUDA0", "size_mib": 1843.2}
    assert kinds(events) >= {"context_shift", "reload", "eviction", "runner_died", "request_error"}
    assert [e.values["status"] for e in events if e.kind == "request_error"] == [400, 500]
    assert any(e.values.get("failed") for e in events if e.kind == "context_shift")


def test_ollama_era_c_mixes_its_lines_with_llama_server_lines() -> None:
    events = events_of("ollama_era_c.log")
    assert first(events, "slots").values == {"n_slots": 2, "n_ctx_total": 131072}
    assert {e.values["n_ctx"] for e in events if e.kind == "slot_window"} == {65536}
    assert first(events, "kv_cache").values["cells"] == 65536
    assert sum(e.kind == "truncation" for e in events) == 3
    assert kinds(events) >= {"device_failure", "oom", "runner_died", "eviction", "load"}
    evictions = [e.values["cause"] for e in events if e.kind == "eviction"]
    assert evictions == ["memory", "expired"]
    run_error = [e for e in events if e.kind == "request_error" and "message" in e.values]
    assert run_error[-1].values["message"].startswith("model runner has unexpectedly stopped")


def test_llama_cpp_logs_do_not_fire_ollama_patterns() -> None:
    lines = log_lines("llama_server_current.log")
    assert scan_lines(lines, "llama-server") == scan_lines(lines, "embedded")


def test_unknown_runner_is_bad_input() -> None:
    with pytest.raises(BadInput, match="embedded, llama-server, ollama"):
        scan_lines([], "vllm")


def test_tail_returns_only_new_events_and_waits_for_whole_lines(tmp_path: Path) -> None:
    log = tmp_path / "runner.log"
    tail = LogTail(log, "embedded")
    assert tail.new_events() == []  # no file yet
    log.write_text("srv    load_model: initializing, n_slots = 2, n_ctx_slot = 1024,")
    assert tail.new_events() == []  # the line is not finished
    with log.open("a") as handle:
        handle.write(" kv_unified = 'false'\nslot   load_model: id  0 | task -1 | new slot, n_ctx")
    events = tail.new_events()
    assert [(e.kind, e.line_no) for e in events] == [("slots", 1), ("slot_window", 1)]
    assert events[0].text.endswith("kv_unified = 'false'")
    with log.open("a") as handle:
        handle.write(" = 1024\n")
    again = tail.new_events()
    assert [(e.kind, e.line_no, e.values) for e in again] == [("slot_window", 2, {"n_ctx": 1024})]
    assert tail.new_events() == []


def test_tail_starts_over_when_the_log_is_replaced(tmp_path: Path) -> None:
    log = tmp_path / "runner.log"
    log.write_text("filler line one\nfiller line two\nsrv          init: model loaded\n")
    tail = LogTail(log, "llama-server")
    assert [e.line_no for e in tail.new_events()] == [3]
    log.write_text("srv          init: model loaded\n")
    assert [e.line_no for e in tail.new_events()] == [1]


def test_tail_tolerates_bytes_that_are_not_utf8(tmp_path: Path) -> None:
    log = tmp_path / "runner.log"
    log.write_bytes(b"\xff\xfe garbage\nsrv    send_error: task id = 3, error: boom \xe9\n")
    events = LogTail(log, "embedded").new_events()
    assert [e.kind for e in events] == ["request_error"]
    assert events[0].values["task"] == 3
