"""A small GET for the production runner's status endpoints.

`slots allowed` identifies the production runner on every call and must answer in about 100 ms
as a whole process; httpx alone takes longer than that to import. These reads are one short
GET each, so the standard library's http.client does them. Every failure becomes RunnerError
"no answer from URL: why".
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from ..errors import RunnerError

DEFAULT_TIMEOUT_S = 1.0


@dataclass(frozen=True)
class HttpAnswer:
    status: int
    body: Any  # decoded JSON when the answer is JSON, else its text

    def json_object(self) -> dict[str, Any]:
        return self.body if isinstance(self.body, dict) else {}


def http_get(url: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> HttpAnswer:
    """GET `url`; any status is an answer, only no answer at all raises RunnerError."""
    import http.client

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise RunnerError(f"not an http URL: {url}")
    connection_class = (
        http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    )
    connection = connection_class(parts.hostname, parts.port, timeout=timeout_s)
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    try:
        connection.request("GET", path, headers={"Accept": "application/json"})
        response = connection.getresponse()
        raw = response.read()
        status = response.status
    except (OSError, http.client.HTTPException) as exc:
        reason = str(exc) or type(exc).__name__
        raise RunnerError(f"no answer from {url}: {reason}") from None
    finally:
        connection.close()
    text = raw.decode("utf-8", errors="replace")
    try:
        body: Any = json.loads(text)
    except ValueError:
        body = text
    return HttpAnswer(status, body)
