"""`[local_models]` configuration: loading, defaults and validation.

Found at $VIBEY_GH_CONFIG (the global `--config FILE` sets it), else ./vibey-gh.toml, else the
user config dir: a file named on purpose wins over one that happens to lie in the working
directory. A missing file means the defaults (declaration 1). Every problem is one line naming
the key and the file. Callers re-read the config at every decision, so loading is cheap and has
no side effects.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, MutableMapping
from pathlib import Path
from typing import Any, TypeVar

import msgspec
from msgspec import field
from msgspec.structs import replace

from .config_cache import NotToml, parsed_config_toml
from .config_reader import Declaration, TableReader, did_you_mean
from .errors import BadInput, ConfigError
from .guarded import MIB, InputProblem, read_regular_bytes
from .interfaces.bounds import Bounds
from .interfaces.durations import parse_duration
from .interfaces.schema import error_path, fields_of, value_problem
from .interfaces.think import (
    DEFAULT_THINK_CAP_S,
    MAX_THINK_S,
    ThinkAsked,
    check_think_cap,
    parse_think_time,
)
from .runners.registry import DEFAULT_RUNNER, default_production_url, registered_names
from .runners.simulated.settings import CONFIG_TABLE as SIMULATED_TABLE
from .runners.simulated.settings import SimulatedModel as SimulatedModel
from .runners.simulated.settings import read_capacity
from .userdirs import user_config_dir

S = TypeVar("S", bound=msgspec.Struct)
CONFIG_ENV = "VIBEY_GH_CONFIG"
CONFIG_NAME = "vibey-gh.toml"
CONFIG_SIZE_LIMIT = MIB
MIN_WINDOW = 256
MAX_WINDOW = 1 << 24
MIN_STEP_SECONDS = 60.0
# A step inconclusive after min_step_seconds is measured longer, up to this many times as long.
MAX_STEP_FACTOR = 5.0
# With a latency bound set (and no max_step_seconds), that cap is this many times longer again:
# a bound is judged on each turn's own latencies, and a step at two slots holds about seven
# requests a turn at five times 4 s, where each turn's ratio carries about 5% of noise; a
# true 1.41× against a 1.5× limit was then decided in 7–8 of 10 sweeps, and about 56 a turn
# are needed for 9 (docs/performance.md). The looks past the ordinary cap double to it, so a
# step that decides early is not held longer.
LATENCY_CAP_FACTOR = 8.0
STEP_SECONDS_RANGE = (0.1, 86_400.0)
INTERLEAVE_SECONDS_RANGE = (0.1, 3_600.0)


class LocalModels(msgspec.Struct, frozen=True):
    """The validated `[local_models]` table. `source` is the file it came from, or None."""

    concurrent_runs: Declaration = 1
    runner: str = DEFAULT_RUNNER
    model: str = "default"
    window: int = 4096
    production_url: str | None = None
    calibration_port: int = 11435
    runner_binary: str | None = None
    max_tokens: int = 768
    stale_after_days: float = 30.0
    bounds: Bounds = field(default_factory=Bounds)
    source: Path | None = None
    # production's own settings, mirrored by the calibration runner and part of the fingerprint:
    # extra llama-server arguments, and Ollama's OLLAMA_* environment (None: read it from where
    # production gets it, see runners/ollama/settings.py)
    runner_args: tuple[str, ...] = ()
    runner_env: dict[str, str] | None = None
    min_step_seconds: float = MIN_STEP_SECONDS
    # None: MAX_STEP_FACTOR × min_step_seconds (× LATENCY_CAP_FACTOR with a latency bound set)
    max_step_seconds: float | None = None
    # a step above one slot alternates blocks this long of one turn at a time and all its
    # slots (`judging.interleaved`); None: all its slots throughout
    interleave_seconds: float | None = None
    simulated: SimulatedModel = field(default_factory=lambda: SimulatedModel())
    # the wait before each replayed turn (`think_time`: "recorded", "none" or seconds; unset:
    # recorded where the corpus holds think times, else none) and `think_cap` (interfaces.think)
    think: ThinkAsked = field(default_factory=lambda: ThinkAsked(cap_s=DEFAULT_THINK_CAP_S))
    # `require_soak = "2h"`: the gate answers N above one only where a soak at least this
    # long held at N (None: off)
    require_soak: float | None = None

    @property
    def step_cap_seconds(self) -> float:
        """The longest an inconclusive step is measured."""
        if self.max_step_seconds is None:
            longer = LATENCY_CAP_FACTOR if self._latency_lengthens_cap else 1.0
            return longer * MAX_STEP_FACTOR * self.min_step_seconds
        return max(self.max_step_seconds, self.min_step_seconds)

    @property
    def even_looks_seconds(self) -> float | None:
        """Where a step's planned looks stop being evenly spaced and double to the cap: the
        ordinary cap, where a latency bound lengthened it; None (to the cap) otherwise."""
        if self._latency_lengthens_cap:
            return MAX_STEP_FACTOR * self.min_step_seconds
        return None

    @property
    def _latency_lengthens_cap(self) -> bool:
        """The cap is derived (no max_step_seconds) and a latency bound is set."""
        return self.max_step_seconds is None and bool(self.bounds.latency_bounds)

    @property
    def production(self) -> str:
        return self.production_url or default_production_url(self.runner)

    def with_overrides(self, **changes: Any) -> LocalModels:
        return replace(self, **{k: v for k, v in changes.items() if v is not None})


def choose_config_file(value: str, environ: MutableMapping[str, str] | None = None) -> None:
    """The global `--config FILE`: name the file for this process and every child it starts
    (calibration runners, storms' lanes), as $VIBEY_GH_CONFIG does."""
    env = os.environ if environ is None else environ
    env[CONFIG_ENV] = str(Path(value).expanduser().absolute())


def find_config(cwd: Path | None = None, environ: Mapping[str, str] | None = None) -> Path | None:
    env = os.environ if environ is None else environ
    explicit = env.get(CONFIG_ENV)
    if explicit:
        path = Path(explicit).expanduser()
        if not path.is_file():
            raise ConfigError(f"config file {explicit} (--config or {CONFIG_ENV}): no such file")
        return path
    local = (cwd or Path.cwd()) / CONFIG_NAME
    if local.is_file():
        return local
    user = user_config_dir(env) / CONFIG_NAME
    return user if user.is_file() else None


def load_config(cwd: Path | None = None, environ: Mapping[str, str] | None = None) -> LocalModels:
    """Find and parse the config; defaults when there is none."""
    path = find_config(cwd, environ)
    if path is None:
        return LocalModels()
    try:
        raw = parsed_config_toml(read_regular_bytes(path, limit=CONFIG_SIZE_LIMIT), path, environ)
    except NotToml as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc})") from None
    except FileNotFoundError:
        raise ConfigError(f"{path}: cannot read (it went away)") from None
    except InputProblem as problem:
        raise ConfigError(f"config file {path} {problem}") from None
    return parse_config(raw, path)


