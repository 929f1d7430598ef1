"""The simulated kind (`contract.RunnerKind`): llama-server's API over a capacity model, served
by this package; `registry` names it. It speaks llama.cpp's API, so it is watched, chatted with
and its log read as the llama.cpp kinds are (`llamacpp.kinds.LlamaCppFamily`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from msgspec.structs import replace

from ..contract import OK, Check
from ..llamacpp.kinds import LlamaCppFamily, identity
from .settings import SimulatedModel

if TYPE_CHECKING:
    from ...interfaces.identity import RunnerInfo
    from ...state import StateLayout
    from ..contract import Runner, RunnerConfig


class SimulatedKind(LlamaCppFamily):
    """llama-server's API over a capacity model, served by this package."""

    name = "simulated"
    # the server's module; the second is where an earlier version of this package kept it
    process_names = ("vibey_gh.runners.simulated.server", "vibey_gh.runners.simulated_server")
    calibrates_this_package = True

    def production_identity(self, config: RunnerConfig, state: StateLayout | None) -> RunnerInfo:
        # lazy: the capacity model's digest loads hashlib, which no other kind's gate needs
        from .model import simulated_identity

        # its production is `vibey-gh runner serve --runner simulated`: it says its slots
        return replace(
            simulated_identity(capacity_of(config)),
            serving_slots=identity().served_slots(config.production),
        )

    def model_file_bytes(self, config: RunnerConfig) -> int | None:
        """None: the capacity model has no file."""
        return None

    def model_check(self, config: RunnerConfig, production: RunnerInfo | None) -> Check:
        return Check("model", OK, "the simulated runner's capacity model")

    def calibration_runner(
        self,
        state: StateLayout | None = None,
        config: RunnerConfig | None = None,
    ) -> Runner:
        # lazy: the server and its httpx client cost `slots allowed` more than its budget
        from .runner import SimulatedRunner

        return SimulatedRunner(capacity_of(config) if config else None, state)


def capacity_of(config: RunnerConfig) -> SimulatedModel:
    """The capacity model a config names (`[local_models.simulated]`); the default one for a
    config that names none. The runner contract leaves it out: only this kind reads it."""
    model = getattr(config, "simulated", None)
    return model if isinstance(model, SimulatedModel) else SimulatedModel()
