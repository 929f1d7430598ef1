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
from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import field, replace
from pathlib import Path
from typing import Any, Literal

from .config_cache import NotToml, parsed_config_toml
from .errors import BadInput, ConfigError
from .guarded import MIB, InputProblem, read_regular_text
from .interfaces.bounds import Bounds
from .interfaces.runner_names import DEFAULT_RUNNER, RUNNER_NAMES, default_production_url
from .interfaces.think import DEFAULT_THINK_CAP_S, check_think_cap, parse_think_time
from .interfaces.values import frozen_value
from .userdirs import user_config_dir

CONFIG_ENV = "VIBEY_GH_CONFIG"
CONFIG_NAME = "vibey-gh.toml"
CONFIG_SIZE_LIMIT = MIB
MIN_WINDOW = 256
MAX_WINDOW = 1 << 24
MIN_STEP_SECONDS = 60.0
# A step inconclusive after min_step_seconds is measured longer, up to this many times as long.
MAX_STEP_FACTOR = 5.0
STEP_SECONDS_RANGE = (0.1, 86_400.0)

Declaration = int | Literal["measured"]

# llama-server arguments the calibration sets itself for every step (slots, window, where it
# listens, which model): production's own values for these would contradict the measurement.
OWNED_RUNNER_ARGS = frozenset(
    {"-m", "--model", "-np", "--parallel", "-c", "--ctx-size", "--host", "--port"}
)
RUNNER_ENV_PREFIX = "OLLAMA_"


@frozen_value
class SimulatedModel:
    """`[local_models.simulated]`: the capacity model of the simulated runner.

    knee: the slot count after which throughput stops growing. noise: per-turn multiplicative
    spread of the service time (0 = none). seed: of the noise. tokens_per_second: one slot's
    decode speed. scaling: how the runner's speed grows with the turns in flight: N of them
    share min(N, knee)^scaling times one slot's speed (1 = linear up to the knee; 0.5 = √N).
    throttle_after_s: busy seconds (any turn in flight) after which the runner slows down to
    `throttle_factor` of its speed, as a machine that heats up does (None: never). Neither is
    part of the model's name: throttling is the machine's, not the model's, as on real hardware.
    """

    knee: int = 4
    noise: float = 0.1
    seed: int = 0
    tokens_per_second: float = 400.0
    scaling: float = 1.0
    throttle_after_s: float | None = None
    throttle_factor: float = 0.5


@frozen_value
class LocalModels:
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
    # production gets it, see runners/settings.py)
    runner_args: tuple[str, ...] = ()
    runner_env: dict[str, str] | None = None
    min_step_seconds: float = MIN_STEP_SECONDS
    max_step_seconds: float | None = None  # None: MAX_STEP_FACTOR × min_step_seconds
    simulated: SimulatedModel = field(default_factory=lambda: SimulatedModel())
    # the wait before each replayed turn: "recorded", "none" or seconds; None: recorded where
    # the corpus holds think times, else none (interfaces.think)
    think_time: str | float | None = None
    think_cap: float = DEFAULT_THINK_CAP_S
    # `require_soak = "2h"`: the gate answers N above one only where a soak at least this
    # long held at N (None: off)
    require_soak: float | None = None

    @property
    def step_cap_seconds(self) -> float:
        """The longest an inconclusive step is measured."""
        if self.max_step_seconds is None:
            return MAX_STEP_FACTOR * self.min_step_seconds
        return max(self.max_step_seconds, self.min_step_seconds)

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
        raw = parsed_config_toml(read_regular_text(path, limit=CONFIG_SIZE_LIMIT), path, environ)
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
    reader = _Reader(table, where, "local_models")
    bounds_raw = table.get("bounds", {})
    if not isinstance(bounds_raw, dict):
        raise ConfigError(f"{where}: local_models.bounds must be a table")
    bounds = _parse_bounds(_Reader(bounds_raw, where, "local_models.bounds"))
    simulated_raw = table.get("simulated", {})
    if not isinstance(simulated_raw, dict):
        raise ConfigError(f"{where}: local_models.simulated must be a table")
    simulated = _parse_simulated(_Reader(simulated_raw, where, "local_models.simulated"))
    runner = reader.choice("runner", RUNNER_NAMES, DEFAULT_RUNNER)
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
        think_time=_think_time(reader),
        think_cap=_think_cap(reader),
        require_soak=_require_soak(reader),
    )
    reader.reject_unknown(extra={"bounds", "simulated"})
    return config


def _step_seconds(reader: _Reader) -> tuple[float, float | None]:
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


