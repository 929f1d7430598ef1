"""A streamed turn: send with streaming on, read the answer line by line, reassemble it.

Both chat APIs stream one JSON object per line (llama.cpp's OpenAI-compatible server as
server-sent events, `data: {...}`; Ollama as NDJSON). `post_streamed_turn` sends the request,
reads the lines as they arrive (each one bounded in size and read through `guarded`, since a
runner's reply is untrusted), hands every decoded object to the format's assembler (see
`StreamFormat`) and stamps when chunks carrying answer tokens arrived: the time their bytes
came off the connection, taken before they are parsed. The reassembled answer
becomes the same TurnResult an unstreamed answer gives, plus its token timing.

A runner that answers a streamed request with anything but a stream fails the turn with an
error naming it: figures labelled as streamed are never taken from an unstreamed answer.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import closing
from typing import Protocol

import httpx
import msgspec
from msgspec.structs import replace

from ...guarded import InputProblem, loads_json
from ...interfaces.slots_interface import ChatSettings, TurnResult
from ...interfaces.token_gaps import as_gaps, bucket_of
from .replies import UnusableReply, read_reply

CONNECT_TIMEOUT_S = 5.0
# One chunk is a token or a whole tool call; a line longer than this is not a runner talking.
MAX_LINE_BYTES = 1 << 20
# A whole answer: 768 tokens of chunks is well under a megabyte.
MAX_STREAM_BYTES = 64 << 20


def send_turn(
    client: httpx.Client, url: str, payload: Mapping[str, object], timeout: httpx.Timeout
) -> httpx.Response:
    """POST a turn on a connection of its own and return the response with its body still to
    read (close it after).

    A kept-alive connection may already have been closed by the runner (llama.cpp's HTTP
    server closes one after streaming, or after a number of requests) when the pool hands it
    out again: the turn would fail before the runner saw it. A fresh connection per turn costs
    a loopback connect, far below a turn's time, and leaves no such race; a turn that fails is
    then the runner's failure, and a connection the tool cancels to stop a step stays cancelled.
    """
    request = client.build_request(
        "POST", url, json=payload, timeout=timeout, headers={"Connection": "close"}
    )
    return client.send(request, stream=True)


class StreamProblem(ValueError):
    """The stream is unusable: what is wrong with it."""


class StreamDeadline(StreamProblem):
    """The answer outran its timeout while bytes still came: a timeout like any other, so a
    turn fails with the same words whichever of the two clocks ran out first."""


class ChunkAssembler(Protocol):
    """Reassembles one format's chunks into the answer an unstreamed request gives."""

    def take(self, chunk: object) -> bool:
        """Fold one decoded line in; True when it carried answer text or a tool call."""
        ...

    def finished(self) -> bool:
        """The stream said it is complete (nothing more is read)."""
        ...

    def result(self, status: int, started: float, ended: float) -> TurnResult:
        """The reassembled answer, judged as the unstreamed one would be."""
        ...


class StreamFormat(msgspec.Struct, frozen=True):
    """How one chat API streams. media_type: the Content-Type a stream of it has.
    payload_lines: a line's JSON text, or None for a line that carries none (comments, blank
    lines, an end marker). assembler: a fresh reassembler of its chunks, one a turn."""

    media_type: str
    payload_lines: Callable[[bytes], bytes | None]
    assembler: Callable[[], ChunkAssembler]


class TokenClock:
    """When chunks carrying answer tokens arrived: the raw timing metrics are computed from."""

    def __init__(self) -> None:
        self.first: float | None = None
        self.last: float | None = None
        self.chunks = 0
        self.gaps: dict[int, int] = {}  # each gap between chunks, counted in its bucket

    def token(self, at: float) -> None:
        if self.first is None:
            self.first = at
        if self.last is not None:
            bucket = bucket_of(max(0.0, at - self.last))
            self.gaps[bucket] = self.gaps.get(bucket, 0) + 1
        self.last = at
        self.chunks += 1

    def stamp(self, result: TurnResult) -> TurnResult:
        return replace(
            result,
            streamed=True,
            first_token=self.first,
            last_token=self.last,
            token_chunks=self.chunks,
            token_gaps=as_gaps(self.gaps),
        )


def before(deadline: float, pieces: Iterator[bytes]) -> Iterator[bytes]:
    """`pieces` until `deadline` (the machine's monotonic clock): a runner dripping a byte at a
    time never trips a read timeout, so the whole answer has a deadline of its own."""
    for piece in pieces:
        if time.monotonic() > deadline:
            raise StreamDeadline("it did not end in time")
        yield piece


