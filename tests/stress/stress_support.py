"""What the stress tests share: a micro corpus, runner wrappers that
shorten the request timeout or route requests through the fault proxy, and checks that nothing
on disk was left damaged."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from msgspec.structs import replace

from tests.support.ports import free_port
from tests.support.progress import Recorder
from vibey_gh.config import LocalModels
from vibey_gh.files import leftover_temp_files
from vibey_gh.interfaces.schema import as_json
from vibey_gh.interfaces.slots_interface import ChatSettings, RunnerInfo, RunnerLaunch, TurnResult
from vibey_gh.runners.contract import Runner, RunningRunner
from vibey_gh.slots.corpus.corpus import Corpus, build_corpus, write_corpus
from vibey_gh.slots.corpus.pool import PoolSources, build_pool
from vibey_gh.slots.measurement.calibration_setup import CalibrationOutcome
from vibey_gh.state import StateLayout

# The smallest sweep that still exercises every part: 2 segments of 2 turns, short prompts,
# a few output tokens; one step takes seconds on 2 busy cores.
MICRO_WINDOW = 1024
MICRO_MAX_TOKENS = 8
BASELINE_SLOTS = (1, 2)


def _conversation(index: int) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "Answer in one short sentence."},
        {"role": "user", "content": f"Question {index}: what does add(2, {index}) return?"},
        {"role": "assistant", "content": f"It returns {2 + index}."},
        {"role": "user", "content": "And add(1, 1)?"},
        {"role": "assistant", "content": "It returns 2."},
        {"role": "user", "content": "Thanks."},
        {"role": "assistant", "content": "You are welcome."},
    ]
    return {"id": f"micro-{index}", "messages": messages}


def micro_corpus(folder: Path) -> tuple[Corpus, Path]:
    """A corpus of 2 segments × 2 turns, every turn well inside MICRO_WINDOW."""
    folder.mkdir(parents=True, exist_ok=True)
    transcripts = folder / "micro-transcripts.jsonl"
    transcripts.write_text("".join(json.dumps(_conversation(i)) + "\n" for i in range(4)))
    pool = build_pool(PoolSources(from_transcripts=[transcripts]))
    corpus = build_corpus(pool, window=MICRO_WINDOW, segments_per_stratum=2, segment_turns=2)
    path = folder / "micro-corpus.json"
    write_corpus(corpus, path)
    return corpus, path


def micro_corpus_document() -> dict[str, Any]:
    """The micro corpus as the JSON object its file holds (built in a throwaway folder)."""
    with tempfile.TemporaryDirectory(prefix="micro-corpus-") as folder:
        return as_json(micro_corpus(Path(folder))[0])


def micro_config(**changes: Any) -> LocalModels:
    """The embedded runner on free ports; the production URL points at nothing (idle)."""
    base = LocalModels(
        concurrent_runs="measured",
        runner="embedded",
        window=MICRO_WINDOW,
        calibration_port=free_port(),
        production_url=f"http://127.0.0.1:{free_port()}",
        # one pass over the micro corpus per one-slot step: the steady-state minimum is not
        # what these tests measure
        min_step_seconds=0.1,
    )
    return replace(base, **changes)


def config_toml(config: LocalModels) -> str:
    """The vibey-gh.toml that `load_config` turns into `config` (the keys the tests use)."""
    declaration = config.concurrent_runs
    declared = f'"{declaration}"' if isinstance(declaration, str) else str(declaration)
    return (
        "[local_models]\n"
        f"concurrent_runs = {declared}\n"
        f'runner = "{config.runner}"\n'
        f"window = {config.window}\n"
        f"calibration_port = {config.calibration_port}\n"
        f'production_url = "{config.production}"\n'
        f"min_step_seconds = {config.min_step_seconds}\n"
    )


def cli_env(state: Path) -> dict[str, str]:
    """The environment for a `vibey-gh` subprocess working on `state`."""
    env = {**os.environ, "VIBEY_GH_SLOTS_DIR": str(state)}
    env.pop("VIBEY_GH_CONFIG", None)
    return env


def calibrate_argv(corpus_path: Path, slots: str, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "vibey_gh.cli.main",
        "slots",
        "calibrate",
        "--corpus",
        str(corpus_path),
        "--window",
        str(MICRO_WINDOW),
        "--slots",
        slots,
        "--max-tokens",
        str(MICRO_MAX_TOKENS),
        *extra,
    ]


@dataclass(frozen=True)
class OneSlotBaseline:
    """A checkpoint holding the one-slot step of a BASELINE_SLOTS micro sweep, and the
    evidence of that paused sweep (what `calibrate --max-runs 1` leaves behind)."""

    corpus: Corpus
    corpus_path: Path
    checkpoint_name: str
    checkpoint: bytes
    evidence_name: str
    evidence: bytes

    def install(self, layout: StateLayout) -> Path:
        """Put both where a calibration of the same sweep finds them; return the checkpoint."""
        evidence = layout.evidence / self.evidence_name
        evidence.write_bytes(self.evidence)
        evidence.chmod(0o600)
        path = layout.progress / self.checkpoint_name
        path.write_bytes(self.checkpoint)
        path.chmod(0o600)
        return path


def resume_second_step(
    baseline: OneSlotBaseline,
    layout: StateLayout,
    recorder: Recorder,
    wrap: Callable[[Runner], Runner] | None = None,
    config: LocalModels | None = None,
) -> CalibrationOutcome:
    """Resume the baseline sweep in `layout`: only its N=2 step is measured, on the real
    embedded runner (wrapped by `wrap` when given)."""
    from vibey_gh.composition import build_environment
    from vibey_gh.slots.measurement.calibrate import run_calibration
    from vibey_gh.slots.measurement.calibration_setup import CalibrationRequest

    baseline.install(layout)
    config = config or micro_config()
    env = build_environment(config, layout)
    if wrap is not None:
        env = replace(env, runner=wrap(env.runner))
    request = CalibrationRequest(
        config=config,
        corpus=baseline.corpus,
        window=MICRO_WINDOW,
        max_tokens=MICRO_MAX_TOKENS,
        slots=BASELINE_SLOTS,
    )
    return run_calibration(request, env, recorder, bounds_source=lambda: config)


# ---------------------------------------------------------------------------------------------
# Runner wrappers (test-side): the real embedded runner, seen through a small change
# ---------------------------------------------------------------------------------------------


class WrappedRunning:
    """A started runner whose requests may go elsewhere (`base_url`) or wait less."""

    def __init__(
        self,
        inner: RunningRunner,
        *,
        timeout_s: float | None,
        route: Callable[[str], str] | None,
    ) -> None:
        self.inner = inner
        self.log_path = inner.log_path
        self.base_url = route(inner.base_url) if route else inner.base_url
        self._timeout_s = timeout_s
        self._client: Any = None
        if route is not None:
            from vibey_gh.runners.http.openai_chat import OpenAIChatClient

            self._client = OpenAIChatClient(self.base_url)

    @property
    def pid(self) -> int | None:
        return self.inner.pid

    @property
    def argv(self) -> tuple[str, ...] | None:
        return self.inner.argv

    def wait_ready(self, timeout_s: float = 120.0) -> None:
        self.inner.wait_ready(timeout_s)

    def preload(self) -> float:
        return self.inner.preload()

    def chat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        settings: ChatSettings,
    ) -> TurnResult:
        if self._timeout_s is not None:
            settings = replace(settings, timeout_s=self._timeout_s)
        if self._client is not None:
            result: TurnResult = self._client.chat(messages, tools, settings)
            return result
        return self.inner.chat(messages, tools, settings)

    def info(self) -> RunnerInfo:
        return self.inner.info()

    def stop(self) -> None:
        try:
            self.inner.stop()
        finally:
            if self._client is not None:
                self._client.close()


class WrappedRunner:
    """A Runner that starts the real one and wraps what it started; remembers every start."""

    def __init__(
        self,
        inner: Runner,
        *,
        timeout_s: float | None = None,
        route: Callable[[str], str] | None = None,
    ) -> None:
        self.kind = inner.kind
        self._inner = inner
        self._timeout_s = timeout_s
        self._route = route
        self.started: list[WrappedRunning] = []

    def start(self, launch: RunnerLaunch) -> WrappedRunning:
        running = WrappedRunning(
            self._inner.start(launch), timeout_s=self._timeout_s, route=self._route
        )
        self.started.append(running)
        return running


# ---------------------------------------------------------------------------------------------
# Checks on disk
# ---------------------------------------------------------------------------------------------


def temp_leftovers(root: Path) -> list[Path]:
    """Temporary files of interrupted atomic writes anywhere under the state root."""
    found: list[Path] = []
    for folder in [root, *(p for p in root.rglob("*") if p.is_dir())]:
        found.extend(leftover_temp_files(folder))
    return found


def assert_state_readable(layout: StateLayout) -> None:
    """Every evidence, progress and request file parses as the JSON object its reader expects."""
    for folder in ("evidence", "progress", "requests"):
        for path in (layout.root / folder).glob("*.json"):
            data = json.loads(path.read_text(encoding="utf-8"))
            assert isinstance(data, dict), path
    assert temp_leftovers(layout.root) == []


def snapshot(paths: list[Path]) -> dict[Path, bytes | None]:
    return {p: (p.read_bytes() if p.exists() else None) for p in paths}


@contextlib.contextmanager
def port_held(port: int) -> Iterator[socket.socket]:
    """Something else listening on 127.0.0.1:`port` for the duration."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", port))
        sock.listen(1)
        yield sock


def one_line_error(stderr: str, *, alone: bool = True) -> str:
    """The error line, asserting there is exactly one, it comes last and no traceback shows.

    `alone=False` allows progress lines before it (a calibration that started working)."""
    # "\n" only: a message may quote text holding other line separators (U+2028, NEL)
    lines = [line for line in stderr.split("\n") if line.strip()]
    assert "Traceback" not in stderr, stderr
    errors = [line for line in lines if line.startswith("error: ")]
    assert len(errors) == 1 and lines[-1] == errors[0], stderr
    if alone:
        assert len(lines) == 1, stderr
    return errors[0]
