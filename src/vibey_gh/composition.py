"""The composition root: the one place that builds the real parts the commands act through.

The CLI (`cli/main.py` builds one `Collaborators` per invocation), the storm
(`storm.setup.default_deps`), the `slots allowed` fast path (`cli/entry.py`) and, through the
CLI, the Helm chart's scripts all take the machine, the production runner, the state and the
clock from here. A test replaces some of the parts by keyword (`real_collaborators(probes=…)`)
and keeps the rest real; the suite does that through one fixture, `collaborators` in
tests/conftest.py.

Every part is built on first use: `slots allowed` is asked on every storm pass and pays only
for what its answer reads (a declared 1 reads nothing). What the gate reads is imported here;
the device probe, the platform's other probes, a calibration's world and the lanes' client are
imported by the function that builds them, the first time it is called.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import msgspec
from msgspec.structs import replace

from .clock import SYSTEM_CLOCK, Clock
from .runners.registry import identify_production as identify_production_of
from .runners.registry import production_drift as production_drift_of
from .runners.registry import runner_kind, runner_markers
from .slots.gate.allowed import AllowedAnswer, AllowedDeps, decide_allowed
from .state import StateLayout

if TYPE_CHECKING:
    from .config import LocalModels
    from .interfaces.slots_interface import DeviceFacts, RunnerInfo
    from .lanes.client import ChatClient
    from .platforms.device.probes import PlatformProbes
    from .slots.measurement.calibration_setup import Environment


class Collaborators(msgspec.Struct, frozen=True):
    """The parts of the world the commands touch, each built when it is first asked for.

    platform: the OS name the commands act for (None: this machine's). clock: wall and
    monotonic time. layout: where the state lives. probes: the device, memory and production
    footprint probes of `platform`. device: the device facts a fingerprint is made of.
    identify_production: what the production runner runs (kind, version, model digest,
    settings). production_drift: where production's own settings differ from the config.
    decide_allowed: what `slots allowed` answers for a config already read.
    calibration_environment: everything a calibration touches (runner, memory sampler,
    production watch and footprint, log source, fingerprint). production_client: a chat client
    for the production runner (lanes).
    """

    platform: str | None
    clock: Clock
    layout: Callable[[], StateLayout]
    probes: Callable[[], PlatformProbes]
    device: Callable[[], DeviceFacts]
    identify_production: Callable[[LocalModels], RunnerInfo]
    production_drift: Callable[[LocalModels], list[str]]
    decide_allowed: Callable[[LocalModels], AllowedAnswer]
    calibration_environment: Callable[[LocalModels, StateLayout | None], Environment]
    production_client: Callable[[LocalModels], ChatClient]

    def allowed_deps(self) -> AllowedDeps:
        """What the allowed answer and `slots show` read from the world."""
        return _allowed_deps(self.layout, self.clock, self.device, self.identify_production)

    def answer_allowed(self, model: str | None, window: int | None) -> AllowedAnswer:
        """`slots allowed` as asked on the command line: the config is read here, and one that
        does not parse is the answer's reason (1), as is an unsupported platform."""
        return decide_allowed(
            model=model, window=window, platform=self.platform, deps=self.allowed_deps
        )

    def what_if_allowed(self, config: LocalModels) -> AllowedAnswer:
        """What `slots allowed` would answer for `config`, filing no calibration request: a
        command that only says what the gate would do leaves nothing behind."""
        deps = replace(self.allowed_deps(), files_requests=False)
        return decide_allowed(config, platform=self.platform, deps=deps)


def real_collaborators(
    *,
    platform: str | None = None,
    clock: Clock = SYSTEM_CLOCK,
    layout: Callable[[], StateLayout] | None = None,
    probes: Callable[[], PlatformProbes] | None = None,
    device: Callable[[], DeviceFacts] | None = None,
    identify_production: Callable[[LocalModels], RunnerInfo] | None = None,
    production_drift: Callable[[LocalModels], list[str]] | None = None,
    decide_allowed: Callable[[LocalModels], AllowedAnswer] | None = None,
    calibration_environment: Callable[[LocalModels, StateLayout | None], Environment] | None = None,
    production_client: Callable[[LocalModels], ChatClient] | None = None,
) -> Collaborators:
    """The real parts, except those given: a part left out is built from the parts given (the
    device from the probes given, the allowed answer from the layout, clock, device and
    identification given), so a replaced part is the one every command sees."""
    layout = layout or _state_layout
    # the device from the probes given; else the device probe alone (allowed reads no more)
    device = device or (_device_of(probes) if probes else _device_here(platform))
    probes = probes or _probes_of(platform)
    identify = identify_production or _identify_production_in(layout)

    def allowed_deps() -> AllowedDeps:
        return _allowed_deps(layout, clock, device, identify)

    return Collaborators(
        platform=platform,
        clock=clock,
        layout=layout,
        probes=probes,
        device=device,
        identify_production=identify,
        production_drift=production_drift or _production_drift,
        decide_allowed=decide_allowed or _decide_with(platform, allowed_deps),
        calibration_environment=calibration_environment or _environment_with(probes, clock),
        production_client=production_client or _production_client,
    )


def _allowed_deps(
    layout: Callable[[], StateLayout],
    clock: Clock,
    device: Callable[[], DeviceFacts],
    identify: Callable[[LocalModels], RunnerInfo],
) -> AllowedDeps:
    return AllowedDeps(layout(), clock, device, identify)


def _state_layout() -> StateLayout:
    return StateLayout.from_env()


def _probes_of(platform: str | None) -> Callable[[], PlatformProbes]:
    def probes() -> PlatformProbes:
        # lazy: memory samplers, sensors and the process footprint (psutil) serve a
        # calibration; `slots allowed` builds the device probe alone
        from .platforms.device.probes import PlatformProbes

        return PlatformProbes.detect() if platform is None else PlatformProbes.detect(platform)

    return probes


def _device_of(probes: Callable[[], PlatformProbes]) -> Callable[[], DeviceFacts]:
    return lambda: probes().device.describe()


def _device_here(platform: str | None) -> Callable[[], DeviceFacts]:
    def device() -> DeviceFacts:
        # lazy: a declared concurrent_runs is answered without probing the device
        from .platforms.device.device_probe import detect_device

        return (detect_device() if platform is None else detect_device(platform)).describe()

    return device


def _identify_production_in(
    layout: Callable[[], StateLayout],
) -> Callable[[LocalModels], RunnerInfo]:
    def identify(config: LocalModels) -> RunnerInfo:
        # the model digest's cache lives under this state root
        return identify_production_of(config, layout())

    return identify


def _production_drift(config: LocalModels) -> list[str]:
    return production_drift_of(config)


def _production_client(config: LocalModels) -> ChatClient:
    # lazy: a lane's chat client (httpx) is never the gate's
    from .lanes.client import production_client

    return production_client(config)


def _environment_with(
    probes: Callable[[], PlatformProbes], clock: Clock
) -> Callable[[LocalModels, StateLayout | None], Environment]:
    def environment(config: LocalModels, layout: StateLayout | None = None) -> Environment:
        return build_environment(config, layout, probes(), clock)

    return environment


def build_environment(
    config: LocalModels,
    layout: StateLayout | None = None,
    probes: PlatformProbes | None = None,
    clock: Clock = SYSTEM_CLOCK,
) -> Environment:
    """A calibration's world for `config`: the runner, the memory sampler, production's watch
    and footprint, the log source and the identities, on this machine's probes and state root
    unless given (scripts and tests call it directly; commands through `Collaborators`)."""
    # lazy: a calibration's world (the measurement stage, its runners and readings) is tens of
    # ms that `slots allowed`, which starts from this module, never spends
    from .slots.measurement.calibration_setup import Environment, log_source

    probes = probes or _probes_of(None)()
    state = layout or StateLayout.from_env()
    kind = runner_kind(config.runner)
    # the embedded and simulated calibration runners are the installed package production runs
    separate_binary = not kind.calibrates_this_package
    return Environment(
        layout=state,
        clock=clock,
        device=probes.device.describe(),
        production_identity=lambda: kind.identify_production(config, state),
        production=kind.watch(config.production),
        memory=probes.memory,
        runner=kind.calibration_runner(state=state, config=config),
        log_source=log_source,
        calibration_watch=kind.watch,
        calibration_identity=(
            (lambda: kind.identify_calibration(config, state)) if separate_binary else None
        ),
        production_drift=lambda: kind.production_drift(config),
        production_footprint=probes.production_footprint(
            config.production, kind.default_port, kind.process_names, runner_markers()
        ),
        calibration_model_bytes=lambda: kind.model_file_bytes(config),
        sensors=probes.sensors,
    )


def _decide_with(
    platform: str | None, allowed_deps: Callable[[], AllowedDeps]
) -> Callable[[LocalModels], AllowedAnswer]:
    def decide(config: LocalModels) -> AllowedAnswer:
        return decide_allowed(config, deps=allowed_deps, platform=platform)

    return decide
