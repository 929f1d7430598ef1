"""Who the calibration runner will be, before it starts: its binary's version and the model's
digest, read from the binary and the model store rather than from a running production.

This is what a calibration compares with production before its first step (a version
mismatch is refused then, not after hours of sweeping), and what it is keyed to when
production is not running at all. The versions are spelled as production spells them, so the
same build gives the same fingerprint either way:

    llama-server --version   "version: 4747 (2d219b38)"                   -> "b4747-2d219b38"
                             "version: 0.6.0-dev (build 11434, commit x)" -> "b11434-x"
    ollama --version         "Warning: client version is 0.12.3"          -> "0.12.3"

`ollama --version` also asks a server for its version; it is pointed at the calibration port,
where nothing listens yet, so the answer is always the binary's own.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from ..config import LocalModels
from ..errors import BadInput, RunnerError
from ..interfaces.identity import RunnerInfo
from ..state import StateLayout
from .ollama.settings import MODELS_VARIABLE, calibration_base_env, production_settings
from .process import LOOPBACK, find_executable

VERSION_TIMEOUT_S = 30.0
OLLAMA_REGISTRY = "registry.ollama.ai"
OLLAMA_NAMESPACE = "library"
OLLAMA_TAG = "latest"

_LLAMA_OLD = re.compile(r"version:\s*(\d+)\s*\(([^)\s]+)\)")
_LLAMA_NEW = re.compile(r"\(build\s+(\d+),\s*commit\s+([^)\s]+)\)")
_OLLAMA_CLIENT = re.compile(r"client version is\s+(\S+)")
_OLLAMA_ANY = re.compile(r"version is\s+(\S+)")


def llama_server_version(text: str) -> str | None:
    """`llama-server --version` output as /props spells build_info ("b4747-2d219b38")."""
    match = _LLAMA_NEW.search(text) or _LLAMA_OLD.search(text)
    return f"b{match.group(1)}-{match.group(2)}" if match else None


def ollama_version(text: str) -> str | None:
    """The client's version in `ollama --version` output, as /api/version spells it."""
    match = _OLLAMA_CLIENT.search(text) or _OLLAMA_ANY.search(text)
    return match.group(1) if match else None


def run_version_command(argv: Sequence[str], env: Mapping[str, str] | None = None) -> str:
    """stdout and stderr of a `--version` call; RunnerError when it cannot run or fails."""
    try:
        done = subprocess.run(
            list(argv),
            capture_output=True,
            text=True,
            errors="replace",
            timeout=VERSION_TIMEOUT_S,
            env=dict(env) if env is not None else None,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RunnerError(f"`{' '.join(argv)}` could not run: {exc}") from None
    output = (done.stdout or "") + (done.stderr or "")
    if done.returncode != 0:
        last = [line for line in output.splitlines() if line.strip()][-1:] or ["no output"]
        raise RunnerError(f"`{' '.join(argv)}` exited {done.returncode}: {last[0]}")
    return output


def check_runner_args(binary: str, runner_args: Sequence[str]) -> str:
    """Run `llama-server RUNNER_ARGS --version`: llama-server parses its arguments in order, so
    an unknown flag or a bad value is refused before --version prints. The output, or BadInput
    with llama-server's own complaint."""
    argv = [binary, *runner_args, "--version"]
    try:
        return run_version_command(argv)
    except RunnerError as exc:
        if not runner_args:
            raise
        raise BadInput(f"runner_args: llama-server refuses them: {exc}") from None


def ollama_manifest(models_dir: Path, model: str) -> Path:
    """Where Ollama keeps `model`'s manifest: manifests/<host>/<namespace>/<name>/<tag>."""
    name, _, tag = model.partition(":")
    parts = name.split("/")
    if len(parts) == 1:
        parts = [OLLAMA_REGISTRY, OLLAMA_NAMESPACE, *parts]
    elif len(parts) == 2:
        parts = [OLLAMA_REGISTRY, *parts]
    return models_dir.joinpath("manifests", *parts, tag or OLLAMA_TAG)


def manifest_digest(path: Path) -> str:
    """The digest /api/tags gives a model: the sha256 of its manifest file, in hex."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def calibration_binary_version(
    config: LocalModels, environ: Mapping[str, str] | None = None
) -> tuple[str, str | None]:
    """The calibration binary's path and version (None: its --version names none), reading
    no model; RunnerNotFound / RunnerError / BadInput when it cannot be found or run."""
    if config.runner == "llama-server":
        binary = find_executable(config.runner_binary, "llama-server")
        return binary, llama_server_version(check_runner_args(binary, config.runner_args))
    binary = find_executable(config.runner_binary, "ollama")
    run_env = calibration_base_env(
        production_settings(config), os.environ if environ is None else environ
    )
    run_env["OLLAMA_HOST"] = f"{LOOPBACK}:{config.calibration_port}"
    return binary, ollama_version(run_version_command([binary, "--version"], run_env))


def identify_calibration_binary(
    config: LocalModels,
    state: StateLayout | None = None,
    environ: Mapping[str, str] | None = None,
) -> RunnerInfo:
    """The calibration runner's identity from its binary and the model store, starting no
    server. The embedded runner is the installed package: the same as production's."""
    from .llamacpp.identify import gguf_identity

    env = os.environ if environ is None else environ
    if config.runner == "embedded":
        from .llamacpp.versions import embedded_version

        return gguf_identity(config, embedded_version(), state)
    if config.runner == "llama-server":
        binary = find_executable(config.runner_binary, "llama-server")
        version = llama_server_version(check_runner_args(binary, config.runner_args))
        info = gguf_identity(config, version, state)
        if version is None:
            info.missing["version"] = f"`{binary} --version` did not name a build"
        return info
    binary = find_executable(config.runner_binary, "ollama")
    settings = production_settings(config)
    run_env = calibration_base_env(settings, env)
    run_env["OLLAMA_HOST"] = f"{LOOPBACK}:{config.calibration_port}"
    version = ollama_version(run_version_command([binary, "--version"], run_env))
    missing: dict[str, str] = {}
    if version is None:
        missing["version"] = f"`{binary} --version` did not name a version"
    manifest = ollama_manifest(Path(run_env[MODELS_VARIABLE]), config.model)
    try:
        digest: str | None = manifest_digest(manifest)
    except OSError as exc:
        digest = None
        missing["model_digest"] = f"no manifest for {config.model} at {manifest} ({exc.strerror})"
    info = RunnerInfo("ollama", version, config.model, digest, missing)
    return replace(
        info,
        settings=settings.fingerprinted,
        settings_source=settings.source,
        serving_slots=None,
    )
