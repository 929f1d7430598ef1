"""llama.cpp's own wire formats, typed: what it reads of the status answers (/props, /slots,
/v1/models), and those answers as the simulated runner (which speaks this API) writes them.

Answers are read through `runners/http/wire.py`'s lenient reads: a field of the wrong type reads as
absent. The chat request and answer are OpenAI's (`runners/http/openai_wire.py`), read in
`runners/http/openai_chat.py`.
"""

from __future__ import annotations

from typing import TypedDict

import msgspec

from ...http.wire import (
    JsonObject,
    as_object,
    count_or_none,
    field,
    names_in,
    text_or_none,
)


class Props(msgspec.Struct, frozen=True):
    """What /props says of a llama.cpp server: its build (`build_info`, e.g. "b4747-2d219b38"),
    the slots it serves (`total_slots`), each slot's context
    (`default_generation_settings.n_ctx`) and its model file (`model_path`); None where it does
    not say, or says it in another type."""

    build: str | None
    slots: int | None
    window: int | None
    model_path: str | None

    @classmethod
    def read(cls, body: object) -> Props:
        build = text_or_none(field(body, "build_info"))
        slots = count_or_none(field(body, "total_slots"))
        window = count_or_none(field(field(body, "default_generation_settings"), "n_ctx"))
        return cls(
            build.strip() if build and build.strip() else None,
            slots if slots is not None and slots > 0 else None,
            window,
            text_or_none(field(body, "model_path")),
        )


def slots_processing(body: object) -> bool | None:
    """Whether any slot of a /slots answer is processing; None when the answer is no list."""
    if not isinstance(body, list):
        return None
    return any(bool(as_object(slot).get("is_processing")) for slot in body)


def served_models(body: object) -> tuple[str, ...]:
    """The model ids of a /v1/models answer (`data[].id`)."""
    return names_in(field(body, "data"), "id")


# --- what a llama.cpp server answers, as the simulated runner (which speaks this API) writes it


class GenerationSettings(TypedDict):
    n_ctx: int
    params: JsonObject


class PropsReply(TypedDict):
    """GET /props."""

    default_generation_settings: GenerationSettings
    total_slots: int
    model_alias: str
    model_path: str
    endpoint_slots: bool
    build_info: str


class SlotReply(TypedDict):
    """One slot of GET /slots."""

    id: int
    n_ctx: int
    speculative: bool
    is_processing: bool