def split_lines(pieces: Iterator[bytes]) -> Iterator[bytes]:
    """The lines of a byte stream, each at most MAX_LINE_BYTES, the whole at most
    MAX_STREAM_BYTES; a last line without its newline is still a line."""
    for line, _ in timed_lines(pieces, time.monotonic):
        yield line


def timed_lines(
    pieces: Iterator[bytes], monotonic: Callable[[], float]
) -> Iterator[tuple[bytes, float]]:
    """`split_lines`, each line with when the bytes that completed it arrived: read off the
    clock as the piece comes off the connection, before any of it is parsed, so the time a
    client spends decoding JSON (which grows with N on a busy machine) is not in it."""
    pending = b""
    total = 0
    arrived = 0.0
    for piece in pieces:
        arrived = monotonic()
        total += len(piece)
        if total > MAX_STREAM_BYTES:
            raise StreamProblem(f"answer larger than {MAX_STREAM_BYTES >> 20} MiB")
        pending += piece
        while True:
            end = pending.find(b"\n")
            if end < 0:
                break
            line, pending = pending[:end], pending[end + 1 :]
            yield line.rstrip(b"\r"), arrived
        if len(pending) > MAX_LINE_BYTES:
            raise StreamProblem(f"a line longer than {MAX_LINE_BYTES >> 20} MiB")
    if pending.strip():
        yield pending.rstrip(b"\r"), arrived


def decode_line(line: bytes) -> object:
    """One line's JSON, read with the nesting and number limits of every untrusted input."""
    try:
        return loads_json(line.decode("utf-8"))
    except UnicodeDecodeError:
        raise StreamProblem("a line is not UTF-8") from None
    except InputProblem as problem:
        raise StreamProblem(f"a line {problem}") from None


def _failed(started: float, ended: float, error: str, status: int | None = None) -> TurnResult:
    return TurnResult(status, None, None, None, "", (), started, ended, error)


def post_streamed_turn(
    client: httpx.Client,
    url: str,
    payload: Mapping[str, object],
    settings: ChatSettings,
    *,
    runner_name: str,
    stream: StreamFormat,
    parse_error: Callable[[int, object, float, float], TurnResult],
    monotonic: Callable[[], float],
) -> TurnResult:
    """POST one turn with streaming on and reassemble it in `stream`'s format.

    parse_error: how the format reads an answer that is not 200 (an error body).
    Transport failures become failed turns with status None, as unstreamed turns do.
    """
    assembler = stream.assembler()
    started = monotonic()
    clock = TokenClock()
    timeout = httpx.Timeout(settings.timeout_s, connect=CONNECT_TIMEOUT_S)
    try:
        with closing(send_turn(client, url, payload, timeout)) as response:
            status = response.status_code
            if status != 200:
                try:
                    body = read_reply(response, runner_name, settings.timeout_s)
                except UnusableReply as exc:
                    return _failed(started, monotonic(), str(exc), status)
                return parse_error(status, body, started, monotonic())
            kind = response.headers.get("content-type", "").split(";", 1)[0].strip().lower()
            if kind != stream.media_type:
                return _failed(
                    started,
                    monotonic(),
                    f"{runner_name} did not stream its answer (Content-Type {kind or 'none'}, "
                    f"not {stream.media_type})",
                    response.status_code,
                )
            deadline = time.monotonic() + settings.timeout_s
            lines = timed_lines(before(deadline, response.iter_bytes()), monotonic)
            for line, arrived in lines:
                text = stream.payload_lines(line)
                if text is None:
                    continue
                if assembler.take(decode_line(text)):
                    clock.token(arrived)
                if assembler.finished():
                    break
            ended = monotonic()
    except httpx.TimeoutException:
        return _failed(started, monotonic(), f"timeout after {settings.timeout_s:g}s")
    except httpx.HTTPError as exc:
        return _failed(started, monotonic(), f"connection failed: {exc or type(exc)}")
    except StreamDeadline as problem:
        return _failed(started, monotonic(), f"timeout after {settings.timeout_s:g}s: {problem}")
    except StreamProblem as problem:
        return _failed(
            started, monotonic(), f"unreadable stream from {runner_name}: {problem}", 200
        )
    except RuntimeError:
        # httpx raises this when the client was closed under us: the runner was stopped
        return _failed(started, monotonic(), "runner stopped")
    return clock.stamp(assembler.result(200, started, ended))