def _think_time(reader: _Reader) -> str | float | None:
    value = reader.table.get("think_time")
    reader.seen.add("think_time")
    if value is None:
        return None
    try:
        mode, seconds = parse_think_time(value, "think_time")
    except BadInput:
        raise reader.fail(
            "think_time", f'must be "recorded", "none" or seconds >= 0, not {value!r}'
        ) from None
    return seconds if mode == "fixed" else mode


def _think_cap(reader: _Reader) -> float:
    value = reader.table.get("think_cap", DEFAULT_THINK_CAP_S)
    reader.seen.add("think_cap")
    try:
        return check_think_cap(value, "think_cap")
    except BadInput:
        problem = f"must be a number of seconds above 0, not {value!r}"
        raise reader.fail("think_cap", problem) from None


def _require_soak(reader: _Reader) -> float | None:
    from .interfaces.durations import parse_duration

    value = reader.optional_string("require_soak")
    if value is None or value.strip().lower() in ("", "off", "none"):
        return None
    try:
        return parse_duration(value, "require_soak")
    except BadInput as exc:
        raise reader.fail("require_soak", str(exc).removeprefix("require_soak ")) from None


def _parse_simulated(reader: _Reader) -> SimulatedModel:
    defaults = SimulatedModel()
    model = SimulatedModel(
        knee=reader.integer("knee", defaults.knee, low=1, high=1024),
        noise=reader.number("noise", defaults.noise, low=0.0, high=10.0),
        seed=reader.integer("seed", defaults.seed, low=0, high=(1 << 63) - 1),
        tokens_per_second=reader.number(
            "tokens_per_second", defaults.tokens_per_second, low=0.001, high=1e9
        ),
        scaling=reader.number("scaling", defaults.scaling, low=0.0, high=1.0),
        throttle_after_s=reader.optional_at_least("throttle_after_s", 0.0),
        throttle_factor=reader.number(
            "throttle_factor", defaults.throttle_factor, low=0.01, high=1.0
        ),
    )
    reader.reject_unknown()
    return model


def _parse_bounds(reader: _Reader) -> Bounds:
    defaults = Bounds()
    bounds = Bounds(
        wired_ceiling=reader.number("wired_ceiling", defaults.wired_ceiling, low=0.01, high=1.0),
        swap_factor=reader.number("swap_factor", defaults.swap_factor, low=0.0, high=1000.0),
        swap_floor_mb_per_min=reader.number(
            "swap_floor_mb_per_min", defaults.swap_floor_mb_per_min, low=0.0, high=1e9
        ),
        fidelity_tolerance=reader.number(
            "fidelity_tolerance", defaults.fidelity_tolerance, low=0.0, high=1.0
        ),
        min_gain=reader.number("min_gain", defaults.min_gain, low=0.0, high=100.0),
        patience=reader.integer("patience", defaults.patience, low=1, high=100),
        confidence=reader.number("confidence", defaults.confidence, low=0.5, high=0.999),
        # latency objectives: off unless set
        ttft_p95_seconds=reader.optional_above("ttft_p95_seconds", 0.0),
        itl_p95_seconds=reader.optional_above("itl_p95_seconds", 0.0),
        latency_factor=reader.optional_at_least("latency_factor", 1.0),
    )
    reader.reject_unknown()
    return bounds


def url_problem(value: str) -> str | None:
    """What makes `value` unusable as a runner's base URL, or None: the scheme, the host and
    the port are all checked here, so no later use of the URL can fail on them."""
    from urllib.parse import urlsplit

    if not value.isprintable() or any(c.isspace() for c in value):
        return f"{value!r} holds spaces or control characters"
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError as exc:
        return f"{value!r}: {exc}"
    if parts.scheme not in ("http", "https"):
        return f"{value!r} is not http:// or https://"
    if not parts.hostname:
        return f"{value!r} names no host"
    if port == 0:
        return f"{value!r}: port 0 is not a port"
    if parts.query or parts.fragment or parts.username or parts.password:
        return f"{value!r} holds a query, fragment or credentials"
    return None


