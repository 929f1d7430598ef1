"""A child interpreter as macOS's CPython is for signals: no sigtimedwait, no sigwaitinfo.

macOS's libc has neither, so CPython there has neither attribute. `macos_like_argv` runs a
module (as `python -m` would) after deleting both from the signal module, so code that reaches
for them fails here exactly as it would on a Mac.
"""

from __future__ import annotations

import sys

MISSING_ON_MACOS = ("sigtimedwait", "sigwaitinfo")

PRELUDE = f"""
import runpy, signal, sys
for name in {MISSING_ON_MACOS!r}:
    if hasattr(signal, name):
        delattr(signal, name)
assert not any(hasattr(signal, name) for name in {MISSING_ON_MACOS!r})
print("signal module as on macOS: no " + ", ".join({MISSING_ON_MACOS!r}), file=sys.stderr)
del sys.argv[0]  # "-c": what is left is the module and its arguments, as `-m` leaves them
runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
"""


def macos_like_argv(module: str, *args: str) -> list[str]:
    """`python -m module args…`, with the signal module as on macOS."""
    return [sys.executable, "-c", PRELUDE, module, *args]
