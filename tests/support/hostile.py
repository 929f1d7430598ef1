"""A hostile production runner: whatever listens on production's port, answering every request
with one kind of poison, on 127.0.0.1 at a port from `free_port()`.

Kinds (`HOSTILE_KINDS`):
- `deep`: a 200 whose JSON body is nested 200,000 levels deep;
- `nan`: a 200 whose JSON holds NaN where numbers belong;
- `huge`: a 200 announcing 300 MB and sending it as fast as it is read;
- `drip`: a 200 whose body comes one byte every 0.2 s, forever;
- `garbage`: bytes that are no HTTP at all.

`idle` answers as an idle llama-server does (/health, /slots, /props, /v1/models), so a server
can start well-behaved and turn hostile by setting `kind` while it runs.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import pytest

from .ports import free_port

HOSTILE_KINDS = ("deep", "nan", "huge", "drip", "garbage")
DEPTH = 200_000
HUGE_BYTES = 300 << 20
IDLE_ANSWERS = {
    "/health": {"status": "ok"},
    "/slots": [{"id": 0, "is_processing": False}],
    "/props": {"build_info": "b9999-hostile", "total_slots": 1},
    "/v1/models": {"data": [{"id": "model"}]},
}


@dataclass
class HostileServer:
    url: str
    kind: str
    requests: int = 0
    answered: dict[str, int] = field(default_factory=dict)  # requests answered, by kind


def _head(length: int | None = None) -> bytes:
    framing = f"Content-Length: {length}\r\n" if length is not None else "Connection: close\r\n"
    return f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n{framing}\r\n".encode()


def _answer(kind: str, path: str, connection: socket.socket, stop: threading.Event) -> None:
    if kind == "idle":
        body = json.dumps(IDLE_ANSWERS.get(path, {"error": "not found"})).encode()
        connection.sendall(_head(len(body)) + body)
    elif kind == "deep":
        body = b'{"build_info": ' + b"[" * DEPTH + b"]" * DEPTH + b"}"
        connection.sendall(_head(len(body)) + body)
    elif kind == "nan":
        body = b'{"version": NaN, "build_info": NaN, "total_slots": NaN, "models": [NaN]}'
        connection.sendall(_head(len(body)) + body)
    elif kind == "huge":
        connection.sendall(_head(HUGE_BYTES))
        block = b"[" + b" " * (1 << 20)
        sent = 0
        while sent < HUGE_BYTES and not stop.is_set():
            connection.sendall(block)
            sent += len(block)
    elif kind == "drip":
        connection.sendall(_head())
        while not stop.is_set():
            connection.sendall(b" ")
            time.sleep(0.2)
    else:
        connection.sendall(b"\x00\xffSSH-2.0-not-a-runner\r\n\r\n\x1b[31m")


def _read_request(connection: socket.socket) -> str:
    """Read the request's head and body (as far as it says), so closing sends no reset first;
    return its path."""
    raw = b""
    while b"\r\n\r\n" not in raw:
        chunk = connection.recv(65536)
        if not chunk:
            return ""
        raw += chunk
    head, _, body = raw.partition(b"\r\n\r\n")
    path = head.split(b"\r\n", 1)[0].split(b" ")[1:2]
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            wanted = int(value.strip() or 0)
            while len(body) < wanted:
                chunk = connection.recv(65536)
                if not chunk:
                    return ""
                body += chunk
    return path[0].decode("latin-1") if path else ""


@contextmanager
def hostile_production(kind: str) -> Iterator[HostileServer]:
    """A server answering every request with `kind` (which may be changed while it runs)."""
    assert kind in (*HOSTILE_KINDS, "idle"), kind
    stop = threading.Event()
    listener = socket.create_server(("127.0.0.1", free_port()))
    listener.settimeout(0.1)
    server = HostileServer(f"http://127.0.0.1:{listener.getsockname()[1]}", kind)

    def serve_one(connection: socket.socket) -> None:
        with connection, contextlib.suppress(OSError):
            connection.settimeout(5.0)
            path = _read_request(connection)
            server.requests += 1
            kind = server.kind
            server.answered[kind] = server.answered.get(kind, 0) + 1
            _answer(kind, path, connection, stop)

    def accept() -> None:
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=serve_one, args=(connection,), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        stop.set()
        thread.join(timeout=2.0)
        listener.close()


# A drip is cut off by the whole answer's deadline, whatever its length; this one is still
# longer than the 0.2 s between the drip's bytes.
DRIP_DEADLINE_S = 0.5


def cut_drips_short(monkeypatch: pytest.MonkeyPatch) -> None:
    """Production's status GETs and polls give up after `DRIP_DEADLINE_S` instead of 1 s."""
    from vibey_gh.runners.http import local_http
    from vibey_gh.runners.llamacpp.api import watch as llama_watch
    from vibey_gh.runners.ollama import watch as ollama_watch

    monkeypatch.setattr(local_http, "DEFAULT_TIMEOUT_S", DRIP_DEADLINE_S)
    monkeypatch.setattr(llama_watch, "POLL_TIMEOUT_S", DRIP_DEADLINE_S)
    monkeypatch.setattr(ollama_watch, "POLL_TIMEOUT_S", DRIP_DEADLINE_S)
