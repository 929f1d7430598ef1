"""Every piece of advice the CLI can print names only options the advised command has.

The hints are collected from the source: every string literal (f-strings whole) that names an
option (`--name`) in a sentence, docstrings, click declarations, argv lists and other
programs' command lines (`X --version`, pip's) left out. An
option inside a quoted command (`vibey-gh slots corpus --window N`) or after an unquoted one
("then vibey-gh slots show --report.") is checked against that command; any other against the
commands that can print the module's lines. The storm runs the calibration and draws corpora
itself: what those modules say reaches its log through `in_storm_terms`, and must then name
only `storm run`'s options or a quoted command that has the option.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import click

from vibey_gh.cli.main import cli
from vibey_gh.storm.advice import in_storm_terms

SOURCE = Path(__file__).resolve().parents[2] / "src" / "vibey_gh"
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
COMMAND = re.compile(
    r"vibey-gh\s+(doctor|(?:slots|storm|lane|runner)\s+[a-z-]+)|^(slots\s+[a-z-]+)"
)
ARGV = re.compile(r"^--[a-z][a-z0-9-]*(=\S*)?$")
# hints about other programs' options (pip, pipx, the production llama-server)
OTHER_PROGRAMS = ("pip install", "pipx inject", "start it with --slots")
# modules that are programs of their own, with their own argv (the simulated model server)
OWN_ARGV = ("runners/simulated/server.py",)

# which commands print a module's lines (first matching prefix wins)
PRINTED_BY: list[tuple[str, tuple[str, ...]]] = [
    ("cli/slots/calibrate", ("slots calibrate",)),
    ("cli/slots/", ()),  # cli/slots/NAME.py: `slots NAME` (below)
    ("cli/storm", ("storm run",)),
    ("storm/stopping", ("slots calibrate", "slots soak", "lane run", "storm run")),
    ("storm/", ("storm run",)),
    ("cli/runner", ("runner serve",)),
    ("runners/serving", ("runner serve",)),
    ("runners/counting", ("slots corpus",)),
    ("config.py", ("",)),
    ("doctor.py", ("",)),
    ("slots/measurement/", ("slots calibrate",)),
    ("slots/judging/", ("slots calibrate",)),
    ("runners/calibration_needs", ("slots calibrate",)),
    ("slots/corpus/", ("slots corpus",)),
    ("interfaces/think", ("slots calibrate", "slots soak")),
    ("slots/gate/apply", ("slots apply",)),
    ("slots/gate/openmetrics", ("slots allowed",)),
    ("slots/soak/", ("slots soak",)),
    ("slots/report/compare", ("slots compare",)),
    ("slots/report/", ("slots show",)),
    ("lanes/loop", ("lane run", "storm run")),
]
# what the storm's own calibration runs of these modules reaches its log
REACHES_THE_STORM = ("slots/measurement/", "slots/judging/", "slots/corpus/", "interfaces/think")
# ... but for what only the command asks: which inputs `slots corpus` was given
ONLY_THE_COMMANDS = ("slots/corpus/asked.py",)


def command_options() -> dict[str, set[str]]:
    """Each command's own options by its path ("slots calibrate"); "" is the group's."""
    found: dict[str, set[str]] = {"": {"--help", *(o for p in cli.params for o in p.opts)}}

    def walk(command: click.Command, path: list[str]) -> None:
        if isinstance(command, click.Group):
            for name in command.list_commands(click.Context(command)):
                sub = command.get_command(click.Context(command), name)
                assert sub is not None
                walk(sub, [*path, name])
            return
        found[" ".join(path)] = {"--help"} | {
            o for p in command.params for o in (*p.opts, *p.secondary_opts) if o.startswith("--")
        }

    walk(cli, [])
    return found


def _quiet_nodes(tree: ast.Module) -> set[int]:
    """Docstrings and click declarations: text that is not printed as advice."""
    quiet: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            quiet.add(id(body[0].value))
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") in ("option", "argument"):
            quiet.update(id(inner) for inner in ast.walk(node))
    return quiet


def _text(node: ast.expr) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "X" for v in node.values)
    return None


def hints() -> list[tuple[str, str]]:
    """(module path under vibey_gh, text) of every literal that advises an option."""
    found: list[tuple[str, str]] = []
    for path in sorted(SOURCE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        quiet = _quiet_nodes(tree)
        inner = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
        for node in ast.walk(tree):
            if id(node) in quiet or id(node) in inner or not isinstance(node, ast.expr):
                continue
            text = _text(node)
            if text is None or not OPTION.search(text) or ARGV.match(text.strip()):
                continue
            if any(program in text for program in OTHER_PROGRAMS):
                continue
            module = path.relative_to(SOURCE).as_posix()
            if module not in OWN_ARGV:
                found.append((module, text))
    return found


def printed_by(module: str) -> tuple[str, ...]:
    for prefix, commands in PRINTED_BY:
        if module.startswith(prefix):
            if prefix == "cli/slots/":
                return ("slots " + Path(module).stem,)
            return commands
    raise AssertionError(f"{module} prints advice: say which command prints it (PRINTED_BY)")


def advised(text: str, module: str) -> list[tuple[str, tuple[str, ...]]]:
    """Each option in `text` with the commands it is advised for."""
    pairs: list[tuple[str, tuple[str, ...]]] = []
    for number, part in enumerate(text.split("`")):
        quoted_program = part.split()[0] if number % 2 and part.split() else "--"
        if not quoted_program.startswith(("--", "vibey-gh", "slots", "storm")):
            continue  # another program's command line (`llama-server --version`)
        # an unquoted "vibey-gh slots show --report" reaches to the end of its clause
        clauses = re.split(r"[,;:()]|\.(?:\s|$)", part) if number % 2 == 0 else [part]
        for clause in clauses:
            command = COMMAND.search(clause.strip())
            named = " ".join((command.group(1) or command.group(2)).split()) if command else None
            for match in OPTION.finditer(clause):
                if named is not None and match.start() > command.start():  # type: ignore[union-attr]
                    pairs.append((match.group(0), (named,)))
                else:
                    pairs.append((match.group(0), printed_by(module)))
    return pairs


def test_every_hint_names_only_options_of_the_command_it_advises() -> None:
    options = command_options()
    found = hints()
    assert len(found) > 40, "the collection finds the CLI's hints"
    wrong = [
        f"{module}: {option} is not an option of `{command or 'vibey-gh'}`: {text!r}"
        for module, text in found
        for option, commands in advised(text, module)
        for command in commands
        if option not in options[command]
    ]
    assert not wrong, "\n".join(wrong)


def test_what_the_calibration_says_in_a_storm_names_the_storms_options() -> None:
    options = command_options()
    reaching = [
        (m, t)
        for m, t in hints()
        if m.startswith(REACHES_THE_STORM) and not m.startswith(ONLY_THE_COMMANDS)
    ]
    assert any("--segment-turns" in text for _, text in reaching)
    wrong = [
        f"{module}: {option} in the storm's log: {in_storm_terms(text)!r}"
        for module, text in reaching
        for option, commands in advised(in_storm_terms(text), "storm/")
        for command in commands
        if option not in options[command]
    ]
    assert not wrong, "\n".join(wrong)


def test_the_storm_says_its_own_option_for_a_segment_too_deep() -> None:
    said = in_storm_terms("a segment needs 9000 tokens: lower --segment-turns or raise --window")
    assert said == (
        "a segment needs 9000 tokens: lower --calibration-segment-turns or raise window "
        "under [local_models]"
    )
    kept = "run `vibey-gh slots forget --checkpoints` first, or add --restart"
    assert in_storm_terms(kept) == (
        "run `vibey-gh slots forget --checkpoints` first, or add "
        "`vibey-gh slots calibrate --restart`"
    )
