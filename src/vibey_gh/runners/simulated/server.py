"""The simulated runner's server: `python -m vibey_gh.runners.simulated.server`.

Serves llama-server's API on 127.0.0.1 over the capacity model of `model` until
SIGTERM or SIGINT, or until the process that started it is gone. Started by
`simulated.SimulatedRunner`; see there for the endpoints and answers.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import NamedTuple, TypeVar, cast

from ...guarded import loads_json_bytes
from ...platforms.process.stopsignals import StopSignals, wait_until_stopped
from ..http.openai_wire import ChatChunk, ChatCompletion, ErrorReply
from ..http.wire import JsonObject, Messages, ToolSpecs, field
from ..llamacpp.api.wire import PropsReply, SlotReply
from ..process import LOOPBACK
from . import tokenizer
from .cache import SlotPromptCache, prompt_text
from .model import (
    KIND,
    Answer,
    ProcessorSharing,
    answer_deltas,
    answer_for,
    prompt_tokens,
    simulated_version,
    token_work,
)
from .replies import Spent, chunk_of, completion, error_reply, timings_of, usage_of
from .settings import MAX_CACHE_SPEEDUP, SimulatedModel

PARENT_CHECK_S = 1.0
SHUTDOWN_POLL_S = 0.05
_N = TypeVar("_N", int, float)

# The child process


class _Request(NamedTuple):
    messages: Messages
    tools: ToolSpecs
    max_tokens: int
    prompt: int
    text: str


class _Engine:
    """Slots, the noise generator and the counters /slots reports; shared by request threads."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.free = list(range(args.slots))
        self.processing = [False] * args.slots
        self.tasks = 0
        self.ready = threading.Condition()
        self.rng = random.Random(args.seed)
        self.capacity = ProcessorSharing(
            args.knee, scaling=args.scaling, throttle_after_s=args.throttle_after_s,
            throttle_factor=args.throttle_factor,
        )  # fmt: skip
        self.cache = SlotPromptCache(args.slots, args.cache_tokens)

    def acquire(self, request: _Request) -> tuple[int, int, float, int]:
        """A free slot's id (the one whose cache shares most of the prompt), how many turns
        are in flight with it, this turn's noise draw and the prompt tokens it reuses."""
        with self.ready:
            while not self.free:
                self.ready.wait()
            slot = self.cache.choose(self.free, request.text)
            self.free.remove(slot)
            self.processing[slot] = True
            self.tasks += 1
            active, noise_z = sum(self.processing), self.rng.gauss(0.0, 1.0)
        return slot, active, noise_z, self.cache.serve(slot, request.text, request.prompt)

    def release(self, slot: int) -> None:
        with self.ready:
            self.processing[slot] = False
            self.free.append(slot)
            self.ready.notify()

    def slots_json(self) -> list[SlotReply]:
        with self.ready:
            return [
                {"id": i, "n_ctx": self.args.window, "speculative": False, "is_processing": busy}
                for i, busy in enumerate(self.processing)
            ]

    def props(self) -> PropsReply:
        return {
            "default_generation_settings": {"n_ctx": self.args.window, "params": {}},
            "total_slots": self.args.slots,
            "model_alias": KIND,
            "model_path": KIND,
            "endpoint_slots": True,
            "build_info": simulated_version(),
        }

    def _check(self, request: JsonObject) -> _Request | tuple[int, ErrorReply]:
        """The request's parts, or the error answer (status, body)."""
        messages = request.get("messages")
        tools = request.get("tools")
        max_tokens = request.get("max_tokens", 768)
        if not isinstance(messages, list) or not messages:
            return 400, error_reply(400, "'messages' is required", "invalid_request_error")
        if tools is not None and not isinstance(tools, list):
            return 400, error_reply(400, "'tools' must be an array", "invalid_request_error")
        # what the client sent is replayed as it came: answers are a digest of it, so an item
        # that is no object counts as it is
        messages = cast("Messages", messages)
        tools = cast("ToolSpecs", tools)
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
            max_tokens = 768
        prompt = prompt_tokens(messages, tools)
        if prompt > self.args.window:
            refusal = (
                f"request ({prompt} tokens) exceeds the available context size "
                f"({self.args.window} tokens), try increasing it"
            )
            return 400, error_reply(400, refusal, "exceed_context_size_error")
        return _Request(messages, tools, max_tokens, prompt, prompt_text(messages, tools))

    def _work(
        self, request: _Request, arrived: float, loaded: bool, noise_z: float, cached: int
    ) -> tuple[Answer, list[float]]:
        """The answer and its work in stages (`token_work`), the first less the time this
        server already spent on the request: that time is part of its service."""
        messages, tools, max_tokens = request.messages, request.tools, request.max_tokens
        answer = answer_for(messages, tools, max_tokens, loaded=loaded, noise=self.args.noise)
        stages = token_work(
            request.prompt,
            answer.output_tokens,
            tokens_per_second=self.args.tokens_per_second,
            noise_z=noise_z,
            noise=self.args.noise,
            cached=cached,
            cache_speedup=self.args.cache_speedup,
        )
        stages[0] = max(0.0, stages[0] - (time.monotonic() - arrived))
        return answer, stages

    def complete(
        self, request: JsonObject, arrived: float
    ) -> tuple[int, ChatCompletion | ErrorReply]:
        """Answer one chat request that arrived at `arrived` (monotonic seconds)."""
        checked = self._check(request)
        if not isinstance(checked, _Request):
            return checked
        slot, active, noise_z, cached = self.acquire(checked)
        try:
            answer, stages = self._work(checked, arrived, active > 1, noise_z, cached)
            # the prompt with the first token, then the rest, timed apart as llama-server
            # times them
            stages = [stages[0], sum(stages[1:])]
            read_at = arrived
            for index in self.capacity.serve_stages(stages):
                read_at = time.monotonic() if index == 0 else read_at
            spent = Spent(read_at - arrived, time.monotonic() - read_at)
        finally:
            self.release(slot)
        return 200, completion(answer, checked.prompt, cached, slot, spent)

    def streamed(
        self, request: JsonObject, arrived: float
    ) -> tuple[int, ErrorReply] | Iterator[ChatChunk]:
        """The error answer, or the chunks of a streamed answer, each one due once the work
        before it is done (a generator: the slot is held while it runs)."""
        checked = self._check(request)
        if not isinstance(checked, _Request):
            return checked
        usage = bool(field(request.get("stream_options"), "include_usage"))
        return self._chunks(checked, arrived, usage)

    def _chunks(
        self, request: _Request, arrived: float, include_usage: bool
    ) -> Iterator[ChatChunk]:
        prompt = request.prompt
        slot, active, noise_z, cached = self.acquire(request)
        try:
            answer, stages = self._work(request, arrived, active > 1, noise_z, cached)
            deltas = answer_deltas(answer)
            read_at = written_at = arrived
            for index in self.capacity.serve_stages(stages):
                written_at = time.monotonic()
                read_at = written_at if index == 0 else read_at
                delta = deltas[index] if index < len(deltas) else {"content": ""}
                if index == 0:
                    delta = {"role": "assistant", **delta}
                yield chunk_of([{"index": 0, "delta": delta, "finish_reason": None}])
        finally:
            self.release(slot)
        # llama-server's last chunk carries its timings (cache_n among them): the usage chunk
        # when usage is asked for, else the finish reason's
        timings = timings_of(prompt, cached, answer, Spent(read_at - arrived, written_at - read_at))
        finish: list[JsonObject] = [
            {"index": 0, "delta": {}, "finish_reason": answer.finish_reason}
        ]
        if not include_usage:
            yield chunk_of(finish, timings=timings)
            return
        yield chunk_of(finish)
        yield chunk_of([], usage=usage_of(prompt, cached, answer), timings=timings)


