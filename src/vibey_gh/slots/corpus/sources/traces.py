"""Runs from recorded agent traces (the kv-cache-tester format): token counts, not text.

A trace file is one JSON object: `id`, `block_size` (tokens per KV block), optional
`hash_id_scope` ("local": block ids mean something only inside this trace; "global": across
traces) and `requests`, each `{"t", "type", "in", "out", "hash_ids", "think_time", ...}`.
A request's prompt is its blocks in order — each block id's own text (`block_text`), so
requests that share block ids share that prompt prefix and traces that share none share
nothing — then filler for the tokens past its last block. Its answer is capped at its `out`
tokens (times the run's `--fit scale` factor, below); its `think_time` is the turn's `think_s`.

Messages: the blocks the previous request already sent are reused as the same message objects
(system first, then user), and each request's last block and filler go in a final user
message, so a run's turns share memory the way they share a prefix.

Sub-agent entries (`"type": "subagent"` with requests of their own) become child runs
`<trace>.sa<k>` beside the parent, numbered in the order they appear: a calibration's workers
replay them concurrently with other runs, as an agent's sub-agents run beside it. Their
block ids share the trace's scope.

A trace file is one JSON document, read whole up to 256 MiB (the samples are under 1 MB).
Where the corpus holds whole runs, the size a trace would give it is estimated from its
requests' `in` counts before the document is parsed (`estimated_output`): a trace past the
cap is refused in seconds, naming it and the cap, never built to find out.

Depths reach 700k tokens, far past a local window. A turn fits when its prompt and its answer
cap fit the window together (`turns.fits_with_answer`). `--fit scale` multiplies every depth
of a run by one factor so its deepest turn, with its answer cap, fills the window (every block
keeps at least one token; a run too long even then loses the turns that do not fit, counted);
`--fit drop` keeps depths and leaves out the turns that do not fit. The choice and each run's
factor are recorded in the corpus's sources.

A scaled run's answers are capped at `out` times the same factor (at least one token), so each
turn keeps the recorded share of reading to writing — the mix that decides how a runner's
slots share its work — and a turn scaled to the window's edge is not asked for an answer the
recorded one outgrew by the factor (see docs/decision.md).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
from msgspec.structs import replace

from ....errors import BadInput, MalformedJson
from ....guarded import InputProblem, loads_json, read_regular_bytes
from ....interfaces import json_fields
from ..turns import PoolRun, RecordedRuns, Turn, answer_room, depth_estimate
from .block_text import UNIT, block_text
from .json_lines import input_files
from .session_builder import safe_name
from .think_time import believable, untrue, untrue_note

FIT_MODES = ("scale", "drop")
TRACE_SIZE_LIMIT = 256 << 20
_FIT_ATTEMPTS = 6


class TraceRequest(msgspec.Struct, frozen=True):
    index: int
    tokens_in: int
    tokens_out: int
    hash_ids: tuple[int, ...]
    think_s: float | None


@dataclass
class TraceThread:
    """One run's requests: the trace's own, or one sub-agent's."""

    run_id: str
    requests: list[TraceRequest] = field(default_factory=list)


def trace_files(paths: Sequence[Path]) -> list[Path]:
    """Each path as given, or a folder's `*.json` files in name order."""
    return input_files(paths, ".json", "trace", all_levels=False)


def runs_from_traces(
    paths: Sequence[Path],
    *,
    window: int,
    fit: str,
    answer_cap: int = 0,
    size_cap: int | None = None,
) -> RecordedRuns:
    """Every trace's runs, fitted into `window` with room for answers of `answer_cap` tokens
    (0: none reserved). A trace whose runs, drawn whole, would pass `size_cap` characters of
    corpus is refused before it is parsed (None: not checked)."""
    if fit not in FIT_MODES:
        raise BadInput(f"--fit must be one of {', '.join(FIT_MODES)}, not {fit!r}")
    runs: list[PoolRun] = []
    sources: list[dict[str, object]] = []
    notes: list[str] = []
    left_out: list[dict[str, str]] = []
    for path in trace_files(paths):
        data, digest = _read(path, window, fit, answer_cap, size_cap)
        try:
            trace_id, block_size, scope, threads = _parse(data, path)
        except MalformedJson as exc:
            raise BadInput(f"{path}: {exc}") from None
        models = _models(data)
        run_facts = []
        untrue_count = sum(untrue(r.think_s) for thread in threads for r in thread.requests)
        notes += untrue_note(untrue_count, f"trace {trace_id}")
        for thread in threads:
            run, facts = _build_run(thread, scope, block_size, window, fit, answer_cap)
            run_facts.append(facts)
            if run is None:
                why = (
                    "no turn fits the window with its answer"
                    if thread.requests
                    else "the sub-agent made no request"
                )
                notes.append(f"trace {trace_id}: run {thread.run_id}: {why}")
                left_out.append({"run": thread.run_id, "why": why})
            else:
                runs.append(run)
                if facts["dropped_turns"]:
                    notes.append(
                        f"trace {trace_id}: run {thread.run_id} left out "
                        f"{facts['dropped_turns']} turn(s) that do not fit the window with "
                        "their answer"
                    )
        sources.append(
            {
                "source": "trace",
                "id": trace_id,
                "file": path.name,
                "sha256": digest,
                "fit": fit,
                # answers capped at out × the run's factor (1.0 unscaled), since this field
                "out_scaled": True,
                "subagents": len(threads) - 1,
                "runs": run_facts,
                **({"models": models} if models else {}),
            }
        )
    return RecordedRuns(runs, sources, notes, left_out)


