"""Finding the process that serves a port, its tree, and what it holds: on real processes."""

from __future__ import annotations

import os

import psutil
import pytest

from tests.platforms.listening_child import MB, serving_tree
from tests.support.ports import free_port
from vibey_gh.platforms.device.probes import this_platform
from vibey_gh.platforms.process.process_tree import (
    counted_resident_bytes,
    find_listener,
    machine_listeners,
    tree_pids,
)
from vibey_gh.runners.registry import runner_markers

MARKERS = runner_markers()


def test_the_listener_on_a_port_is_found_with_how() -> None:
    with serving_tree() as tree:
        # from the machine's socket table (Linux), and process by process (macOS without root)
        for table in (machine_listeners, lambda port: None):
            found = find_listener(tree.port, MARKERS, table=table)
            assert found.pid == tree.pid
            assert found.how.startswith(f"pid {tree.pid} (")
            assert found.how.endswith(f"listens on port {tree.port}")


def test_an_excluded_listener_is_never_taken() -> None:
    with serving_tree() as tree:
        found = find_listener(tree.port, MARKERS, exclude=(tree.pid,))
        assert found.pid is None
        assert found.how == f"only processes left aside listen on port {tree.port}"
        walked = find_listener(tree.port, MARKERS, exclude=(tree.pid,), table=lambda port: None)
        assert walked.pid is None
        assert walked.how == f"no process readable by this user listens on port {tree.port}"


def test_nothing_listening_says_so() -> None:
    port = free_port()
    found = find_listener(port, MARKERS)
    assert found.pid is None and str(port) in found.how


def test_the_tree_holds_the_listener_and_its_child_and_ends_with_it() -> None:
    with serving_tree() as tree:
        pids = tree_pids(tree.pid)
        assert pids is not None and pids[0] == tree.pid and tree.child_pid in pids
    assert tree_pids(tree.pid) is None


def test_counted_memory_covers_what_the_tree_wrote() -> None:
    with serving_tree(held_bytes=96 * MB) as tree:
        pids = tree_pids(tree.pid)
        assert pids is not None
        held, reason = counted_resident_bytes(pids, this_platform())
        assert reason is None and held is not None
        assert held >= 96 * MB
        rss = sum(psutil.Process(pid).memory_info().rss for pid in pids)
        assert held <= rss  # never more than resident


def test_a_process_that_ended_holds_nothing() -> None:
    with serving_tree() as tree:
        gone = tree.pid
    held, reason = counted_resident_bytes((gone,), this_platform())
    assert (held, reason) == (0, None)


def test_linux_counts_anonymous_memory_only_and_macos_all_resident() -> None:
    if this_platform() != "linux":
        pytest.skip("psutil reports shared (file-backed) pages on Linux only")
    # this interpreter maps its shared libraries: file-backed resident pages, not counted
    held, _ = counted_resident_bytes((os.getpid(),), "linux")
    me = psutil.Process(os.getpid()).memory_info()
    assert held is not None and abs(held - (me.rss - me.shared)) < 16 * MB
    macos_view, _ = counted_resident_bytes((os.getpid(),), "darwin")
    assert macos_view is not None and held is not None and macos_view > held


def _hidden(pids: set[int]):  # type: ignore[no-untyped-def]
    """Sockets as this user sees another user's processes (Ollama's systemd service)."""

    def listens(process: psutil.Process, port: int) -> bool | None:
        return None if process.pid in pids else False

    return listens


def test_unreadable_sockets_fall_back_to_the_only_runner_of_the_expected_name() -> None:
    with serving_tree() as tree:
        found = find_listener(
            tree.port,
            expected_names=("listener",),
            markers=("listener",),
            sockets=_hidden({tree.pid}),
            table=lambda port: {None},  # Linux: a listener, of a process this user cannot see
        )
        assert found.pid == tree.pid
        assert "taken by its name: its sockets are not readable as this user" in found.how


def test_unreadable_sockets_of_two_runners_identify_neither() -> None:
    with serving_tree() as first, serving_tree() as second:
        found = find_listener(
            first.port,
            expected_names=("listener",),
            markers=("listener",),
            sockets=_hidden({first.pid, second.pid}),
            table=lambda port: None,  # macOS without root: no socket table
        )
        assert found.pid is None and "several runners with unreadable sockets" in found.how
