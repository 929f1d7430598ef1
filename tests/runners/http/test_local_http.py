"""The socket GET that `slots allowed` uses to ask production who it is."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from tests.support.ports import free_port
from tests.support.runners import Recorded, serve_recorded
from vibey_gh.errors import RunnerError
from vibey_gh.runners.http import local_http
from vibey_gh.runners.http.local_http import http_get, parse_answer


@contextmanager
def raw_server(
    answer: bytes, *, pause_s: float = 0.0, keep_open: bool = False
) -> Iterator[tuple[str, list[bytes], list[bool]]]:
    """Accepts one connection, records the request and sends `answer` as is.

    Then it closes, or with `keep_open` waits for the asker to close and records that it did.
    """
    listener = socket.create_server(("127.0.0.1", 0))
    seen: list[bytes] = []
    closed_by_asker: list[bool] = []

    def serve() -> None:
        connection, _ = listener.accept()
        with connection:
            seen.append(connection.recv(65536))
            time.sleep(pause_s)
            connection.sendall(answer)
            if keep_open:
                connection.settimeout(5.0)
                closed_by_asker.append(connection.recv(1) == b"")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}", seen, closed_by_asker
    finally:
        thread.join(timeout=10)
        listener.close()


def test_a_recorded_runner_answer_reads_as_json() -> None:
    routes = {"/api/version": Recorded(200, {"version": "0.34.2"})}
    with serve_recorded(routes) as server:
        answer = http_get(server.url + "/api/version")
    assert answer.status == 200
    assert answer.body == {"version": "0.34.2"}


def test_the_request_is_a_plain_get() -> None:
    with raw_server(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}") as (url, seen, _):
        http_get(url + "/props?x=1")
    request = seen[0].decode()
    assert request.startswith("GET /props?x=1 HTTP/1.1\r\n")
    assert f"Host: {url.removeprefix('http://')}\r\n" in request
    assert request.endswith("\r\n\r\n")


def test_a_kept_alive_connection_is_closed_by_the_asker_once_the_answer_is_whole() -> None:
    # The side that closes first keeps the TIME_WAIT; it must never be the runner's port.
    answer = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"
    with raw_server(answer, keep_open=True) as (url, _, closed_by_asker):
        started = time.monotonic()
        assert http_get(url + "/health", timeout_s=5.0).body == {}
        assert time.monotonic() - started < 2.0
    assert closed_by_asker == [True]


def test_an_answer_without_a_body_does_not_wait_for_the_close() -> None:
    answer = b"HTTP/1.1 204 No Content\r\n\r\n"
    with raw_server(answer, keep_open=True) as (url, _, closed_by_asker):
        reply = http_get(url, timeout_s=3.0)
    assert (reply.status, reply.body) == (204, "")
    assert closed_by_asker == [True]


def test_chunked_bodies_are_joined() -> None:
    answer = (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        b'5;ext=1\r\n{"a":\r\n4\r\n 12}\r\n0\r\n\r\n'
    )
    with raw_server(answer, keep_open=True) as (url, _, closed_by_asker):
        assert http_get(url).body == {"a": 12}
    assert closed_by_asker == [True]


def test_a_body_without_length_runs_to_the_close() -> None:
    with raw_server(b"HTTP/1.0 503 Service Unavailable\r\n\r\nloading model") as (url, _, _):
        answer = http_get(url)
    assert (answer.status, answer.body) == (503, "loading model")


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}", "cut short: 2 of 10 bytes"),
        (b"HTTP/1.1 200 OK\r\nContent-Le", "ended inside its headers"),
        (b"", "empty answer"),
        (b"SSH-2.0-OpenSSH_9.6\r\n\r\n", "not an HTTP answer"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "bad chunk size"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n9\r\n{}", "cut short"),
    ],
)
def test_a_malformed_answer_is_no_answer_and_says_why(answer: bytes, why: str) -> None:
    with raw_server(answer) as (url, _, _), pytest.raises(RunnerError) as caught:
        http_get(url)
    assert str(caught.value).startswith(f"no answer from {url}: ")
    assert why in str(caught.value)


def test_a_server_that_stalls_is_cut_off_at_the_timeout() -> None:
    with raw_server(b"HTTP/1.1 200 OK\r\n\r\n", pause_s=2.0) as (url, _, _):
        started = time.monotonic()
        with pytest.raises(RunnerError, match="timed out"):
            http_get(url, timeout_s=0.3)
        assert time.monotonic() - started < 1.5


def test_nothing_listening_is_no_answer() -> None:
    url = f"http://127.0.0.1:{free_port()}/health"
    with pytest.raises(RunnerError, match=f"no answer from {url}: .*refused"):
        http_get(url)


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_an_address_and_a_name_are_both_asked(host: str) -> None:
    with raw_server(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}") as (url, seen, _):
        answer = http_get(url.replace("127.0.0.1", host) + "/health")
    assert answer.body == {}
    assert f"Host: {host}:" in seen[0].decode()


def test_an_ip_address_is_asked_without_loading_socket_or_the_idna_codec() -> None:
    """`slots allowed` asks production on every call: importing either costs more than the
    GET itself."""
    probe = (
        "import sys\n"
        "from vibey_gh.errors import RunnerError\n"
        "from vibey_gh.runners.http.local_http import http_get\n"
        "try:\n"
        f"    http_get('http://127.0.0.1:{free_port()}/health', 0.5)\n"
        "except RunnerError as no_answer:\n"
        "    print(no_answer)\n"
        "print('encodings.idna' in sys.modules or 'socket' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    *answer, loaded = done.stdout.splitlines()
    assert answer[0].startswith("no answer from http://127.0.0.1:"), done
    assert loaded == "False"


def test_an_oversized_answer_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local_http, "MAX_REPLY_BYTES", 100)
    with (
        raw_server(b"HTTP/1.1 200 OK\r\n\r\n" + b"x" * 500) as (url, _, _),
        pytest.raises(RunnerError, match="larger than 100 bytes"),
    ):
        http_get(url)


def test_https_to_a_plain_server_fails_as_no_answer() -> None:
    with (
        raw_server(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}") as (url, _, _),
        pytest.raises(RunnerError, match="no answer from https://"),
    ):
        http_get(url.replace("http://", "https://"))


def test_only_http_urls_are_asked() -> None:
    with pytest.raises(RunnerError, match="not an http URL: ftp://x"):
        http_get("ftp://x")


def test_parse_answer_keeps_only_the_declared_length() -> None:
    raw = b"HTTP/1.1 404 Not Found\r\ncontent-length: 4\r\n\r\nnopeEXTRA"
    assert parse_answer(raw) == (404, b"nope")
