"""A small GET for the production runner's status endpoints.

`slots allowed` identifies the production runner on every call and must answer in about 100 ms
as a whole process. httpx takes longer than that to import, and even the standard library's
http.client costs about 20 ms because it loads `ssl` and the `email` parser. These reads are one
short GET each to a server on this machine, so plain http:// is spoken over a socket here:
one HTTP/1.1 request, its answer framed by Content-Length, chunked encoding or the end of the
stream. https:// URLs go through http.client. Every failure becomes RunnerError
"no answer from URL: why"; an answer larger than `MAX_REPLY_BYTES`, or JSON nested too deep or
holding non-finite numbers, is an `UnusableReply` (see `replies`).
"""

from __future__ import annotations

import _socket
import ipaddress
import time
from contextlib import closing
from urllib.parse import SplitResult, urlsplit

import msgspec

from ...errors import RunnerError
from ...guarded import size_text
from .replies import MAX_REPLY_BYTES, decode_reply

DEFAULT_TIMEOUT_S = 1.0


class HttpAnswer(msgspec.Struct, frozen=True):
    status: int
    body: object  # decoded JSON when the answer is JSON, else its text (`wire` reads it)


def http_get(url: str, timeout_s: float | None = None) -> HttpAnswer:
    """GET `url` within `timeout_s` (`DEFAULT_TIMEOUT_S`, read at the call, when not given);
    any status is an answer, only no answer at all raises RunnerError."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise RunnerError(f"not an http URL: {url}")
    wait_s = DEFAULT_TIMEOUT_S if timeout_s is None else timeout_s
    try:
        if parts.scheme == "https":
            status, raw = _get_tls(parts, wait_s)
        else:
            status, raw = _exchange(parts, wait_s)
    except (OSError, ValueError) as exc:
        reason = str(exc) or type(exc).__name__
        raise RunnerError(f"no answer from {url}: {reason}") from None
    return HttpAnswer(status, decode_reply(raw, url))


def _target(parts: SplitResult) -> str:
    path = parts.path or "/"
    return f"{path}?{parts.query}" if parts.query else path


def _exchange(parts: SplitResult, timeout_s: float) -> tuple[int, bytes]:
    """Send the GET and read one answer, all within `timeout_s`; then close our end first."""
    host = parts.hostname or ""
    port = parts.port or 80
    host_header = f"[{host}]" if ":" in host else host
    request = (
        f"GET {_target(parts)} HTTP/1.1\r\n"
        f"Host: {host_header}:{port}\r\n"
        "Accept: application/json\r\n"
        "\r\n"
    ).encode("ascii", errors="strict")
    deadline = time.monotonic() + timeout_s
    # The connection stays open until the answer is complete and is then closed from this side,
    # as http.client does: the side that closes first keeps the TIME_WAIT, and on a runner's
    # port that would read as "in use" to the next start.
    with closing(_connect(host, port, timeout_s)) as sock:
        sock.sendall(request)
        raw = bytearray()
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("timed out")
            sock.settimeout(remaining)
            chunk = sock.recv(65536)
            raw += chunk
            if len(raw) > MAX_REPLY_BYTES:
                raise ValueError(f"answer larger than {size_text(MAX_REPLY_BYTES)}, the most read")
            answer = framed_answer(bytes(raw), ended=not chunk)
            if answer is not None:
                return answer


def _connect(host: str, port: int, timeout_s: float) -> _socket.socket:
    """A connected socket. An IP address is connected to as it is, on the socket type itself:
    the `socket` module builds four enums of the platform's constants when imported, and the
    resolver that `socket.create_connection` asks takes a name through the `idna` codec,
    whose import (with `stringprep` and `unicodedata`) costs more than the whole GET. A name,
    or an address scoped to an interface, is resolved as before."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        address = None
    if address is None or "%" in host:
        import socket  # lazy: the gate's GET of an address needs neither its enums nor idna

        return socket.create_connection((host, port), timeout=timeout_s)
    family = _socket.AF_INET6 if address.version == 6 else _socket.AF_INET
    sock = _socket.socket(family, _socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout_s)
        sock.connect((host, port))
    except BaseException:
        sock.close()
        raise
    return sock


class _CutShort(ValueError):
    """The answer so far is incomplete: an error only once the server has closed."""


def parse_answer(raw: bytes) -> tuple[int, bytes]:
    """Status and body of a whole HTTP/1.x response; ValueError saying what is malformed."""
    answer = framed_answer(raw, ended=True)
    assert answer is not None  # an ended stream gives an answer or an error
    return answer


def framed_answer(raw: bytes, *, ended: bool) -> tuple[int, bytes] | None:
    """Status and body once `raw` holds a whole answer; None while more is to come.

    `ended`: the server closed the stream, so whatever is missing now never comes.
    """
    try:
        return _framed(raw, ended)
    except _CutShort:
        if ended:
            raise
        return None


def _framed(raw: bytes, ended: bool) -> tuple[int, bytes] | None:
    head, separator, rest = raw.partition(b"\r\n\r\n")
    if not separator:
        raise _CutShort("the answer ended inside its headers" if raw else "empty answer")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    version, _, after = status_line.partition(" ")
    code = after[:3]
    if not version.startswith("HTTP/1.") or not (code.isascii() and code.isdigit()):
        raise ValueError(f"not an HTTP answer: {status_line[:60]!r}")
    status = int(code)
    headers: dict[str, str] = {}
    for line in header_lines:
        name, colon, value = line.partition(":")
        if colon:
            headers[name.strip().lower()] = value.strip()
    if status in (204, 304) or 100 <= status < 200:
        return status, b""
    if "chunked" in headers.get("transfer-encoding", "").lower():
        return status, _unchunk(rest)
    length = headers.get("content-length")
    if length is not None:
        if not length.isdigit():
            raise ValueError(f"bad Content-Length {length!r}")
        if len(rest) < int(length):
            raise _CutShort(f"answer cut short: {len(rest)} of {length} bytes")
        return status, rest[: int(length)]
    return (status, rest) if ended else None


def _unchunk(data: bytes) -> bytes:
    body: list[bytes] = []
    position = 0
    while True:
        line_end = data.find(b"\r\n", position)
        if line_end < 0:
            raise _CutShort("chunked answer cut short")
        size_field = data[position:line_end].split(b";", 1)[0].strip()
        try:
            size = int(size_field, 16)
        except ValueError:
            raise ValueError(f"bad chunk size {size_field[:20]!r}") from None
        if size == 0:
            return b"".join(body)
        start = line_end + 2
        if len(data) < start + size + 2:
            raise _CutShort("chunked answer cut short")
        body.append(data[start : start + size])
        position = start + size + 2


def _get_tls(parts: SplitResult, timeout_s: float) -> tuple[int, bytes]:
    import http.client  # lazy: only an https production needs it (and ssl), tens of ms

    connection = http.client.HTTPSConnection(parts.hostname or "", parts.port, timeout=timeout_s)
    try:
        connection.request("GET", _target(parts), headers={"Accept": "application/json"})
        response = connection.getresponse()
        raw = response.read(MAX_REPLY_BYTES + 1)
        if len(raw) > MAX_REPLY_BYTES:
            raise ValueError(f"answer larger than {size_text(MAX_REPLY_BYTES)}, the most read")
        return response.status, raw
    except http.client.HTTPException as exc:
        raise ValueError(str(exc) or type(exc).__name__) from None
    finally:
        connection.close()
