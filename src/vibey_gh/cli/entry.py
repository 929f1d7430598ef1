"""The `vibey-gh` executable: `slots allowed` on a fast path, everything else through click.

`slots allowed` is asked on every storm pass, at every DaemonSet start and by scripts that
gate their own runs, and its budget is 100 ms per process. Loading click and the command
tree costs a large share of that, so the plain forms of `slots allowed` are parsed here:
`--json`, `--model NAME` and `--window N`, each at most once, after an optional global
`--config FILE`. Anything else — `--help`, a
global option, a malformed or repeated option, any other command — goes to click, which
answers the same question and owns every usage error. Both paths call the same library
function and print through `edge`, and a test compares them byte for byte.
"""

from __future__ import annotations

import gc
import sys

from ..errors import error_line
from ..platforms.startup import stdout_reader_left, stdout_to_nowhere, steer_imports_for_a_short_run
from .edge import json_text

# model, window, as_json
AllowedArgs = tuple[str | None, int | None, bool]


def split_global_config(argv: list[str]) -> tuple[str | None, list[str]]:
    """A leading `--config FILE` (or `--config=FILE`), and the arguments after it."""
    if argv[:1] == ["--config"] and len(argv) > 1 and argv[1] and not argv[1].startswith("-"):
        return argv[1], argv[2:]
    if argv and argv[0].startswith("--config=") and len(argv[0]) > len("--config="):
        return argv[0].partition("=")[2], argv[1:]
    return None, argv


def parse_allowed(argv: list[str]) -> AllowedArgs | None:
    """The arguments of a plain `slots allowed` call, or None when click should parse them."""
    if argv[:2] != ["slots", "allowed"]:
        return None
    values: dict[str, str] = {}
    as_json = False
    rest = argv[2:]
    while rest:
        token, rest = rest[0], rest[1:]
        if token == "--json" and not as_json:
            as_json = True
            continue
        name, equals, value = token.partition("=")
        if name not in ("--model", "--window") or name in values:
            return None
        if not equals:
            if not rest:
                return None
            value, rest = rest[0], rest[1:]
        if not value or value.startswith("-"):
            return None
        values[name] = value
    from ..config import MAX_WINDOW, MIN_WINDOW  # lazy: after main() steered the imports

    window = values.get("--window")
    if window is not None and not (window.isascii() and window.isdigit()):
        return None
    if window is not None and not MIN_WINDOW <= int(window) <= MAX_WINDOW:
        return None
    return values.get("--model"), int(window) if window is not None else None, as_json


def answer_allowed(args: AllowedArgs) -> int:
    """Print the answer as `slots allowed` does; return the exit code."""
    from ..composition import real_collaborators  # lazy: after main() steered the imports

    model, window, as_json = args
    try:
        answer = real_collaborators().answer_allowed(model, window)
    except Exception as exc:
        reported = error_line(exc)
        if reported is None:
            raise
        message, code = reported
        print(f"error: {message}", file=sys.stderr)
        return code
    try:
        print(json_text(answer.to_json()) if as_json else answer.line(), flush=True)
    except BrokenPipeError:
        stdout_to_nowhere()  # the reader (`| head`) had all it wanted: exit 0 quietly
        return 0
    return 0


def main(argv: list[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else argv
    config_file, rest = split_global_config(arguments)
    if rest[:2] == ["slots", "allowed"]:
        steer_imports_for_a_short_run()
    quick = parse_allowed(rest)
    if quick is not None:
        if config_file is not None:
            from ..config import choose_config_file  # lazy: after the imports were steered

            choose_config_file(config_file)
        # A process this short never needs the cycle collector, and its passes over the
        # objects that imports create cost several milliseconds of the budget.
        gc.disable()
        try:
            return answer_allowed(quick)
        finally:
            gc.enable()
    from .main import cli  # lazy: click and the command tree stay off the fast path

    try:
        cli.main(args=arguments, prog_name="vibey-gh")
    except SystemExit as exc:
        if stdout_reader_left():  # click quieted stdout and exits 1; `head` itself exits 0
            return 0
        raise exc from None
    return 0
