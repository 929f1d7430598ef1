"""Production's footprint: what the production runner's process tree holds, read once a second.

A production llama-server keeps its model loaded while calibration runs beside it, so the
machine's used memory holds both runners; production at N slots would replace what production
holds now, not add to it (design §5, Bounds). This reads production's share: the process
listening on production_url's port with its children (llama-server, Ollama's runner), their
counted resident memory, and their per-process GPU memory from NVML.

Finding the listener walks every process, so it is done once and again only when the found
process has gone (production restarted) or, while none is found, every `retry_s` seconds.
"""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Callable, Iterable, Sequence
from typing import Protocol
from urllib.parse import urlsplit

import msgspec

from ...clock import SYSTEM_CLOCK, Clock
from ..nvidia import GpuProcesses
from ..process.process_tree import (
    counted_memory_note,
    counted_resident_bytes,
    find_listener,
    is_running,
    tree_pids,
)

RETRY_S = 10.0
LOCAL_NAMES = {"localhost", "ip6-localhost"}


class GpuProcessSource(Protocol):
    def process_memory(self) -> GpuProcesses: ...


class FootprintReading(msgspec.Struct, frozen=True):
    """What production held at one moment.

    host_bytes: counted resident memory of production's tree; None when production could not
      be identified on this machine (then nothing is left out: everything is charged).
    gpu_bytes: per GPU index, production's GPU memory (0 where it holds none); a GPU maps to
      None where NVML cannot say; None when there is no NVIDIA GPU or production is unknown.
    how: how production was identified and what was left out, or why nothing was.
    """

    host_bytes: int | None
    gpu_bytes: dict[int, int | None] | None
    how: str
    pids: tuple[int, ...] = ()


def is_this_machine(host: str | None) -> bool:
    if not host or host.lower() in LOCAL_NAMES:
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host.lower() == socket.gethostname().lower()
    return address.is_loopback or address.is_unspecified


def production_port(url: str, default_port: int) -> int:
    try:
        return urlsplit(url).port or default_port
    except ValueError:
        return default_port


class ProductionFootprint:
    """Reads production's footprint (see the module's note). `default_port`: where production
    listens when its URL names no port; `process_names`: what its process may be called (both
    the runner kind's); `markers`: what marks a model runner's process of any kind. `exclude`
    gives pids never taken for production: the calibration runner's tree and this process."""

    def __init__(
        self,
        production_url: str,
        default_port: int,
        process_names: Sequence[str],
        markers: Sequence[str],
        family: str,
        gpus: GpuProcessSource | None,
        clock: Clock = SYSTEM_CLOCK,
        exclude: Callable[[], Iterable[int]] = lambda: (os.getpid(),),
        retry_s: float = RETRY_S,
    ) -> None:
        self._url = production_url
        self._default_port = default_port
        self._process_names = tuple(process_names)
        self._markers = tuple(markers)
        self._family = family
        self._gpus = gpus
        self._clock = clock
        self._exclude = exclude
        self._retry_s = retry_s
        self._root: int | None = None
        self._how = ""
        self._searched_at: float | None = None

    def _identify(self) -> None:
        now = self._clock.monotonic()
        if self._root is not None and is_running(self._root):
            return
        recently = self._searched_at is not None and now - self._searched_at < self._retry_s
        if self._root is None and recently:
            return
        self._searched_at = now
        port = production_port(self._url, self._default_port)
        listener = find_listener(
            port, self._markers, self._process_names, exclude=set(self._exclude())
        )
        self._root, self._how = listener.pid, listener.how

    def read(self) -> FootprintReading:
        host = _hostname(self._url)
        if not is_this_machine(host):
            return FootprintReading(
                None, None, f"production runs on {host}, not this machine: nothing left out"
            )
        self._identify()
        pids = tree_pids(self._root) if self._root is not None else None
        if pids is None:
            why = self._how if self._root is None else f"production's {self._how}, but it ended"
            return FootprintReading(None, None, f"{why}: nothing left out")
        held, reason = counted_resident_bytes(pids, self._family)
        if held is None:
            return FootprintReading(None, None, f"{self._how}, but {reason}: nothing left out")
        gpu, gpu_note = self._gpu_bytes(pids)
        how = (
            f"{self._how}; its tree (pids {', '.join(map(str, pids))}) left out: "
            f"{counted_memory_note(self._family)}{gpu_note}"
        )
        return FootprintReading(held, gpu, how, pids)

    def _gpu_bytes(self, pids: tuple[int, ...]) -> tuple[dict[int, int | None] | None, str]:
        if self._gpus is None:
            return None, ""
        listed = self._gpus.process_memory()
        if not listed.by_gpu:
            return None, ""
        wanted = set(pids)
        per_gpu: dict[int, int | None] = {}
        for index, processes in listed.by_gpu.items():
            held = [used for pid, used in processes.items() if pid in wanted]
            per_gpu[index] = None if None in held else sum(u for u in held if u is not None)
        note = ", and its GPU memory from NVML's process list"
        if listed.reason:
            note += f" ({listed.reason})"
        return per_gpu, note


def _hostname(url: str) -> str | None:
    try:
        return urlsplit(url).hostname
    except ValueError:
        return None
