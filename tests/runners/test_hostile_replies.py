"""Every runner reply goes through one bounded reader: a hostile reply to a status GET is a
RunnerError, to a chat turn a failed turn saying what was wrong, never a crash, a hang or a
reply read whole."""

from __future__ import annotations

import time

import pytest
from msgspec.structs import replace

from tests.support.hostile import DRIP_DEADLINE_S, HOSTILE_KINDS, hostile_production
from vibey_gh.errors import RunnerError
from vibey_gh.interfaces.slots_interface import ChatSettings
from vibey_gh.runners.http.chat_turns import parse_arguments
from vibey_gh.runners.http.local_http import http_get
from vibey_gh.runners.http.openai_chat import OpenAIChatClient
from vibey_gh.runners.http.replies import UnusableReply, decode_reply
from vibey_gh.runners.llamacpp.api.watch import LlamaServerWatch
from vibey_gh.runners.ollama.chat import OllamaChatClient
from vibey_gh.runners.ollama.watch import OllamaWatch

SETTINGS = ChatSettings(window=512, max_tokens=8, timeout_s=1.5)


def _timeout_for(kind: str, usual_s: float) -> float:
    """A drip is cut off by the whole answer's deadline, whatever its length: a short one."""
    return DRIP_DEADLINE_S if kind == "drip" else usual_s


MESSAGES = [{"role": "user", "content": "hello"}]
# what each kind of reply is called, in the failed turn's error or the RunnerError
SAID = {
    "deep": "nested more than 64 levels deep",
    "nan": "non-finite number NaN",
    "huge": "larger than 16 MiB",
    "drip": "did not end in time",
    "garbage": "connection failed",
}
STATUS_SAID = {**SAID, "huge": "no answer", "drip": "timed out", "garbage": "not an HTTP answer"}


@pytest.mark.parametrize("kind", HOSTILE_KINDS)
def test_a_status_get_of_a_hostile_reply_is_a_runner_error(kind: str) -> None:
    with hostile_production(kind) as production:
        started = time.monotonic()
        with pytest.raises(RunnerError, match=STATUS_SAID[kind]):
            http_get(production.url + "/props", timeout_s=_timeout_for(kind, 1.0))
    assert time.monotonic() - started < 5.0


@pytest.mark.parametrize("watch", [LlamaServerWatch, OllamaWatch])
@pytest.mark.parametrize("kind", HOSTILE_KINDS)
def test_a_hostile_production_polls_as_unreachable(kind: str, watch: type) -> None:
    with hostile_production(kind) as production:
        state = watch(production.url, timeout_s=_timeout_for(kind, 1.0)).poll()
    assert (state.reachable, state.busy) == (False, False)
    assert production.url in (state.reason or "")


@pytest.mark.parametrize("client", ["openai", "ollama"])
@pytest.mark.parametrize("kind", HOSTILE_KINDS)
def test_a_hostile_chat_reply_is_a_failed_turn_saying_why(kind: str, client: str) -> None:
    with hostile_production(kind) as production:
        chat = (
            OpenAIChatClient(production.url)
            if client == "openai"
            else OllamaChatClient(production.url, "model", 512)
        )
        settings = replace(SETTINGS, timeout_s=_timeout_for(kind, SETTINGS.timeout_s))
        started = time.monotonic()
        try:
            turn = chat.chat(MESSAGES, None, settings)
        finally:
            chat.close()
    assert time.monotonic() - started < 3 * settings.timeout_s + 2.0
    assert not turn.served
    assert turn.error is not None and SAID[kind] in turn.error, turn.error
    assert "runner stopped" not in turn.error


def test_a_deep_tool_argument_string_is_kept_unparsed() -> None:
    deep = "[" * 200_000 + "]" * 200_000
    assert parse_arguments(deep) == {"_unparsed": deep}


def test_text_that_is_no_json_is_kept_as_text_and_json_refused_is_named() -> None:
    assert decode_reply(b"Service Unavailable", "u") == "Service Unavailable"
    assert decode_reply(b'{"a": [1]}', "u") == {"a": [1]}
    with pytest.raises(UnusableReply, match="unusable answer from u: it holds the non-finite"):
        decode_reply(b'{"a": -Infinity}', "u")
