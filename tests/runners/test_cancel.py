"""Cancelling the turns in flight: a worker blocked waiting for an answer is woken, and the
server sees the connection end, before the runner is stopped."""

from __future__ import annotations

import socket
import threading

import pytest

from vibey_gh.interfaces.slots_interface import ChatSettings, TurnResult
from vibey_gh.runners.cancel import cancel_connections_to
from vibey_gh.runners.http.openai_chat import OpenAIChatClient

pytestmark = pytest.mark.timeout(60)

SETTINGS = ChatSettings(window=512, max_tokens=16, temperature=0.0, seed=42, timeout_s=60)


def test_a_turn_waiting_on_a_silent_server_is_cancelled_and_the_server_told() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        client = OpenAIChatClient(f"http://127.0.0.1:{port}")
        results: list[TurnResult] = []
        worker = threading.Thread(
            target=lambda: results.append(
                client.chat([{"role": "user", "content": "hi"}], None, SETTINGS)
            ),
            daemon=True,
        )
        worker.start()
        accepted, _ = server.accept()
        with accepted:
            accepted.settimeout(30)
            request = b""
            while b"\r\n\r\n" not in request:
                request += accepted.recv(4096)
            assert cancel_connections_to(port) == 1
            worker.join(30)
            assert not worker.is_alive(), "the worker was not woken"
            assert results[0].status is None and "connection failed" in (results[0].error or "")
            leftover = b""
            while chunk := accepted.recv(4096):  # the request body, then EOF: the client left
                leftover += chunk
        client.close()


def test_nothing_to_cancel_is_zero() -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        assert cancel_connections_to(unused.getsockname()[1]) == 0
