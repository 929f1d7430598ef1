"""Runner stand-ins: recorded answers served on 127.0.0.1, executables run by this
interpreter, and the strict `ollama serve` stand-in."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "runners"


@dataclass(frozen=True)
class Recorded:
    status: int
    body: Any


def recorded(relative: str) -> Recorded:
    """A recorded answer: {"status", "body", "source"} under tests/fixtures/runners/."""
    data = json.loads((FIXTURES / relative).read_text(encoding="utf-8"))
    return Recorded(int(data["status"]), data["body"])


def log_lines(name: str) -> list[str]:
    return (FIXTURES / "logs" / name).read_text(encoding="utf-8").split("\n")


@dataclass
class HttpStandIn:
    """Serves recorded answers by path on 127.0.0.1; `routes` may be changed while it runs."""

    routes: dict[str, Recorded]
    requests: list[tuple[str, str, Any]] = field(default_factory=list)
    url: str = ""


@contextmanager
def serve_recorded(routes: dict[str, Recorded]) -> Iterator[HttpStandIn]:
    stand_in = HttpStandIn(dict(routes))

    class Handler(BaseHTTPRequestHandler):
        def _answer(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            stand_in.requests.append((method, self.path, json.loads(raw) if raw else None))
            answer = stand_in.routes.get(self.path)
            if answer is None:
                answer = Recorded(404, {"error": f"no route {self.path}"})
            body = answer.body
            data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
            self.send_response(answer.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._answer("GET")

        def do_POST(self) -> None:
            self._answer("POST")

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    stand_in.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield stand_in
    finally:
        server.shutdown()
        server.server_close()


def write_python_executable(path: Path, source: str) -> Path:
    """An executable script run by this interpreter (no shell involved)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!{sys.executable}\n{source}", encoding="utf-8")
    path.chmod(0o755)
    return path


def write_fake_ollama(folder: Path) -> Path:
    """The strict `ollama serve` stand-in as `folder`/ollama, its Go decoder beside it."""
    stand_in = FIXTURES / "ollama"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "go_decode.py").write_text((stand_in / "go_decode.py").read_text())
    return write_python_executable(folder / "ollama", (stand_in / "fake_ollama.py").read_text())
