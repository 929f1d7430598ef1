"""Parsers for the Linux files the probes read: /proc/meminfo, /proc/vmstat, /proc/cpuinfo,
/etc/os-release and cgroup memory files. Pure functions of the file text."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from pathlib import Path

import msgspec

KIB = 1024
# cgroup v1 reports "no limit" as PAGE_COUNTER_MAX rounded to a page (9223372036854771712 on
# x86-64); anything this large is no limit whatever the page size.
UNLIMITED_FLOOR = 1 << 62


def parse_meminfo(text: str) -> dict[str, int]:
    """`Name:  value kB` lines -> {name: bytes}; unit-less counts (HugePages_*) stay counts."""
    values: dict[str, int] = {}
    for line in text.splitlines():
        name, sep, rest = line.partition(":")
        parts = rest.split()
        if not sep or not parts:
            continue
        try:
            number = int(parts[0])
        except ValueError:
            continue
        values[name.strip()] = number * KIB if parts[1:2] == ["kB"] else number
    return values


_FIELD_PATTERNS: dict[tuple[str, ...], re.Pattern[str]] = {}


def pick_fields(text: str, names: tuple[str, ...]) -> dict[str, int]:
    """Only the named `name value` / `name: value kB` fields, in bytes where the unit is kB.

    The sampler's per-tick path: a search for a few names costs far less than parsing every
    line of /proc/vmstat.
    """
    pattern = _FIELD_PATTERNS.get(names)
    if pattern is None:
        alternatives = "|".join(re.escape(name) for name in names)
        pattern = re.compile(rf"^({alternatives}):?[ \t]+(\d+)( kB)?$", re.MULTILINE)
        _FIELD_PATTERNS[names] = pattern
    return {
        match.group(1): int(match.group(2)) * (KIB if match.group(3) else 1)
        for match in pattern.finditer(text)
    }


def parse_cpuinfo_processor(text: str) -> tuple[str | None, str | None]:
    """The CPU's name and the cpuinfo key(s) it came from.

    x86 has "model name"; older ARM kernels "Hardware" (the SoC); POWER "cpu"; MIPS
    "cpu model". Current arm64 kernels name nothing, so the implementer and part numbers
    stand in: they identify the core design, which is what the fingerprint needs.
    """
    found: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if sep and value and key not in found:
            found[key] = value
    for key in ("model name", "Hardware", "cpu model", "cpu"):
        if key in found:
            return found[key], key
    if "CPU implementer" in found and "CPU part" in found:
        name = f"CPU implementer {found['CPU implementer']} part {found['CPU part']}"
        return name, "CPU implementer, CPU part"
    return None, None


def parse_os_release(text: str) -> dict[str, str]:
    """os-release(5): KEY=value lines, values optionally shell-quoted."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, raw = line.partition("=")
        try:
            parts = shlex.split(raw)
        except ValueError:
            parts = [raw.strip("\"'")]
        values[key.strip()] = " ".join(parts)
    return values


def parse_cgroup_bytes(text: str) -> int | None:
    """A cgroup memory value in bytes; "max" (v2) or a v1 huge value means no limit (None)."""
    value = text.strip()
    if value == "max":
        return None
    number = int(value)
    return None if number >= UNLIMITED_FLOOR else number


class FileTree(msgspec.Struct, frozen=True):
    """The machine's files under an injected root; names are as on the machine ("/proc/...")."""

    root: Path

    def path(self, name: str) -> Path:
        return self.root / name.lstrip("/")

    def reader(self, name: str) -> Callable[[], tuple[str | None, str | None]]:
        """A reader of one file with its path resolved once (for per-tick reads)."""
        path = str(self.path(name))

        def read() -> tuple[str | None, str | None]:
            try:
                with open(path, encoding="utf-8", errors="replace") as handle:
                    return handle.read(), None
            except FileNotFoundError:
                return None, f"{name} is absent"
            except OSError as exc:
                return None, f"cannot read {name}: {exc.strerror or exc}"

        return read

    def is_file(self, name: str) -> bool:
        return self.path(name).is_file()

    def read(self, name: str) -> tuple[str | None, str | None]:
        """(text, None), or (None, reason) for a file that is absent or unreadable."""
        return self.reader(name)()


class CgroupMemoryFiles(msgspec.Struct, frozen=True):
    """Where this cgroup's memory limit and usage live (v2 or v1 layout)."""

    version: int
    limit: str
    usage: str


CGROUP2_MEMORY = CgroupMemoryFiles(2, "/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current")
CGROUP1_MEMORY = CgroupMemoryFiles(
    1, "/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"
)


def find_cgroup_memory(tree: FileTree) -> CgroupMemoryFiles | None:
    """The cgroup namespace root's memory files: inside a container, the container's own.

    A host's root cgroup has no memory.max (v2), so there this finds no limit, which is right.
    """
    for files in (CGROUP2_MEMORY, CGROUP1_MEMORY):
        if tree.is_file(files.limit):
            return files
    return None