def parse_config(raw: Mapping[str, Any], path: Path | None) -> LocalModels:
    where = str(path) if path else "config"
    unknown_top = set(raw) - {"local_models"}
    if unknown_top:
        key = sorted(unknown_top)[0]
        hint = did_you_mean(key, ("local_models",))
        raise ConfigError(f"{where}: unknown table or key {key!r}{hint}")
    table = raw.get("local_models", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: [local_models] must be a table")
    reader = TableReader(table, where, "local_models")
    bounds_raw = table.get("bounds", {})
    if not isinstance(bounds_raw, dict):
        raise ConfigError(f"{where}: local_models.bounds must be a table")
    bounds = read_table(bounds_raw, Bounds, where, "local_models.bounds")
    simulated_raw = table.get(SIMULATED_TABLE, {})
    if not isinstance(simulated_raw, dict):
        raise ConfigError(f"{where}: local_models.{SIMULATED_TABLE} must be a table")
    simulated = read_capacity(TableReader(simulated_raw, where, f"local_models.{SIMULATED_TABLE}"))
    runner = reader.choice("runner", registered_names(), DEFAULT_RUNNER)
    shortest, longest = _step_seconds(reader)
    config = LocalModels(
        concurrent_runs=reader.declaration("concurrent_runs"),
        runner=runner,
        model=reader.string("model", "default"),
        window=reader.integer("window", 4096, low=MIN_WINDOW, high=MAX_WINDOW),
        production_url=reader.url("production_url"),
        calibration_port=reader.integer("calibration_port", 11435, low=1, high=65535),
        runner_binary=reader.optional_string("runner_binary"),
        max_tokens=reader.integer("max_tokens", 768, low=1, high=1 << 20),
        stale_after_days=reader.number("stale_after_days", 30.0, low=0.0, high=3650.0),
        bounds=bounds,
        source=path,
        runner_args=reader.runner_args("runner_args"),
        runner_env=reader.runner_env("runner_env"),
        simulated=simulated,
        min_step_seconds=shortest,
        max_step_seconds=longest,
        interleave_seconds=_interleave_seconds(reader),
        think=_think(reader),
        require_soak=_require_soak(reader),
    )
    reader.reject_unknown(extra={"bounds", SIMULATED_TABLE})
    return config


def _step_seconds(reader: TableReader) -> tuple[float, float | None]:
    """min_step_seconds, and max_step_seconds (None: five times the minimum)."""
    low, high = STEP_SECONDS_RANGE
    shortest = reader.number("min_step_seconds", MIN_STEP_SECONDS, low=low, high=high)
    if reader.table.get("max_step_seconds") is None:
        reader.seen.add("max_step_seconds")
        return shortest, None
    longest = reader.number("max_step_seconds", 0.0, low=low, high=MAX_STEP_FACTOR * high)
    if longest < shortest:
        raise reader.fail(
            "max_step_seconds", f"must be at least min_step_seconds ({shortest:g}), not {longest:g}"
        )
    return shortest, longest


def _interleave_seconds(reader: TableReader) -> float | None:
    """interleave_seconds: the block length of an interleaved step (None: unset, off)."""
    if reader.table.get("interleave_seconds") is None:
        reader.seen.add("interleave_seconds")
        return None
    low, high = INTERLEAVE_SECONDS_RANGE
    return reader.number("interleave_seconds", 0.0, low=low, high=high)


def _think(reader: TableReader) -> ThinkAsked:
    """think_time and think_cap, parsed once into the value the command line's lays over."""
    think_time = reader.table.get("think_time")
    think_cap = reader.table.get("think_cap", DEFAULT_THINK_CAP_S)
    reader.seen.update(("think_time", "think_cap"))
    problem = f'must be "recorded", "none" or a number of seconds from 0 to {MAX_THINK_S:g}'
    if isinstance(think_time, str) and think_time not in ("recorded", "none"):
        # the command line's --think-time is text; in the file a number is written as one
        raise reader.fail("think_time", f"{problem} (a number, not the string {think_time!r})")
    try:
        mode, fixed = (None, 0.0) if think_time is None else parse_think_time(think_time)
    except BadInput:
        raise reader.fail("think_time", f"{problem}, not {think_time!r}") from None
    try:
        cap = check_think_cap(think_cap)
    except BadInput:
        cap_problem = f"must be a number of seconds above 0 and at most {MAX_THINK_S:g}"
        raise reader.fail("think_cap", f"{cap_problem}, not {think_cap!r}") from None
    return ThinkAsked(mode, fixed, cap)


def _require_soak(reader: TableReader) -> float | None:
    value = reader.optional_string("require_soak")
    if value is None or value.strip().lower() in ("", "off", "none"):
        return None
    try:
        return parse_duration(value, "require_soak")
    except BadInput as exc:
        raise reader.fail("require_soak", str(exc).removeprefix("require_soak ")) from None


def read_table(table: Mapping[str, Any], schema: type[S], where: str, prefix: str) -> S:
    """A config table as the record `schema` declares: unknown keys, non-finite numbers and
    values outside a field's declared type or range refused as one ConfigError naming
    `prefix.key` and what the key takes (`interfaces.schema`). The declaration is inspected
    only on a mistake: `slots allowed` reads the config on every answer."""
    reader = TableReader(table, where, prefix)
    reader.seen.update(schema.__struct_fields__)
    reader.reject_unknown()
    problem = None
    for key, value in table.items():
        if isinstance(value, float) and not math.isfinite(value):
            problem = key
    try:
        if problem is None:
            return msgspec.convert(dict(table), schema, strict=True)
    except msgspec.ValidationError as exc:
        _, path = error_path(exc)
        problem = str(path[0]) if path else ""
    declared = fields_of(schema)
    if problem not in declared:
        raise ConfigError(f"{where}: {prefix} could not be read")
    raise reader.fail(problem, value_problem(declared[problem], table.get(problem)))
