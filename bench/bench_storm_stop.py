"""How long `vibey-gh storm run` (or `lane run`, with --lane) takes to stop on SIGTERM while its
lane waits on a production that accepted the turn and drips one byte every 2 s (target: under
10 s, signal sent → exit).

The production here is a socket server of this script: it answers every request with a 200
whose body never ends. The storm's one lane sends its first turn; once it has waited a second,
the storm gets SIGTERM. The lane's turn would last the request timeout (600 s); the stop gives
it the grace (5 s), then cancels it. Each run also checks that the spec went back to pending/.

    python bench/bench_storm_stop.py [--runs 3] [--lane]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

DRIP_EVERY_S = 2.0
GIVE_UP_S = 120.0
SPEC = 'id = "s0"\ntitle = "S"\ntask = "Read."\nrepository = "../../repo"\nfiles = ["a.py"]\n'


@contextlib.contextmanager
def dripping_production() -> Iterator[tuple[str, list[int]]]:
    """A server on 127.0.0.1 answering each request with a body dripped a byte every 2 s;
    its URL and the count of chat requests it accepted."""
    stop = threading.Event()
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.1)
    chats: list[int] = []

    def serve(connection: socket.socket) -> None:
        with connection, contextlib.suppress(OSError):
            request = connection.recv(65536)
            if b"/chat/completions" in request:
                chats.append(1)
            connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n")
            while not stop.is_set():
                connection.sendall(b" ")
                stop.wait(DRIP_EVERY_S)

    def accept() -> None:
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=serve, args=(connection,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}", chats
    finally:
        stop.set()
        listener.close()


def one_stop(root: Path, url: str, chats: list[int], lane: bool) -> tuple[float, list[str]]:
    """Seconds from SIGTERM to the storm's exit, and where the spec ended."""
    (root / "repo").mkdir()
    (root / "repo" / "a.py").write_text("A = 1\n", encoding="utf-8")
    pending = root / "queue" / "pending"
    pending.mkdir(parents=True)
    (pending / "s0.toml").write_text(SPEC, encoding="utf-8")
    (root / "vibey-gh.toml").write_text(
        '[local_models]\nconcurrent_runs = "measured"\nrunner = "llama-server"\n'
        f'model = "default"\nproduction_url = "{url}"\n',
        encoding="utf-8",
    )
    env = {**os.environ, "VIBEY_GH_SLOTS_DIR": str(root / "state")}
    command = (
        ["lane", "run", str(pending / "s0.toml")]
        if lane
        else ["storm", "run", str(root / "queue"), "--poll", "0.5"]
    )
    storm = subprocess.Popen(
        [sys.executable, "-m", "vibey_gh", *command],
        cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    before = len(chats)
    started = time.monotonic()
    while len(chats) == before and time.monotonic() - started < GIVE_UP_S:
        time.sleep(0.05)
    time.sleep(1.0)  # the turn is in flight, a byte or so in
    sent = time.monotonic()
    storm.send_signal(signal.SIGTERM)
    try:
        storm.wait(GIVE_UP_S)
    except subprocess.TimeoutExpired:
        storm.kill()
        storm.wait()
    took = time.monotonic() - sent
    ended = sorted(p.relative_to(root / "queue").as_posix() for p in root.glob("queue/*/*.toml"))
    return took, ended


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--lane", action="store_true", help="stop `lane run` instead")
    args = parser.parse_args()
    times = []
    with dripping_production() as (url, chats):
        for run in range(args.runs):
            with tempfile.TemporaryDirectory() as folder:
                took, ended = one_stop(Path(folder), url, chats, args.lane)
            times.append(took)
            print(f"run {run + 1}: exit {took:.2f} s after SIGTERM; spec in {', '.join(ended)}")
    spread = statistics.stdev(times) if len(times) > 1 else 0.0
    print(
        f"{'lane' if args.lane else 'storm'} run, SIGTERM with a turn dripping from production: "
        f"{statistics.mean(times):.2f} s "
        f"± {spread:.2f} s (n={len(times)}), slowest {max(times):.2f} s"
    )


if __name__ == "__main__":
    main()
