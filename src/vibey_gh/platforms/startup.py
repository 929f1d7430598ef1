"""Start-up mechanics of a short process: imports steered off the `slots allowed` path, and
stdout after its reader left.

`slots allowed` has 100 ms a process, most of it importing. Two standard modules it never
uses would still load on its path: `inspect` (with `ast`, `dis` and `tokenize`, a fifth of
what it loads) through `dataclasses` and through `typing_extensions`. Each is steered here,
for that short, single-threaded process only. Light itself: the standard library's basics.
"""

from __future__ import annotations

import contextlib
import os
import sys
import types
from typing import Any, cast


class _LoadedOnFirstUse(types.ModuleType):
    """A module that imports itself when one of its names is first read.

    The import system finds it in sys.modules and reads only what any module holds
    (`__spec__`, `__name__`); the first other name read imports the real module in its
    place and copies its names here, for whoever kept a reference to this one.
    """

    def __getattr__(self, name: str) -> object:
        if sys.modules.get(self.__name__) is self:
            del sys.modules[self.__name__]
        real = __import__(self.__name__)
        self.__dict__.update(real.__dict__)
        return getattr(real, name)


def steer_imports_for_a_short_run() -> None:
    """`inspect` loaded when first read rather than when imported, and `msgspec` imported
    without `typing_extensions`, before anything imports `dataclasses` or `msgspec`."""
    load_inspect_on_first_use()
    load_msgspec_without_typing_extensions()


def load_inspect_on_first_use() -> None:
    """Make `inspect` load when first read rather than when imported.

    `dataclasses` imports `inspect` (and `ast`, `dis` and `tokenize` with it) for uses this
    path never makes.
    """
    if "inspect" not in sys.modules:
        sys.modules["inspect"] = _LoadedOnFirstUse("inspect")


def load_msgspec_without_typing_extensions() -> None:
    """Import `msgspec` as it imports itself where `typing_extensions` is not installed.

    msgspec takes `get_type_hints` from `typing_extensions` when it can, and that module calls
    `inspect.signature` as it loads (13 ms of `inspect`, `ast`, `dis` and `tokenize`); on this
    Python `typing`'s own is the same function. Only the import is steered: a later
    `import typing_extensions` in this process loads it as usual.
    """
    if "msgspec" in sys.modules or "typing_extensions" in sys.modules:
        return
    cast(dict[str, object], sys.modules)["typing_extensions"] = None  # its import refused
    try:
        # lazy: loaded here, with typing_extensions refused, so that it does without it
        import msgspec  # noqa: F401
    finally:
        del sys.modules["typing_extensions"]


def stdout_reader_left() -> bool:
    """The reader of stdout closed it (`vibey-gh slots show | head`) while click wrote: click
    then wraps stdout in its PacifyFlushWrapper, and the reader had all it wanted."""
    return type(sys.stdout).__name__ == "PacifyFlushWrapper"


def stdout_to_nowhere() -> None:
    """The reader of stdout went away (`| head`): whatever is still flushed to it, down to the
    interpreter's own flush at exit, goes nowhere instead of failing on the closed pipe."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def flush_stdout_quietly() -> None:
    """stdout after its reader left, kept for what still holds it: its last flush finds the
    pipe closed, and that is no error worth a traceback."""
    sys.stdout = cast(Any, _FlushQuietly(sys.stdout))


class _FlushQuietly:
    def __init__(self, wrapped: Any) -> None:
        self.wrapped = wrapped

    def flush(self) -> None:
        with contextlib.suppress(BrokenPipeError):
            self.wrapped.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.wrapped, name)
