"""A kept-alive connection the runner closed is never handed a turn: every turn goes on a
connection of its own (streamed and unstreamed), so a runner that closes a connection after an
answer fails no turn."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator

import pytest

from vibey_gh.interfaces.slots_interface import ChatSettings
from vibey_gh.runners.http.openai_chat import OpenAIChatClient

MESSAGES = [{"role": "user", "content": "hello"}]
ANSWER = {
    "choices": [{"finish_reason": "stop", "message": {"role": "assistant", "content": "hi"}}],
    "usage": {"prompt_tokens": 3, "completion_tokens": 1},
}
STREAM_BODY = (
    b'data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}\n\n'
    b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
    b'data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1}}\n\n'
    b"data: [DONE]\n\n"
)


def _read_request(conn: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        part = conn.recv(65536)
        if not part:
            return b""
        data += part
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    while len(body) < length:
        body += conn.recv(65536)
    return body


def _answer(request_body: bytes) -> bytes:
    if json.loads(request_body).get("stream"):
        head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
        body = STREAM_BODY
    else:
        head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        body = json.dumps(ANSWER).encode()
    return head + b"Content-Length: %d\r\nConnection: keep-alive\r\n\r\n" % len(body) + body


@pytest.fixture
def closes_after_one_answer() -> Iterator[tuple[str, list[int]]]:
    """A server that answers one request per connection while promising keep-alive, then
    closes the connection when the next request arrives on it, answering nothing."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    dropped: list[int] = []

    def serve(conn: socket.socket) -> None:
        with conn:
            body = _read_request(conn)
            if body:
                conn.sendall(_answer(body))
            if _read_request(conn):
                dropped.append(1)

    def accept() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}", dropped
    listener.close()


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "unstreamed"])
def test_a_runner_that_closes_after_each_answer_fails_no_turn(
    closes_after_one_answer: tuple[str, list[int]], stream: bool
) -> None:
    url, dropped = closes_after_one_answer
    client = OpenAIChatClient(url)
    settings = ChatSettings(window=512, stream=stream, timeout_s=10)
    try:
        results = [client.chat(MESSAGES, None, settings) for _ in range(3)]
    finally:
        client.close()
    assert [(r.error, r.finish_reason, r.text) for r in results] == [(None, "stop", "hi")] * 3
    assert not dropped, "a turn was sent on a connection that had already served one"