def _handler(engine: _Engine) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # headers and body go out in two writes: with Nagle on, the body waits for the
        # client's delayed ACK (40 ms a turn), far more than a simulated turn takes
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: object) -> None:
            return  # one line per turn would drown the log the scanner reads

        def _send(self, status: int, body: object) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            if path in ("/health", "/v1/health"):
                self._send(200, {"status": "ok"})
            elif path == "/props":
                self._send(200, engine.props())
            elif path == "/slots":
                self._send(200, engine.slots_json())
            elif path in ("/models", "/v1/models"):
                meta = {"n_ctx": engine.args.window}
                self._send(200, {"object": "list", "data": [{"id": KIND, "meta": meta}]})
            else:
                self._send(404, error_reply(404, "File Not Found", "not_found_error"))

        def do_POST(self) -> None:
            arrived = time.monotonic()
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length > 0 else b""
            path = self.path.split("?", 1)[0]
            if path not in ("/v1/chat/completions", "/chat/completions", *tokenizer.ENDPOINTS):
                self._send(404, error_reply(404, "File Not Found", "not_found_error"))
                return
            try:
                request = loads_json_bytes(raw)
            except ValueError:
                self._send(
                    400, error_reply(400, "invalid JSON in the request", "invalid_request_error")
                )
                return
            if not isinstance(request, dict):
                self._send(
                    400, error_reply(400, "the request must be an object", "invalid_request_error")
                )
                return
            if path in tokenizer.ENDPOINTS:
                self._send(*tokenizer.answer(path, request))
            elif request.get("stream") is True:
                answer = engine.streamed(request, arrived)
                if isinstance(answer, tuple):
                    self._send(*answer)
                else:
                    self._stream(answer)
            else:
                self._send(*engine.complete(request, arrived))

        def _stream(self, chunks: Iterator[ChatChunk]) -> None:
            """Server-sent events in HTTP chunks, one flushed per answer chunk, as llama-server
            sends them; a client gone mid-answer ends it (and frees its slot)."""
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            try:
                for chunk in chunks:
                    self._writechunk_of(f"data: {json.dumps(chunk)}\n\n".encode())
                self._writechunk_of(b"data: [DONE]\n\n")
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
            except OSError:
                self.close_connection = True
            finally:
                close = getattr(chunks, "close", None)
                if close is not None:
                    close()

        def _writechunk_of(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

    return Handler


def _checked(
    convert: Callable[[str], _N], ok: Callable[[_N], bool], wanted: str
) -> Callable[[str], _N]:
    """An argument type: `convert`ed, and refused in one line unless `ok`."""

    def parse(text: str) -> _N:
        value = convert(text)
        if not ok(value):
            raise argparse.ArgumentTypeError(f"must be {wanted}, not {text}")
        return value

    return parse


_positive = _checked(int, lambda v: v >= 1, "at least 1")
_count = _checked(int, lambda v: v >= 0, "0 or more")
_non_negative = _checked(float, lambda v: v >= 0.0, "0 or more")  # NaN is refused too
_cache_speedup = _checked(
    float, lambda v: 1.0 <= v <= MAX_CACHE_SPEEDUP, f"between 1 and {MAX_CACHE_SPEEDUP:g}"
)
_scaling = _checked(float, lambda v: 0.0 <= v <= 1.0, "between 0 and 1")
_throttle_factor = _checked(float, lambda v: 0.0 < v <= 1.0, "above 0 and at most 1")


def parse_args(argv: list[str]) -> argparse.Namespace:
    defaults = SimulatedModel()
    parser = argparse.ArgumentParser(
        prog="python -m vibey_gh.runners.simulated.server",
        description="Serve llama-server's API over a capacity model on 127.0.0.1.",
    )
    parser.add_argument("--slots", type=_positive, required=True)
    parser.add_argument("--window", type=_positive, required=True, help="tokens per slot")
    parser.add_argument("--port", type=_positive, required=True)
    parser.add_argument("--knee", type=_positive, default=defaults.knee)
    parser.add_argument("--noise", type=_non_negative, default=defaults.noise)
    parser.add_argument("--seed", type=int, default=defaults.seed)
    parser.add_argument(
        "--tokens-per-second", type=_non_negative, default=defaults.tokens_per_second
    )
    parser.add_argument("--scaling", type=_scaling, default=defaults.scaling)
    parser.add_argument("--throttle-after-s", type=_non_negative, default=None)
    parser.add_argument("--throttle-factor", type=_throttle_factor, default=1.0)
    parser.add_argument("--cache-speedup", type=_cache_speedup, default=defaults.cache_speedup)
    parser.add_argument("--cache-tokens", type=_count, default=defaults.cache_tokens)
    parser.add_argument("--parent-pid", type=_positive, default=None)
    return parser.parse_args(argv)


def serve(args: argparse.Namespace) -> int:
    """Serve until SIGTERM/SIGINT or until the parent that started us is gone."""
    stop = StopSignals()
    stop.block()  # before the server's threads start, so none of them takes a stop signal
    parent = args.parent_pid or os.getppid()
    if args.tokens_per_second <= 0:
        print("error: --tokens-per-second must be above 0", file=sys.stderr, flush=True)
        return 2
    try:
        server = ThreadingHTTPServer((LOOPBACK, args.port), _handler(_Engine(args)))
    except OSError as exc:
        print(f"error: the simulated runner could not listen: {exc}", file=sys.stderr, flush=True)
        return 1
    server.daemon_threads = True
    # a sweep stops its runner after every step, and shutdown() waits for the serving loop's
    # next poll: at the default half second, that was most of a short step's stop
    thread = threading.Thread(
        target=server.serve_forever, args=(SHUTDOWN_POLL_S,), name="simulated-http", daemon=True
    )
    thread.start()
    print(
        f"simulated runner: {args.slots} slots x {args.window} tokens on "
        f"http://{LOOPBACK}:{args.port} (knee {args.knee}, noise {args.noise:g}, "
        f"seed {args.seed}, {args.tokens_per_second:g} tokens/s per slot, "
        f"scaling {args.scaling:g}, cached prompt tokens {args.cache_speedup:g}x cheaper, "
        f"{args.cache_tokens} tokens of earlier prompts kept)",
        file=sys.stderr,
        flush=True,
    )
    wait_until_stopped(stop, parent, "simulated runner", PARENT_CHECK_S)
    stop.close()
    server.shutdown()
    server.server_close()
    return 0


def main(argv: list[str] | None = None) -> int:
    return serve(parse_args(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    sys.exit(main())