def _read(
    path: Path, window: int, fit: str, answer_cap: int, size_cap: int | None
) -> tuple[Any, str]:
    try:
        raw = read_regular_bytes(path, limit=TRACE_SIZE_LIMIT)
        if size_cap is not None:
            estimate = estimated_output(raw, window, fit, answer_cap)
            if estimate > size_cap:
                raise BadInput(
                    f"{path}: its runs would put ~{estimate >> 20} MiB of turns in a corpus of "
                    f"whole runs (by its requests' 'in' counts), more than the "
                    f"{size_cap >> 20} MiB a corpus file may hold: draw --shape segments, or "
                    "fit it into a smaller --window"
                )
        return loads_json(raw.decode("utf-8")), hashlib.sha256(raw).hexdigest()
    except UnicodeDecodeError:
        raise BadInput(f"{path}: not UTF-8 text") from None
    except InputProblem as problem:
        raise BadInput(f"{path} {problem}") from None


# A request's prompt size as the document spells it; a key of that name inside a string would
# have its quotes escaped, so only the requests' own fields match.
_TOKENS_IN = re.compile(rb'(?<!\\)"in"\s*:\s*(\d{1,12})')


def estimated_output(raw: bytes, window: int, fit: str, answer_cap: int) -> int:
    """Characters of turns a trace gives a corpus of whole runs, from its `in` counts alone:
    three characters a token (the stand-in text's rate), scaled or dropped as `fit` would.
    Sub-agents' requests count with the trace's: all its runs may be drawn."""
    counts = [int(match) for match in _TOKENS_IN.findall(raw)]
    if not counts:
        return 0
    if fit == "drop":
        depths = [tokens for tokens in counts if tokens + answer_cap <= window]
    else:
        factor = min(1.0, window / (max(counts) + answer_cap))
        depths = [round(tokens * factor) for tokens in counts]
    return UNIT * sum(depths)


def _models(data: object) -> list[str]:
    """The models the trace says its requests went to (its `models` list), plain names only."""
    listed = data.get("models") if isinstance(data, dict) else None
    names = listed if isinstance(listed, list) else []
    return sorted({name for name in names if isinstance(name, str) and safe_name(name) == name})


def _parse(data: object, path: Path) -> tuple[str, int, str, list[TraceThread]]:
    if not isinstance(data, dict):
        raise MalformedJson("a trace must be a JSON object")
    trace_id = json_fields.text(data, "id", path.stem)
    # The id names runs, turns and lines of output: nothing but a plain name passes.
    if safe_name(trace_id) != trace_id:
        raise MalformedJson("expected 1 to 48 letters, digits, '.', '_', ':' or '-'", ("id",))
    block_size = json_fields.integer(data, "block_size")
    if block_size < 1:
        raise MalformedJson("expected a whole number of tokens >= 1", ("block_size",))
    scope = trace_id if json_fields.text(data, "hash_id_scope", "local") != "global" else ""
    threads = [TraceThread(trace_id)]
    _collect(data, trace_id, block_size, threads[0], threads)
    if not threads[0].requests and len(threads) == 1:
        raise MalformedJson("the trace has no request", ("requests",))
    return trace_id, block_size, scope, threads


def _collect(
    holder: dict[str, object],
    trace_id: str,
    block_size: int,
    thread: TraceThread,
    threads: list[TraceThread],
) -> None:
    """The requests of `holder` into `thread`; each sub-agent entry into a thread of its own."""
    # A trace must list requests; a sub-agent entry without any is replayed as nothing.
    required = json_fields.REQUIRED if holder.get("type") != "subagent" else None
    for position, entry in enumerate(json_fields.items(holder, "requests", required)):
        with json_fields.within("requests", position):
            if not isinstance(entry, dict):
                raise MalformedJson("a request must be a JSON object")
            _non_negative(entry, "t")
            if json_fields.text(entry, "type", "n") == "subagent":
                child = TraceThread(f"{trace_id}.sa{len(threads)}")
                threads.append(child)
                _collect(entry, trace_id, block_size, child, threads)
                continue
            thread.requests.append(_request(entry, len(thread.requests), block_size))