class _Reader:
    """Typed access to one TOML table that remembers which keys were read."""

    def __init__(self, table: Mapping[str, Any], where: str, prefix: str) -> None:
        self.table, self.where, self.prefix, self.seen = table, where, prefix, set[str]()

    def fail(self, key: str, problem: str) -> ConfigError:
        return ConfigError(f"{self.where}: {self.prefix}.{key} {problem}")

    def _get(self, key: str) -> Any:
        self.seen.add(key)
        return self.table.get(key)

    def integer(self, key: str, default: int, *, low: int, high: int) -> int:
        value = self._get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(key, f"must be an integer, not {value!r}")
        if not low <= value <= high:
            raise self.fail(key, f"must be between {low} and {high}, not {value}")
        return value

    def number(self, key: str, default: float, *, low: float, high: float) -> float:
        value = self._get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(key, f"must be a number, not {value!r}")
        if not low <= float(value) <= high:
            raise self.fail(key, f"must be between {low} and {high}, not {value}")
        return float(value)

    def _optional_finite(self, key: str) -> float | None:
        value = self._get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(key, f"must be a number, not {value!r}")
        if not math.isfinite(value):
            raise self.fail(key, f"must be a finite number, not {value}")
        return float(value)

    def optional_above(self, key: str, low: float) -> float | None:
        """A number above `low`, or None when the key is absent (the bound is off)."""
        value = self._optional_finite(key)
        if value is not None and value <= low:
            raise self.fail(key, f"must be above {low:g}, not {value:g}")
        return value

    def optional_at_least(self, key: str, low: float) -> float | None:
        value = self._optional_finite(key)
        if value is not None and value < low:
            raise self.fail(key, f"must be at least {low:g}, not {value:g}")
        return value

    def string(self, key: str, default: str) -> str:
        value = self._get(key)
        if value is None:
            return default
        if not isinstance(value, str) or not value.strip():
            raise self.fail(key, f"must be a non-empty string, not {value!r}")
        return value

    def optional_string(self, key: str) -> str | None:
        if self.table.get(key) is None:
            self.seen.add(key)
            return None
        return self.string(key, "")

    def choice(self, key: str, options: tuple[str, ...], default: str) -> str:
        value = self.string(key, default)
        if value not in options:
            raise self.fail(key, f"must be one of {', '.join(options)}, not {value!r}")
        return value

    def url(self, key: str) -> str | None:
        value = self.optional_string(key)
        if value is None:
            return None
        problem = url_problem(value)
        if problem is not None:
            raise self.fail(key, f"must be an http:// or https:// URL with a host ({problem})")
        return value.rstrip("/")

    def declaration(self, key: str) -> Declaration:
        value = self._get(key)
        if value is None:
            return 1
        if value == "measured":
            return "measured"
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise self.fail(key, f'must be 1, an integer above 1, or "measured", not {value!r}')
        return value

    def runner_args(self, key: str) -> tuple[str, ...]:
        """A list of extra llama-server arguments, none of them one the tool sets itself."""
        value = self._get(key)
        if value is None:
            return ()
        if not isinstance(value, list):
            raise self.fail(key, f"must be a list of strings, not {value!r}")
        for item in value:
            if not isinstance(item, str) or not item.strip():
                raise self.fail(key, f"must hold non-empty strings, not {item!r}")
            flag = item.split("=", 1)[0]
            if flag in OWNED_RUNNER_ARGS:
                raise self.fail(
                    key,
                    f"may not set {flag!r}: the calibration sets the model, slots, context size, "
                    "host and port itself",
                )
        return tuple(value)

    def runner_env(self, key: str) -> dict[str, str] | None:
        """A table of OLLAMA_* variables with string values."""
        value = self._get(key)
        if value is None:
            return None
        if not isinstance(value, dict):
            raise self.fail(key, f"must be a table of OLLAMA_* variables, not {value!r}")
        for name, setting in value.items():
            shown = f"{key}.{name}" if name.isprintable() else f"{key}.{name!r}"
            if not name.startswith(RUNNER_ENV_PREFIX) or not name[len(RUNNER_ENV_PREFIX) :]:
                raise self.fail(shown, "is not an OLLAMA_* variable")
            if not isinstance(setting, str):
                raise self.fail(shown, f"must be a string, not {setting!r}")
        return dict(value)

    def reject_unknown(self, extra: set[str] | None = None) -> None:
        known = self.seen | (extra or set())
        unknown = set(self.table) - known
        if unknown:
            key = sorted(unknown)[0]
            hint = did_you_mean(key, sorted(known))
            raise self.fail(key if key.isprintable() else repr(key), f"is not a known key{hint}")


def did_you_mean(word: str, choices: Sequence[str]) -> str:
    """' (did you mean "x"?)' for the closest choice to a misspelled word, else ''."""
    import difflib  # only on a mistake: every `slots allowed` reads the config

    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f' (did you mean "{close[0]}"?)' if close else ""
