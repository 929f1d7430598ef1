"""The simulated runner's `/apply-template` and `/tokenize`, as llama-server answers them.

The template is the prompt text the prompt cache compares (`cache.prompt_text`); a
token is four of its characters, so `/tokenize` of a templated prompt counts what the chat
endpoint reports as its `prompt_tokens`. Ids are the characters' code points, summed by four:
they carry no meaning, only their number does.
"""

from __future__ import annotations

from ..http.wire import JsonObject
from .cache import prompt_text
from .model import CHARS_PER_TOKEN

ENDPOINTS = ("/apply-template", "/tokenize")


def answer(path: str, request: JsonObject) -> tuple[int, JsonObject]:
    if path == "/apply-template":
        messages, tools = request.get("messages"), request.get("tools")
        if not isinstance(messages, list) or not isinstance(tools, list | None):
            return 400, _invalid("'messages' must be an array (and 'tools' one if given)")
        return 200, {"prompt": prompt_text(messages, tools)}
    content = request.get("content")
    if not isinstance(content, str):
        return 400, _invalid("'content' must be a string")
    return 200, {"tokens": _ids(content)}


def _ids(content: str) -> list[int]:
    return [
        sum(map(ord, content[at : at + CHARS_PER_TOKEN]))
        for at in range(0, len(content) - CHARS_PER_TOKEN + 1, CHARS_PER_TOKEN)
    ] or [0]


def _invalid(message: str) -> JsonObject:
    return {"error": {"code": 400, "message": message, "type": "invalid_request_error"}}
