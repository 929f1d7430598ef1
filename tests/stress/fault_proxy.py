"""A small HTTP proxy on 127.0.0.1 that sits in front of a real runner and rewrites its answers.

Faults are chosen per chat request by a callable, so a test can break the third answer only,
or every answer. What each fault does to a /v1/chat/completions request:

  "pass"          forward as is
  "http_500"      answer 500 with llama-server's error body, without asking the runner
  "strip_reason"  forward, then drop finish_reason from the 200 answer, streamed or not (a
                  decode that failed underneath the server, as the seed describes)

Every other path (/health, /props, /slots) is always forwarded untouched.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

CHAT_PATH = "/v1/chat/completions"
FAULTS = ("pass", "http_500", "strip_reason")
INJECTED_500 = {"error": {"code": 500, "message": "injected fault", "type": "server_error"}}


def strip_finish_reason(body: dict[str, Any]) -> dict[str, Any]:
    """The same answer with every choice's finish_reason removed."""
    choices = body.get("choices")
    if isinstance(choices, list):
        for choice in choices:
            if isinstance(choice, dict):
                choice.pop("finish_reason", None)
    return body


def strip_finish_reason_from_stream(body: bytes) -> bytes:
    """A streamed answer (server-sent events, `data: {...}` lines) with every chunk's
    finish_reason removed."""
    lines = []
    for line in body.split(b"\n"):
        if line.startswith(b"data: {"):
            chunk = strip_finish_reason(json.loads(line[len(b"data: ") :]))
            line = b"data: " + json.dumps(chunk).encode()
        lines.append(line)
    return b"\n".join(lines)


class FaultProxy:
    """`with FaultProxy(upstream, fault) as proxy:` — requests to `proxy.url` reach upstream."""

    def __init__(self, upstream: str, fault: Callable[[int], str]) -> None:
        self.upstream = upstream.rstrip("/")
        self.fault = fault
        self.chat_requests = 0
        self.applied: list[str] = []
        self._lock = threading.Lock()
        self._client = httpx.Client(trust_env=False, timeout=httpx.Timeout(600.0, connect=5.0))
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="fault-proxy", daemon=True
        )
        self._thread.start()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def next_fault(self) -> str:
        with self._lock:
            number = self.chat_requests
            self.chat_requests += 1
        fault = self.fault(number)
        if fault not in FAULTS:
            raise ValueError(f"unknown fault {fault!r}")
        with self._lock:
            self.applied.append(fault)
        return fault

    def forward(self, method: str, path: str, body: bytes | None) -> tuple[int, bytes, str]:
        try:
            answer = self._client.request(
                method,
                self.upstream + path,
                content=body,
                headers={"Content-Type": "application/json"} if body else None,
            )
        except httpx.HTTPError as exc:
            message = json.dumps({"error": {"message": f"proxy: upstream failed: {exc}"}})
            return 502, message.encode(), "application/json"
        kind = answer.headers.get("content-type", "application/json")
        return answer.status_code, answer.content, kind

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return None  # a test's output is no place for an access log

            def _reply(self, status: int, body: bytes, kind: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _body(self) -> bytes | None:
                length = int(self.headers.get("Content-Length") or 0)
                return self.rfile.read(length) if length else None

            def do_GET(self) -> None:
                self._reply(*proxy.forward("GET", self.path, None))

            def do_POST(self) -> None:
                body = self._body()
                if self.path != CHAT_PATH:
                    self._reply(*proxy.forward("POST", self.path, body))
                    return
                fault = proxy.next_fault()
                if fault == "http_500":
                    self._reply(500, json.dumps(INJECTED_500).encode())
                    return
                status, answer, kind = proxy.forward("POST", self.path, body)
                if fault == "strip_reason" and status == 200:
                    if kind.startswith("text/event-stream"):
                        answer = strip_finish_reason_from_stream(answer)
                    else:
                        answer = json.dumps(strip_finish_reason(json.loads(answer))).encode()
                self._reply(status, answer, kind)

        return Handler

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
        self._client.close()

    def __enter__(self) -> FaultProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
