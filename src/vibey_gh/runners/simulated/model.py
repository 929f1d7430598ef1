"""The simulated runner's model: a capacity curve and deterministic answers, no weights.

Pure functions, so the capacity model and the answers can be tested without a server.

Capacity: one slot decodes `tokens_per_second` (and reads a prompt 20 times as fast); with
`active` turns in flight the runner does min(active, knee)^scaling times one slot's work in
all, shared among them. Throughput in turns per hour therefore grows with N up to the knee and
is flat after it: linearly with scaling 1 (the default), sublinearly below 1 (0.5: √N), while
each turn's latency grows by N / min(N, knee)^scaling. A streamed answer's tokens come as its
work progresses: the first once the prompt is read and the first token written, each later one
after one more token's work, so time to first token and inter-token latency follow the same
sharing. Each turn's service time
is multiplied by a noise factor exp(noise × z), z standard normal: a per-turn multiplicative
spread whose median is 1. Each start of the runner draws its noise from a seed of its own
(`launch_seed`), so two steps of a sweep differ while a rerun of the same sweep repeats, and
may run at a drifted speed (`launch_speed`).

A turn's work is its prompt read plus its answer written: the prompt tokens the slot's cache
already holds (`cache`) cost 1/cache_speedup of a read one, the others and the answer's tokens
their full price. With cache_speedup 1 (the default) the cache is reported, not charged, and
the curve a sweep should find depends only on the capacity model, whatever the corpus shares.

Answers: text (or one tool call when tools are offered and the prompt says so) derived from a
hash of the prompt, so the same prompt gets the same answer at one slot (a calibration's pass
line left out: every pass asks the same question). With noise > 0, a
share of prompts (noise / 2, at most one half) get a slightly different answer of the same
structure whenever more than one turn is in flight: fidelity has exact changes to count but
no structural ones.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence

import msgspec

from ... import __version__
from ...interfaces.identity import RunnerInfo
from ..http.wire import JsonObject, Messages, ToolSpecs, field
from .settings import SimulatedModel

KIND = "simulated"

WORDS = (
    "slot", "window", "token", "prefix", "cache", "segment", "turn", "answer", "runner", "batch",
    "steady", "interval", "gain", "knee", "bound", "memory",
)  # fmt: skip
CHARS_PER_TOKEN = 4
MIN_OUTPUT_TOKENS = 12
OUTPUT_TOKEN_SPREAD = 52
PROMPT_SPEEDUP = 20.0  # prompt tokens are read this many times faster than answers are written


def simulated_version() -> str:
    return f"simulated {__version__}"


def model_name(model: SimulatedModel) -> str:
    # scaling 1 is left out: the name (and the fingerprint) of a linear model stay as they were
    scaling = f" scaling={model.scaling:g}" if model.scaling != 1.0 else ""
    # so are a cache that costs nothing and one that keeps no earlier prompt
    speedup = f" cache_speedup={model.cache_speedup:g}" if model.cache_speedup != 1.0 else ""
    kept = f" cache_tokens={model.cache_tokens}" if model.cache_tokens else ""
    return (
        f"simulated knee={model.knee} noise={model.noise:g} seed={model.seed} "
        f"tokens_per_second={model.tokens_per_second:g}{scaling}{speedup}{kept}"
    )


def launch_seed(seed: int, launch: int) -> int:
    """The noise seed of the runner's `launch`-th start (0 = the first, which keeps `seed`):
    a digest of both, so every step's noise is its own and a rerun draws it again."""
    if launch == 0:
        return seed
    digest = hashlib.sha256(f"{seed}/{launch}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def launch_speed(model: SimulatedModel, launch: int) -> float:
    """One slot's decode speed at the runner's `launch`-th start: `drift_per_step` compounded."""
    return model.tokens_per_second * (1.0 + model.drift_per_step) ** launch


def model_digest(model: SimulatedModel) -> str:
    """Stands for a model's digest: another capacity model is another device to calibrate."""
    return "sha256:" + hashlib.sha256(model_name(model).encode()).hexdigest()


def simulated_identity(model: SimulatedModel) -> RunnerInfo:
    return RunnerInfo(KIND, simulated_version(), model_name(model), model_digest(model), {})


class Answer(msgspec.Struct, frozen=True):
    text: str
    tool_name: str | None
    tool_arguments: JsonObject
    prompt_tokens: int
    output_tokens: int
    finish_reason: str


# the line a calibration adds to every turn so that no pass over its corpus meets the prompt
# cache an earlier pass left (`slots.measurement.stepping.passes`): the same question asked
# again, which gets the same answer here. An answer that changed with the pass would give the
# same turn another length, so another amount of work, every pass: a turn's latency at N
# slots could then not be held against its own latency at one slot.
PASS_LINE = re.compile(r"\[replay pass \d+\]")


def prompt_digest(messages: Messages, tools: ToolSpecs) -> bytes:
    """What the answer is derived from: the prompt, its pass line left out."""
    canonical = json.dumps([messages, tools or []], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(PASS_LINE.sub("", canonical).encode()).digest()


def prompt_tokens(messages: Messages, tools: ToolSpecs) -> int:
    """About four characters a token, as a tokenizer of English text gives."""
    size = len(json.dumps(messages, separators=(",", ":")))
    size += len(json.dumps(tools, separators=(",", ":"))) if tools else 0
    return max(1, size // CHARS_PER_TOKEN)


def changes_under_load(digest: bytes, noise: float) -> bool:
    """Whether this prompt's answer differs when other turns share the runner."""
    share = min(0.5, noise / 2.0)
    return int.from_bytes(digest[8:12], "big") / 2**32 < share


def answer_for(
    messages: Messages,
    tools: ToolSpecs,
    max_tokens: int,
    *,
    loaded: bool,
    noise: float,
) -> Answer:
    """The deterministic answer; `loaded`: other turns were in flight when this one started."""
    digest = prompt_digest(messages, tools)
    variant = loaded and changes_under_load(digest, noise)
    wanted = MIN_OUTPUT_TOKENS + digest[0] % OUTPUT_TOKEN_SPREAD
    output_tokens = min(wanted, max_tokens)
    finish = "length" if wanted > max_tokens else "stop"
    words = [WORDS[b % len(WORDS)] for b in digest[1 : 1 + min(output_tokens, 24)]]
    if variant:
        words[-1] = "differently"
    tool = _tool_to_call(tools, digest)
    if tool is not None and finish == "stop":
        name, properties = tool
        value = "b" if variant else "a"
        return Answer("", name, {p: value for p in properties}, 0, output_tokens, "tool_calls")
    return Answer(" ".join(words), None, {}, 0, output_tokens, finish)


def _tool_to_call(tools: ToolSpecs, digest: bytes) -> tuple[str, list[str]] | None:
    if not tools or digest[2] % 2:
        return None
    function = tools[digest[3] % len(tools)].get("function", {})
    name = field(function, "name")
    if not isinstance(name, str):
        return None
    parameters = field(function, "parameters")
    properties = parameters.get("properties", {}) if isinstance(parameters, dict) else {}
    return name, sorted(properties) if isinstance(properties, dict) else []


def read_seconds(
    prompt: int, *, tokens_per_second: float, cached: int = 0, cache_speedup: float = 1.0
) -> float:
    """Reading a prompt of which `cached` tokens the slot's cache held, noise left out."""
    cached = min(max(0, cached), prompt)
    tokens = prompt - cached + cached / cache_speedup
    return tokens / (tokens_per_second * PROMPT_SPEEDUP)


def work_seconds(
    prompt: int,
    output: int,
    *,
    tokens_per_second: float,
    noise_z: float,
    noise: float,
    cached: int = 0,
    cache_speedup: float = 1.0,
) -> float:
    """How long one turn would take alone on the runner."""
    read = read_seconds(
        prompt, tokens_per_second=tokens_per_second, cached=cached, cache_speedup=cache_speedup
    )
    return (output / tokens_per_second + read) * math.exp(noise * noise_z)


def token_work(
    prompt: int,
    output: int,
    *,
    tokens_per_second: float,
    noise_z: float,
    noise: float,
    cached: int = 0,
    cache_speedup: float = 1.0,
) -> list[float]:
    """`work_seconds` cut where a streamed answer's tokens come out: the prompt with the first
    token, then one token each; they add up to the whole turn's work."""
    factor = math.exp(noise * noise_z)
    per_token = factor / tokens_per_second
    read = read_seconds(
        prompt, tokens_per_second=tokens_per_second, cached=cached, cache_speedup=cache_speedup
    )
    return [read * factor + per_token] + [per_token] * max(0, output - 1)


def split_text(text: str, pieces: int) -> list[str]:
    """`text` cut into `pieces` consecutive parts (the last ones empty when it is shorter)."""
    pieces = max(1, pieces)
    size, extra = divmod(len(text), pieces)
    parts, at = [], 0
    for i in range(pieces):
        width = size + (1 if i < extra else 0)
        parts.append(text[at : at + width])
        at += width
    return parts


def answer_deltas(answer: Answer) -> list[JsonObject]:
    """One chat-completion `delta` per output token, as llama-server streams them: text in
    pieces, or a tool call whose first delta names it and whose later ones carry its
    arguments' JSON text in pieces (index 0 throughout)."""
    count = max(1, answer.output_tokens)
    if answer.tool_name is None:
        return [{"content": piece} for piece in split_text(answer.text, count)]
    arguments = json.dumps(answer.tool_arguments, sort_keys=True)
    head = {"index": 0, "id": "call_0", "type": "function"}
    deltas: list[JsonObject] = [
        {"tool_calls": [{**head, "function": {"name": answer.tool_name, "arguments": ""}}]}
    ]
    for piece in split_text(arguments, count - 1) if count > 1 else [arguments]:
        deltas.append({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]})
    return deltas


def sharing_rate(active: int, knee: int, scaling: float = 1.0) -> float:
    """How fast each of `active` turns progresses, as a share of one turn alone."""
    return min(active, knee) ** scaling / active if active > 0 else 1.0


class ProcessorSharing:
    """The runner's capacity shared among the turns in flight, as time passes.

    Each turn brings its work (seconds alone); while n turns are in flight each progresses at
    `sharing_rate(n, knee, scaling)`. A turn's wait is recomputed whenever another turn arrives
    or leaves, so the rate it gets is the rate of every moment, not of its arrival.
    """

    def __init__(
        self,
        knee: int,
        monotonic: Callable[[], float] = time.monotonic,
        scaling: float = 1.0,
        throttle_after_s: float | None = None,
        throttle_factor: float = 1.0,
    ) -> None:
        self.knee = knee
        self.scaling = scaling
        self.monotonic = monotonic
        # the throttle model: after this much busy time (any turn in flight) the runner does
        # `throttle_factor` of its work per second, as a machine that heats up and slows down
        self.throttle_after_s = throttle_after_s
        self.throttle_factor = throttle_factor
        self.busy_s = 0.0
        self.changed = threading.Condition()
        self.remaining: dict[int, float] = {}
        self.updated = monotonic()
        self.next_id = 0

    @property
    def throttled(self) -> bool:
        return self.throttle_after_s is not None and self.busy_s >= self.throttle_after_s

    def _rate(self) -> float:
        rate = sharing_rate(len(self.remaining), self.knee, self.scaling)
        return rate * self.throttle_factor if self.throttled else rate

    def _advance(self) -> None:
        now = self.monotonic()
        rate = self._rate()
        if self.remaining:
            self.busy_s += now - self.updated
        for key in self.remaining:
            self.remaining[key] -= (now - self.updated) * rate
        self.updated = now

    def serve(self, work: float) -> None:
        """Block for as long as `work` takes among the turns in flight."""
        for _ in self.serve_stages([work]):
            pass

    def serve_stages(self, stages: Sequence[float]) -> Iterator[int]:
        """Serve `stages` of work one after the other, yielding each one's index once it is
        done (outside the lock). The turn stays in flight between stages, so writing a token
        out costs it no share of the runner."""
        with self.changed:
            self._advance()
            key, self.next_id = self.next_id, self.next_id + 1
            self.remaining[key] = 0.0
        try:
            for index, work in enumerate(stages):
                with self.changed:
                    self._advance()
                    self.remaining[key] += work
                    self.changed.notify_all()
                    while True:
                        self._advance()
                        if self.remaining[key] <= 1e-6:
                            break
                        self.changed.wait(self.remaining[key] / self._rate())
                yield index
        finally:
            with self.changed:
                self._advance()
                del self.remaining[key]
                self.changed.notify_all()