def _request(entry: dict[str, object], index: int, block_size: int) -> TraceRequest:
    tokens_in = json_fields.integer(entry, "in")
    if tokens_in < 1:
        raise MalformedJson("expected a whole number of tokens >= 1", ("in",))
    tokens_out = json_fields.integer(entry, "out", 0)
    if tokens_out < 0:
        raise MalformedJson("expected a whole number of tokens >= 0", ("out",))
    hash_ids = json_fields.whole_numbers(entry, "hash_ids")
    most = -(-tokens_in // block_size)
    if len(hash_ids) > most:
        raise MalformedJson(
            f"{len(hash_ids)} blocks of {block_size} tokens are more than 'in' "
            f"({tokens_in} tokens) allows ({most})",
            ("hash_ids",),
        )
    return TraceRequest(
        index, tokens_in, tokens_out, tuple(hash_ids), _non_negative(entry, "think_time")
    )


def _non_negative(entry: dict[str, object], key: str) -> float | None:
    value: float | None = json_fields.number(entry, key, None)
    if value is not None and value < 0:
        raise MalformedJson("expected a number of seconds >= 0", (key,))
    return value


def _build_run(
    thread: TraceThread, scope: str, block_size: int, window: int, fit: str, answer_cap: int
) -> tuple[PoolRun | None, dict[str, object]]:
    """The run at the factor that fits it (1.0 for `drop`), and what was done to it."""
    facts: dict[str, object] = {"run": thread.run_id, "requests": len(thread.requests)}
    if not thread.requests:
        return None, {**facts, "factor": 1.0, "turns": 0, "dropped_turns": 0}
    skipped = 0

    def need(request: TraceRequest) -> int:
        return request.tokens_in + answer_room(max(1, request.tokens_out), answer_cap)

    if fit == "drop":
        # A turn's estimate is at least its tokens: what does not fit is never built.
        inside = [request for request in thread.requests if need(request) <= window]
        skipped = len(thread.requests) - len(inside)
        thread = TraceThread(thread.run_id, inside)
    deepest_in = max((need(request) for request in thread.requests), default=window)
    factor = 1.0 if fit == "drop" else min(1.0, window / deepest_in)
    turns = _turns(thread, scope, block_size, factor) if thread.requests else []
    for _ in range(_FIT_ATTEMPTS if turns else 0):
        deepest = max(
            turn.depth_estimate + answer_room(turn.max_tokens, answer_cap) for turn in turns
        )
        if fit == "drop" or deepest <= window or factor * block_size < 1:
            break
        # Message framing adds to the estimate: shrink by what overflowed, a little more, and
        # at least to the next whole number of tokens a block (block lengths are whole words).
        block_tokens = round(block_size * factor)
        factor *= window / deepest * 0.999
        if round(block_size * factor) == block_tokens:
            factor = (block_tokens - 0.5) / block_size - 1e-9
        turns = _turns(thread, scope, block_size, factor)
    kept = _inside(turns, window, answer_cap)
    dropped = skipped + len(turns) - len(kept)
    facts.update(factor=round(factor, 6), turns=len(kept), dropped_turns=dropped)
    if not kept:
        return None, facts
    return PoolRun(thread.run_id, "trace", tuple(kept)), facts


def _inside(turns: list[Turn], window: int, answer_cap: int) -> list[Turn]:
    """The turns that fit the window with their answer, renumbered so a run's turns stay
    consecutive."""
    kept = [turn for turn in turns if turn.fits(window, answer_cap)]
    return [
        replace(turn, id=f"{turn.run_id}#{index}", index=index) for index, turn in enumerate(kept)
    ]


def _turns(thread: TraceThread, scope: str, block_size: int, factor: float) -> list[Turn]:
    block_tokens = max(1, round(block_size * factor))
    chunks: list[tuple[tuple[int, ...], dict[str, object]]] = []
    turns: list[Turn] = []
    for request in thread.requests:
        ids = request.hash_ids
        # Every block but the last sits in the shared messages; the last (perhaps partial)
        # and the tokens past it go in this request's own final message.
        shared = ids[:-1] if ids else ()
        kept_chunks = 0
        position = 0
        for chunk_ids, _message in chunks:
            if shared[position : position + len(chunk_ids)] != chunk_ids:
                break
            kept_chunks += 1
            position += len(chunk_ids)
        del chunks[kept_chunks:]
        if position < len(shared):
            new_ids = shared[position:]
            role = "system" if position == 0 else "user"
            text = "".join(block_text(scope, block, block_tokens) for block in new_ids)
            chunks.append((new_ids, {"role": role, "content": text}))
        last_block_tokens = min(block_size, request.tokens_in - block_size * len(shared))
        own = ""
        if ids:
            own = block_text(scope, ids[-1], max(1, round(last_block_tokens * factor)))
        past_blocks = request.tokens_in - block_size * len(ids)
        if past_blocks > 0:
            label = f"{thread.run_id}\0{request.index}"
            own += block_text(scope, label, max(1, round(past_blocks * factor)))
        messages = [message for _ids, message in chunks]
        messages.append({"role": "user", "content": own})
        turns.append(
            Turn(
                id=f"{thread.run_id}#{request.index}",
                run_id=thread.run_id,
                index=request.index,
                messages=messages,
                tools=[],
                depth_estimate=depth_estimate(messages, []),
                think_s=believable(request.think_s),  # a day or more: unknown
                max_tokens=max(1, round(request.tokens_out * factor)),
            )
        )
    return turns
