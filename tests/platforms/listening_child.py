"""A real process tree standing in for a production runner: a listener holding memory, and a
child of its own (as llama-server under `vibey-gh runner serve`, or Ollama's runner)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

MB = 1_000_000

# holds `size` bytes of written (so resident, anonymous) memory, listens, starts a child, waits
LISTENER = """
import socket, subprocess, sys, time
held = bytearray(b"x" * int(sys.argv[2]))
server = socket.socket()
server.bind(("127.0.0.1", int(sys.argv[3])))
server.listen()
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
print(server.getsockname()[1], child.pid, flush=True)
sys.stdin.read()
child.kill()
"""


@dataclass(frozen=True)
class ServingTree:
    pid: int
    child_pid: int
    port: int


@contextmanager
def serving_tree(held_bytes: int = 64 * MB, port: int = 0) -> Iterator[ServingTree]:
    process = subprocess.Popen(
        [sys.executable, "-c", LISTENER, "listener", str(held_bytes), str(port)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        port, child = (int(v) for v in process.stdout.readline().split())
        yield ServingTree(process.pid, child, port)
    finally:
        if process.stdin is not None:
            process.stdin.close()
        process.wait(timeout=10)
