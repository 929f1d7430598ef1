"""Which process serves a TCP port on this machine, its process tree, and what that tree holds.

psutil works on Linux and macOS alike, but what a user may see differs. On macOS, listing every
socket of the machine (`psutil.net_connections`) needs root, while the owner of a process may
read that process's own sockets; on Linux a process of another user (Ollama's systemd service)
hides its sockets but not its memory. So the listener is searched process by process, runners'
names first, and where its sockets cannot be read a single runner of the expected name stands
in, said so.

What a process "holds" is the share of its resident memory the machine's used/wired figure
counts (the platform sampler's wired_bytes): on Linux used = MemTotal − MemAvailable leaves out
file-backed pages (a memory-mapped model file is page cache, counted as available), so only
anonymous resident memory (rss − shared) counts; on macOS the model's Metal buffers are wired
and resident, so the whole resident size counts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import msgspec
import psutil


class Listener(msgspec.Struct, frozen=True):
    """The process serving a port (pid None: none found), and how it was found or why not."""

    pid: int | None
    how: str


def _label(process: psutil.Process) -> str:
    """ "pid 123 (llama-server)", or the pid alone when the process is gone or hidden."""
    try:
        return f"pid {process.pid} ({process.name()})"
    except psutil.Error:
        return f"pid {process.pid}"


def _label_of(pid: int) -> str:
    try:
        return _label(psutil.Process(pid))
    except psutil.Error:
        return f"pid {pid}"


def _command_text(process: psutil.Process) -> str:
    try:
        return " ".join([process.name(), *process.cmdline()])
    except psutil.Error:
        return ""


def _listens_on(process: psutil.Process, port: int) -> bool | None:
    """True/False, or None when this user may not read the process's sockets."""
    try:
        connections = process.net_connections(kind="tcp")
    except psutil.AccessDenied:
        return None
    except psutil.Error:
        return False
    return any(
        c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port == port for c in connections
    )


def machine_listeners(port: int) -> set[int | None] | None:
    """Pids listening on `port` from the machine's socket table (None for a socket whose
    process this user may not see), or None where the table needs root (macOS)."""
    try:
        connections = psutil.net_connections(kind="tcp")
    except psutil.Error:
        return None
    return {
        c.pid
        for c in connections
        if c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port == port
    }


def find_listener(
    port: int,
    markers: Sequence[str],
    expected_names: Sequence[str] = (),
    exclude: Iterable[int] = (),
    sockets: Callable[[psutil.Process, int], bool | None] | None = None,
    table: Callable[[int], set[int | None] | None] = machine_listeners,
) -> Listener:
    """The process listening on `port`: from the machine's socket table where this user may
    read it (Linux), else process by process, runners (by name) first.

    `markers`: substrings of a process name or command line that mark a model runner of any
    kind (the runner kinds say theirs); those processes are searched first.
    `expected_names`: names the production runner's process may carry (its kind's); when
    its sockets are unreadable and exactly one such process runs, it is taken, and `how` says
    so. `exclude`: pids never taken (the calibration runner's tree, this process).
    `sockets` / `table`: a process's listening state (None when unreadable) and the machine's
    table (tests inject what another user's process looks like).
    """
    listens = sockets or _listens_on
    skipped = set(exclude)
    listed = table(port)
    if listed is not None:
        if not listed:
            return Listener(None, f"nothing listens on port {port}")
        if not listed - skipped:
            return Listener(None, f"only processes left aside listen on port {port}")
        known = sorted(pid for pid in listed - skipped if pid is not None)
        if known:
            return Listener(known[0], f"{_label_of(known[0])} listens on port {port}")
    runners: list[psutil.Process] = []
    others: list[psutil.Process] = []
    for process in psutil.process_iter():
        if process.pid in skipped:
            continue
        text = _command_text(process)
        (runners if any(m in text for m in markers) else others).append(process)
    if listed is not None:
        others = []  # the table shows a listener this user may not see: only a name can help
    hidden: list[psutil.Process] = []
    for process in [*runners, *others]:
        answer = listens(process, port)
        if answer:
            return Listener(process.pid, f"{_label(process)} listens on port {port}")
        if answer is None and process in runners:
            hidden.append(process)
    named = [p for p in hidden if any(name in _command_text(p) for name in expected_names)]
    roots = [p for p in named if not _has_ancestor_in(p, named)]
    if len(roots) == 1:
        return Listener(
            roots[0].pid,
            f"{_label(roots[0])} taken by its name: its sockets are not readable as this user, "
            f"and it is the only {'/'.join(expected_names)} process",
        )
    if roots:
        shown = ", ".join(_label(p) for p in roots)
        return Listener(None, f"port {port}: several runners with unreadable sockets ({shown})")
    return Listener(None, f"no process readable by this user listens on port {port}")


def _has_ancestor_in(process: psutil.Process, group: list[psutil.Process]) -> bool:
    try:
        parents = {p.pid for p in process.parents()}
    except psutil.Error:
        return False
    return any(p.pid in parents for p in group)


def is_running(pid: int) -> bool:
    """Cheaper than the tree: the sampler asks it every second."""
    try:
        return bool(psutil.Process(pid).status() != psutil.STATUS_ZOMBIE)
    except psutil.Error:
        return False


def tree_pids(root: int) -> tuple[int, ...] | None:
    """`root` and all its descendants, or None when `root` is gone."""
    try:
        process = psutil.Process(root)
        children = process.children(recursive=True)
    except psutil.Error:
        return None
    return (root, *(child.pid for child in children))


def counted_resident_bytes(pids: Sequence[int], family: str) -> tuple[int | None, str | None]:
    """What the processes hold of the machine's used/wired memory (see the module's note).

    A process that ended meanwhile holds nothing; one whose memory is unreadable makes the
    whole figure unknown, with the reason.
    """
    total = 0
    for pid in pids:
        try:
            info = psutil.Process(pid).memory_info()
        except psutil.NoSuchProcess:
            continue
        except psutil.Error as exc:
            return None, f"memory of pid {pid} unreadable: {exc}"
        if family == "linux":
            total += max(0, int(info.rss) - int(getattr(info, "shared", 0)))
        else:
            total += int(info.rss)
    return total, None


def counted_memory_note(family: str) -> str:
    if family == "linux":
        return "anonymous resident memory (rss − shared; its mapped model file is page cache)"
    return "resident memory"
