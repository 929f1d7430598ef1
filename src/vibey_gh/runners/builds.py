"""A production's build where its version names none (a llama-server or Ollama built from
source): the version keyed to the sha256 of the binary that runs it (`keyed_to_binary`), that
binary found listening on production's port (`production_binary`).

Finding the process that listens on production's port reads every socket of the machine, tens
of milliseconds that `slots allowed` cannot spend on every answer. So the listener found is
cached under the state root, and believed only while that very process — the same pid, start
time and executable — still runs (it keeps its port while it does). The cache is disposable; a
damaged or stale one is found again, never trusted.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from urllib.parse import urlsplit

from ..files import atomic_write_json
from ..guarded import MIB, InputProblem, loads_json, read_regular_text
from ..interfaces.identity import BINARY_DIGEST_SHOWN, BINARY_MARK, names_no_build
from ..state import StateLayout
from .digest import cached_sha256

CACHE_NAME = "production-listener.json"
CACHE_SCHEMA = 1
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


def production_binary(production_url: str, state: StateLayout | None = None) -> Path | None:
    """The executable listening on production's port when production is on this machine and
    the system tells; else None."""
    # lazy: psutil is loaded only for a production whose build names none, never on the gate
    from ..platforms.process.ports import Listener, port_listener, still_running

    port = _local_port(production_url)
    if port is None:
        return None
    try:
        cache = state.cache / CACHE_NAME if state is not None else None  # none: found each time
    except OSError:
        cache = None
    cached = _read(cache, port) if cache is not None else None
    if cached is not None and still_running(Listener(*cached)):
        return Path(cached[2])
    found = port_listener(port)
    if found is None:
        return None
    if cache is not None:
        entry = {"port": port, "pid": found.pid, "create_time": found.create_time,
                 "executable": found.executable}  # fmt: skip
        with contextlib.suppress(OSError):  # unwritten, it costs the next answer a scan
            atomic_write_json(cache, {"schema_version": CACHE_SCHEMA, "listener": entry})
    return Path(found.executable)


def _local_port(production_url: str) -> int | None:
    try:
        url = urlsplit(production_url)
        host, port = url.hostname, url.port
    except ValueError:
        return None
    return port if host in LOCAL_HOSTS else None


def _read(cache: Path, port: int) -> tuple[int, float, str] | None:
    """(pid, start time, executable) of the cached listener on `port`, or None."""
    try:
        data = loads_json(read_regular_text(cache, limit=MIB))
    except (OSError, InputProblem):
        return None
    entry = data.get("listener") if isinstance(data, dict) else None
    if not isinstance(data, dict) or data.get("schema_version") != CACHE_SCHEMA:
        return None
    if not isinstance(entry, dict) or entry.get("port") != port:
        return None
    pid, created, executable = entry.get("pid"), entry.get("create_time"), entry.get("executable")
    if not (isinstance(pid, int) and not isinstance(pid, bool) and pid > 0):
        return None
    if not isinstance(created, int | float) or isinstance(created, bool):
        return None
    if not isinstance(executable, str) or not executable:
        return None
    return pid, float(created), executable


def production_version(
    version: str | None, production_url: str, state: StateLayout | None = None
) -> tuple[str | None, str | None]:
    """Production's `version`, keyed to the binary that listens on its port when it names no
    build (`keyed_to_binary`); with why it could not be keyed (None when it was, or needs not
    be): evidence keyed to a name that names nothing would pass between builds."""
    if not names_no_build(version):
        return version, None
    binary = production_binary(production_url, state)
    keyed = keyed_to_binary(version, binary, state) if binary is not None else None
    if keyed is None:
        return version, (
            f"production's build {version!r} names no build, and its binary could not be "
            "read to key the evidence by its sha256"
        )
    return keyed, None


def keyed_to_binary(
    version: str | None, binary: str | Path, state: StateLayout | None = None
) -> str | None:
    """`version` as it is when it names a build; else with `binary`'s sha256 joined to it
    ("b0-unknown+sha256:0123456789abcdef"); None when that binary cannot be read."""
    if version is None or not names_no_build(version):
        return version
    try:
        digest = cached_sha256(Path(binary), state)
    except OSError:
        return None
    return f"{version}{BINARY_MARK}{digest[:BINARY_DIGEST_SHOWN]}"
