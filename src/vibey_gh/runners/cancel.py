"""Cancel the turns in flight to a runner before stopping it.

A llama.cpp server stops generating for a request whose connection closed, but on SIGTERM it
finishes every request in flight first: a busy runner took the whole stop grace (15 s) to go,
an idle one 0.2 s. Closing the HTTP client is not enough: it closes the file descriptors, and a
worker blocked reading from one keeps the connection open. So every connection this process
holds to the runner's port is shut down (both directions), which wakes the blocked reader and
tells the server at once; the stop that follows finds the runner idle.
"""

from __future__ import annotations

import contextlib
import os
import socket

import psutil

from .process import LOOPBACK


def cancel_connections_to(port: int, host: str = LOOPBACK) -> int:
    """Shut down this process's TCP connections to host:port (a name: to any of its addresses);
    return how many."""
    addresses = _addresses_of(host, port)
    try:
        connections = psutil.Process().net_connections(kind="tcp")
    except (psutil.Error, OSError):
        return 0
    cancelled = 0
    for connection in connections:
        if connection.fd < 0 or not connection.raddr:
            continue
        if (connection.raddr[0], connection.raddr[1]) not in addresses:
            continue
        with contextlib.suppress(OSError):
            # a duplicate of the descriptor shares the socket; checked again on the duplicate,
            # since the worker may have closed the original and the number been reused
            duplicate = socket.socket(fileno=os.dup(connection.fd))
            try:
                if duplicate.getpeername()[:2] in addresses:
                    duplicate.shutdown(socket.SHUT_RDWR)
                    cancelled += 1
            finally:
                duplicate.close()
    return cancelled


def _addresses_of(host: str, port: int) -> set[tuple[str, int]]:
    """`host`'s addresses with `port`, as a connection's peer shows them (none: unresolvable)."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return set()
    return {(str(address[4][0]), port) for address in found}
