"""A runner's own prompt count, for a corpus that must reach the window by it.

llama.cpp's server (embedded, llama-server, and the simulated runner that speaks its API)
renders a request through its chat template at `/apply-template` and counts the result at
`/tokenize`; together they give the prompt tokens a chat request reads, tools included. Ollama
has no tokenizer over HTTP: a corpus for it keeps the estimate and says so.

`runner_prompt_counter` starts a kind's calibration runner — one slot, a small window
(tokenizing needs no context), a free loopback port — and stops it when the corpus is built;
each kind of the family answers `RunnerKind.prompt_counter` with it. A runner that does not
start is an error, not a silent estimate: the corpus would then miss the window it was asked
to reach.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import httpx

from ...errors import RunnerError
from ...files import ensure_private_dir
from ...interfaces.prompt_count import PromptCounter
from ...interfaces.slots_interface import RunnerLaunch
from ...state import StateLayout
from ..contract import RunnerConfig, RunnerKind, RunningRunner
from ..http.replies import read_reply
from ..http.wire import JsonObject, Messages
from ..process import unused_loopback_port

# What a tokenizing runner is started with: a slot is all it needs, its window is never used.
COUNTING_WINDOW = 512
COUNT_TIMEOUT_S = 120.0
START_TIMEOUT_S = 180.0


class RunnerPromptCounter:
    """Counts through a running llama.cpp server's `/apply-template` and `/tokenize`."""

    def __init__(self, base_url: str, counted_by: str, timeout_s: float = COUNT_TIMEOUT_S):
        self._base_url = base_url.rstrip("/")
        self._counted_by = counted_by
        self._client = httpx.Client(timeout=timeout_s, trust_env=False)
        self._timeout_s = timeout_s

    @property
    def counted_by(self) -> str:
        return self._counted_by

    def count(self, messages: Messages, tools: list[JsonObject]) -> int:
        request: JsonObject = {"messages": messages, **({"tools": tools} if tools else {})}
        prompt = self._post("/apply-template", request).get("prompt")
        if not isinstance(prompt, str):
            raise RunnerError(f"{self._base_url}/apply-template answered no prompt text")
        tokens = self._post("/tokenize", {"content": prompt, "add_special": True}).get("tokens")
        if not isinstance(tokens, list):
            raise RunnerError(f"{self._base_url}/tokenize answered no token list")
        return len(tokens)

    def close(self) -> None:
        self._client.close()

    def _post(self, path: str, body: JsonObject) -> JsonObject:
        url = self._base_url + path
        try:
            with self._client.stream("POST", url, json=body) as response:
                answer = read_reply(response, url, self._timeout_s)
                status = response.status_code
        except httpx.HTTPError as exc:
            raise RunnerError(f"no answer from {url}: {exc}") from None
        if status != 200 or not isinstance(answer, dict):
            raise RunnerError(f"{url} answered {status}: {str(answer)[:200]}")
        return answer


@contextlib.contextmanager
def runner_prompt_counter(
    kind: RunnerKind, config: RunnerConfig, state: StateLayout
) -> Iterator[PromptCounter]:
    """`kind`'s calibration runner with `config`, started to count and stopped afterwards."""
    runner = kind.calibration_runner(state, config)
    log_dir = ensure_private_dir(state.runs / "corpus-tokenizer")
    launch = RunnerLaunch(
        slots=1,
        window=COUNTING_WINDOW,
        port=unused_loopback_port(),
        model=config.model,
        log_path=log_dir / "runner.log",
        binary=config.runner_binary,
        threads=1,
    )
    running = runner.start(launch)
    counter: RunnerPromptCounter | None = None
    try:
        running.wait_ready(START_TIMEOUT_S)
        counter = RunnerPromptCounter(running.base_url, _counted_by(running))
        yield counter
    finally:
        if counter is not None:
            counter.close()
        running.stop()


def _counted_by(running: RunningRunner) -> str:
    info = running.info()
    digest = f" {info.model_digest}" if info.model_digest else ""
    return f"{info.kind} tokenizer of {Path(info.model).name}{digest}"
