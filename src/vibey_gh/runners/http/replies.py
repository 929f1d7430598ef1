"""How every runner reply is read: at most MAX_REPLY_BYTES, within a deadline, decoded by the
bounded JSON reader of `guarded`.

A reply is untrusted input: whatever listens on production's port may answer 200,000 levels
of nesting, NaN, a body of 300 MB or one byte a second. Such a reply is `UnusableReply`, a
RunnerError that says what was wrong with it; text that is no JSON at all (an error page) is
kept as text, since runners answer some errors that way. The status GETs (`local_http`) and the
chat clients (`openai_chat`, `ollama`) both decode through `decode_reply`; the chat clients read
their streamed body through `read_reply`.

httpx is named for its types only: `slots allowed` imports this module through `local_http`.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ...errors import RunnerError
from ...guarded import InputProblem, NotJson, gather_capped, loads_json_bytes

if TYPE_CHECKING:
    import httpx

# A status answer is kilobytes and a chat answer (768 tokens and its tool calls) tens of them;
# more is not a runner talking.
MAX_REPLY_BYTES = 16 << 20


class UnusableReply(RunnerError):
    """A reply too large, too slow, too deeply nested or holding non-finite numbers."""


def decode_reply(raw: bytes, where: str) -> object:
    """The reply's JSON value, or its text when it is no JSON; UnusableReply when it is JSON
    the tool refuses to read."""
    try:
        return loads_json_bytes(raw)
    except NotJson:
        return raw.decode("utf-8", errors="replace")
    except InputProblem as problem:
        raise UnusableReply(f"unusable answer from {where}: it {problem}") from None


def read_reply(
    response: httpx.Response, where: str, timeout_s: float, limit: int = MAX_REPLY_BYTES
) -> object:
    """The body of a streamed response, decoded: refused once it passes `limit` bytes or takes
    longer than `timeout_s` in all (a runner dripping a byte at a time never trips a read
    timeout). The deadline is the machine's clock, not an injected one: it guards real time."""
    deadline = time.monotonic() + timeout_s

    def chunks() -> Iterator[bytes]:
        for chunk in response.iter_bytes():
            if time.monotonic() > deadline:
                raise UnusableReply(f"unusable answer from {where}: it did not end in time")
            yield chunk

    try:
        raw = gather_capped(chunks(), limit)
    except InputProblem as problem:
        raise UnusableReply(f"unusable answer from {where}: it {problem}") from None
    return decode_reply(raw, where)
