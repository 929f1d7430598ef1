"""The shape of the code, checked: no import cycles, a pure judge, dependencies that run one way.

The import graph is read from the source with `ast`, never by importing it: every `import` and
`from … import` counts, at module level, inside functions (lazy imports) and under
TYPE_CHECKING alike, relative imports resolved. A dependency drawn only for a type is still a
dependency a reader has to follow. docs/architecture.md is the map these rules keep true.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
ROOT_PACKAGE = "vibey_gh"


@dataclass(frozen=True)
class Import:
    """One import of one module of the package by another, where it is written."""

    importer: str
    target: str
    file: Path
    line: int

    def where(self) -> str:
        return f"{self.file}:{self.line}: {self.importer} imports {self.target}"


def module_names(src: Path, package: str) -> dict[str, Path]:
    """Every module of `package` under `src`, by dotted name (a package by its own name)."""
    names: dict[str, Path] = {}
    for path in sorted((src / package).rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def _base_of(module: str, path: Path, level: int) -> str:
    parts = module.split(".")
    if path.name != "__init__.py":
        parts.pop()  # a module's relative imports start from its package
    return ".".join(parts[: len(parts) - (level - 1)])


def imports_of(module: str, path: Path, known: Iterable[str]) -> list[Import]:
    """The package-internal imports `module` makes, anywhere in its file."""
    known = set(known)
    found: list[Import] = []
    shown = path.relative_to(SRC.parent) if path.is_relative_to(SRC.parent) else path

    def add(target: str, line: int) -> None:
        while target and target not in known:  # `a.b.Name` is an import of module `a.b`
            target = target.rpartition(".")[0]
        edge = Import(module, target, shown, line)
        if target and edge not in found:
            found.append(edge)

    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == ROOT_PACKAGE:
                    add(alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = _base_of(module, path, node.level)
                source = f"{base}.{node.module}" if node.module else base
            else:
                source = node.module or ""
            if source.split(".")[0] != ROOT_PACKAGE:
                continue
            for alias in node.names:  # `from pkg import module` imports the module
                add(f"{source}.{alias.name}", node.lineno)
    return found


def import_graph(src: Path, package: str) -> dict[str, list[Import]]:
    names = module_names(src, package)
    return {name: imports_of(name, path, names) for name, path in names.items()}


def strongly_connected(graph: Mapping[str, list[Import]]) -> list[list[str]]:
    """Tarjan's components with more than one module, or one that imports itself."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for edge in graph.get(node, []):
            if edge.target not in index:
                visit(edge.target)
                low[node] = min(low[node], low[edge.target])
            elif edge.target in on_stack:
                low[node] = min(low[node], index[edge.target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            loops = any(e.target == node for e in graph.get(node, []))
            if len(component) > 1 or loops:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def cycle_path(graph: Mapping[str, list[Import]], component: list[str]) -> list[Import]:
    """One concrete cycle through the component's first module, edge by edge."""
    members = set(component)
    start = component[0]
    came_by: dict[str, Import] = {}
    queue = [start]
    while queue:  # breadth first, so the cycle printed is a shortest one
        node = queue.pop(0)
        for edge in graph.get(node, []):
            if edge.target == start:
                path = [edge]
                while path[0].importer != start:
                    path.insert(0, came_by[path[0].importer])
                return path
            if edge.target in members and edge.target not in came_by:
                came_by[edge.target] = edge
                queue.append(edge.target)
    raise AssertionError(f"no cycle through {start}")  # a component always has one


def describe_cycle(graph: Mapping[str, list[Import]], component: list[str]) -> str:
    path = cycle_path(graph, component)
    chain = " -> ".join([path[0].importer, *(edge.target for edge in path)])
    return "\n".join([f"import cycle: {chain}", *(f"  {edge.where()}" for edge in path)])


# --- the rules -------------------------------------------------------------------------------

# Cycles known and being removed elsewhere, by name: delete an entry once its cycle is gone
# (the test fails while an entry names a cycle that no longer exists).
KNOWN_CYCLES: dict[str, frozenset[str]] = {}

JUDGING = "vibey_gh.slots.judging"
# What judging may import from the package: itself, the error types, the shared data types.
JUDGING_MAY_IMPORT = (JUDGING, "vibey_gh.errors", "vibey_gh.interfaces")
# Standard-library modules that reach files, processes, the network, the clock or the
# terminal: judging works on values handed to it and returns values.
IO_MODULES = frozenset(
    {
        "asyncio", "fcntl", "glob", "http", "io", "logging", "mmap", "multiprocessing", "os",
        "pathlib", "select", "selectors", "shutil", "signal", "socket", "sqlite3", "ssl",
        "subprocess", "sys", "tempfile", "threading", "time", "urllib",
    }
)  # fmt: skip
IO_BUILTINS = frozenset({"open", "print", "input", "exec", "eval", "__import__"})

# Which unit may import which: a unit is a top-level module or subpackage of vibey_gh, or a
# stage package of slots. Anything a unit imports from itself is allowed. `cli` is the edge
# and may import anything; a unit missing here may import nothing of the package.
ROOT, ERRORS, INTERFACES = "vibey_gh", "vibey_gh.errors", "vibey_gh.interfaces"
CLOCK, CONFIG, GUARDED = "vibey_gh.clock", "vibey_gh.config", "vibey_gh.guarded"
CONFIG_CACHE, CONFIG_READER = "vibey_gh.config_cache", "vibey_gh.config_reader"
FILES = "vibey_gh.files"
LANES, PLATFORMS, RUNNERS = "vibey_gh.lanes", "vibey_gh.platforms", "vibey_gh.runners"
STATE, USERDIRS = "vibey_gh.state", "vibey_gh.userdirs"
SLOTS = "vibey_gh.slots"
CORPUS, MEASUREMENT, EVIDENCE = f"{SLOTS}.corpus", f"{SLOTS}.measurement", f"{SLOTS}.evidence"
REPORT, GATE, SOAK = f"{SLOTS}.report", f"{SLOTS}.gate", f"{SLOTS}.soak"
COMPOSITION, DOCTOR = "vibey_gh.composition", "vibey_gh.doctor"
BASE = frozenset({ERRORS, INTERFACES})
ALLOWED: dict[str, frozenset[str]] = {
    ROOT: frozenset(),
    ERRORS: frozenset(),
    INTERFACES: frozenset({ERRORS}),
    CLOCK: frozenset(),
    GUARDED: frozenset(),
    "vibey_gh.__main__": frozenset({"vibey_gh.cli"}),
    PLATFORMS: BASE | {CLOCK, GUARDED},
    FILES: BASE | {GUARDED, PLATFORMS},
    USERDIRS: frozenset({PLATFORMS}),
    STATE: frozenset({FILES, INTERFACES, USERDIRS}),
    CONFIG_CACHE: frozenset({FILES, GUARDED, STATE}),
    CONFIG_READER: frozenset({ERRORS, RUNNERS}),
    CONFIG: BASE | {CONFIG_CACHE, CONFIG_READER, GUARDED, USERDIRS, RUNNERS},
    RUNNERS: BASE | {ROOT, CLOCK, FILES, GUARDED, PLATFORMS, STATE},
    LANES: BASE | {CLOCK, CONFIG, FILES, GUARDED, PLATFORMS, RUNNERS},
    JUDGING: BASE,
    CORPUS: BASE | {FILES, GUARDED, LANES},
    EVIDENCE: BASE | {ROOT, FILES, GUARDED, STATE, JUDGING},
    GATE: BASE | {CLOCK, CONFIG, FILES, PLATFORMS, RUNNERS, STATE, JUDGING, EVIDENCE},
    REPORT: BASE | {CONFIG, FILES, STATE, JUDGING, EVIDENCE, GATE},
    MEASUREMENT: BASE
    | {CLOCK, CONFIG, FILES, GUARDED, PLATFORMS, RUNNERS, STATE}
    | {CORPUS, JUDGING, EVIDENCE, REPORT},
    SOAK: BASE
    | {CLOCK, CONFIG, FILES, GUARDED, PLATFORMS, RUNNERS, STATE}
    | {CORPUS, JUDGING, EVIDENCE, REPORT, MEASUREMENT},
    COMPOSITION: BASE
    | {CLOCK, CONFIG, LANES, PLATFORMS, RUNNERS, STATE}
    | {JUDGING, EVIDENCE, GATE, MEASUREMENT},
    DOCTOR: BASE | {CONFIG, PLATFORMS, USERDIRS, EVIDENCE},
    "vibey_gh.storm": BASE
    | {CLOCK, CONFIG, FILES, LANES, PLATFORMS, STATE, COMPOSITION}
    | {CORPUS, EVIDENCE, GATE, MEASUREMENT, SOAK},
}
EDGE = "vibey_gh.cli"


ARCHITECTURE_DOC = SRC.parent / "docs" / "architecture.md"
PACKAGES_HEADING = "## Packages"


def _unit_named(name: str) -> str:
    """`slots.judging` → vibey_gh.slots.judging; `vibey_gh` (its `__version__`) is the root."""
    name = name.strip().strip("`")
    return ROOT if name == ROOT else f"{ROOT}.{name}"


def documented_table(text: str) -> dict[str, frozenset[str] | None]:
    """The Packages table of docs/architecture.md: each unit of the first column (one or more,
    in backticks) with the units its last column allows; None for "anything" (the edge).
    What follows a dash, and words in parentheses, only explain."""
    section = text.split(PACKAGES_HEADING, 1)[1].split("\n## ", 1)[0]
    table: dict[str, frozenset[str] | None] = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not cells[0].startswith("`"):
            continue
        allowed = cells[-1].split(" — ")[0]
        while "(" in allowed:
            before, _, rest = allowed.partition("(")
            allowed = before + rest.partition(")")[2]
        names = [n.strip() for n in allowed.split(",") if n.strip()]
        units: frozenset[str] | None
        if names == ["anything"]:
            units = None
        elif names == ["nothing"]:
            units = frozenset()
        else:
            units = frozenset(_unit_named(n) for n in names)
        for unit in cells[0].split(","):
            table[_unit_named(unit)] = units
    return table


def table_drift(
    documented: Mapping[str, frozenset[str] | None],
    allowed: Mapping[str, frozenset[str]],
    edge_unit: str,
) -> list[str]:
    """Where the documented table and the enforced one differ, unit by unit."""
    enforced: dict[str, frozenset[str] | None] = {**allowed, edge_unit: None}
    problems = []
    for unit in sorted(set(documented) | set(enforced)):
        if unit not in documented:
            problems.append(f"{unit}: enforced but missing from the documented table")
        elif unit not in enforced:
            problems.append(f"{unit}: documented but not enforced (add it to ALLOWED)")
        elif documented[unit] != enforced[unit]:
            shown, wanted = documented[unit], enforced[unit]
            extra = sorted((shown or frozenset()) - (wanted or frozenset()))
            missing = sorted((wanted or frozenset()) - (shown or frozenset()))
            problems.append(f"{unit}: the doc adds {extra}, leaves out {missing}")
    return problems


def unit_of(module: str) -> str:
    parts = module.split(".")
    if parts[:2] == ["vibey_gh", "slots"] and len(parts) > 2:
        return ".".join(parts[:3])
    return ".".join(parts[:2])


def cycle_problems(
    graph: Mapping[str, list[Import]], known: Mapping[str, frozenset[str]]
) -> list[str]:
    components = strongly_connected(graph)
    problems = [
        describe_cycle(graph, component)
        for component in components
        if frozenset(component) not in known.values()
    ]
    found = {frozenset(component) for component in components}
    problems += [
        f"known cycle {name!r} is gone: delete its entry in KNOWN_CYCLES"
        for name, members in known.items()
        if members not in found
    ]
    return problems


def _io_uses(path: Path) -> Iterator[tuple[str, int]]:
    """Standard-library I/O modules imported and I/O builtins called, with their lines."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names = [node.module]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id in IO_BUILTINS:
                yield f"calls {node.func.id}()", node.lineno
            continue
        else:
            continue
        for name in names:
            if name.split(".")[0] in IO_MODULES:
                yield f"imports {name.split('.')[0]}", node.lineno


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def purity_problems(graph: Mapping[str, list[Import]], files: Mapping[str, Path]) -> list[str]:
    """Everything under judging that reaches I/O: a package module outside JUDGING_MAY_IMPORT,
    a standard-library module in IO_MODULES, a call of one of IO_BUILTINS."""
    problems = []
    for module in sorted(m for m in graph if _inside(m, JUDGING)):
        for edge in graph[module]:
            if not any(_inside(edge.target, ok) for ok in JUDGING_MAY_IMPORT):
                problems.append(f"{edge.where()} (judging does no I/O)")
        for use, line in _io_uses(files[module]):
            problems.append(f"{files[module]}:{line}: {module} {use} (I/O)")
    return problems


def dependency_problems(
    graph: Mapping[str, list[Import]], allowed: Mapping[str, frozenset[str]], edge_unit: str
) -> list[str]:
    problems = []
    for module in sorted(graph):
        unit = unit_of(module)
        if unit == edge_unit:
            continue
        for edge in graph[module]:
            target = unit_of(edge.target)
            if target == unit or target in allowed.get(unit, frozenset()):
                continue
            problems.append(f"{edge.where()} ({unit} may not import {target})")
    return problems


JUDGE = f"{JUDGING}.judge"
# Where a judgement is rendered, never made: each is handed the judgement its caller made once.
RENDERERS = (REPORT, EDGE)


def judge_functions(path: Path) -> frozenset[str]:
    """The judge's entry points: every top-level `judge_*` function of judge.py."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return frozenset(
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and node.name.startswith("judge")
    )


def judging_in_renderers(files: Mapping[str, Path], functions: frozenset[str]) -> list[str]:
    """Every import by a renderer of one of the judge's `functions` (or of the judge module
    itself, which would reach them as attributes), with its file and line."""
    problems = []
    for module in sorted(m for m in files if any(_inside(m, r) for r in RENDERERS)):
        path = files[module]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                taken = [(alias.name, "") for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = _base_of(module, path, node.level)
                    source = f"{base}.{node.module}" if node.module else base
                else:
                    source = node.module or ""
                taken = [(source, alias.name) for alias in node.names]
            else:
                continue
            for source, name in taken:
                judges = (source == JUDGE and name in functions) or (
                    f"{source}.{name}" if name else source
                ) == JUDGE
                if judges:
                    what = name or source
                    problems.append(
                        f"{path}:{node.lineno}: {module} imports {what} (renderers judge nothing)"
                    )
    return problems


# The calls that build a real part of the world from the process's environment: the state
# root, the platform's probes. The composition root makes them; everything else is handed the
# part (tests and scripts too go through `vibey_gh.composition`).
REAL_PART_BUILDERS = frozenset({("StateLayout", "from_env"), ("PlatformProbes", "detect")})
# Modules that still build one themselves, and why. Delete an entry once its module takes the part.
BUILDS_ITS_OWN: dict[str, str] = {
    # the model digest's cache falls back to the environment's state root while the runner
    # protocols take an optional state; goes with the runner kinds' folders
    "vibey_gh.runners.digest": "model digest cache",
    # not a part: where matplotlib keeps its font cache, set before its first import
    "vibey_gh.slots.report.plotting.plots": "matplotlib's cache folder",
}


def real_parts_built(files: Mapping[str, Path], allowed: Iterable[str]) -> list[str]:
    """Every call of a REAL_PART_BUILDERS outside `allowed` modules, with file and line."""
    allowed = set(allowed)
    problems = []
    for module in sorted(m for m in files if m not in allowed):
        path = files[module]
        calls = [
            node
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
        ]
        for node in sorted(calls, key=lambda call: (call.lineno, call.col_offset)):
            assert isinstance(node.func, ast.Attribute)
            owner = node.func.value
            if isinstance(owner, ast.Name) and (owner.id, node.func.attr) in REAL_PART_BUILDERS:
                problems.append(
                    f"{path}:{node.lineno}: {module} calls {owner.id}.{node.func.attr}() "
                    "(real parts come from vibey_gh.composition)"
                )
    return problems


# A package holds at most this many modules (its __init__ aside); past it, it is split into
# sub-packages by idea (docs/architecture.md, "Packages").
MAX_MODULES = 12


def crowded_packages(src: Path, package: str, limit: int = MAX_MODULES) -> list[str]:
    """Every package under `src/package` (itself included) with more than `limit` modules."""
    root = src / package
    folders = [root, *sorted(p.parent for p in root.rglob("__init__.py") if p.parent != root)]
    problems = []
    for folder in folders:
        modules = sorted(f.stem for f in folder.glob("*.py") if f.name != "__init__.py")
        if len(modules) > limit:
            name = ".".join(folder.relative_to(src).parts)
            problems.append(
                f"{name} holds {len(modules)} modules, more than {limit}: split it into "
                f"sub-packages by idea ({', '.join(modules)})"
            )
    return problems


# Imports inside functions (lazy imports) in the whole of src/, and how many may be there: 297
# before the package imported at the top (docs/architecture.md, "Imports"). Each one says why
# on its line or in the comment just above it ("# lazy: …"): an optional extra, a platform's own
# module, or milliseconds that `slots allowed` never spends.
MAX_LAZY_IMPORTS = 40
LAZY_LABEL = "# lazy:"
# packages whose lazy imports need no label (none: kept for a package being reworked)
LAZY_UNLABELLED_IN: tuple[str, ...] = ()


@dataclass(frozen=True)
class LazyImport:
    module: str
    file: Path
    line: int
    labelled: bool

    def where(self) -> str:
        return f"{self.file}:{self.line}: {self.module} imports inside a function"


def lazy_imports(src: Path, package: str) -> list[LazyImport]:
    """Every import statement inside a function (nested ones counted once), in file order."""
    found = []
    for module, path in module_names(src, package).items():
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        inside: dict[int, ast.stmt] = {}
        for node in ast.walk(ast.parse(text, filename=str(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for inner in ast.walk(node):
                    if isinstance(inner, (ast.Import, ast.ImportFrom)):
                        inside[inner.lineno] = inner
        for line in sorted(inside):
            above = line - 2
            while above >= 0 and lines[above].strip().startswith("#"):
                above -= 1
            said = [lines[line - 1], *lines[above + 1 : line - 1]]
            labelled = any(LAZY_LABEL in text_line for text_line in said)
            found.append(LazyImport(module, path, line, labelled))
    return found


def lazy_import_problems(
    found: list[LazyImport], ceiling: int, unlabelled_in: Iterable[str]
) -> list[str]:
    """More lazy imports than `ceiling`, and each one that does not say why."""
    exempt = tuple(unlabelled_in)
    problems = [
        f"{item.where()} without a '{LAZY_LABEL} why' comment (or import it at the top)"
        for item in found
        if not item.labelled and not any(_inside(item.module, unit) for unit in exempt)
    ]
    if len(found) > ceiling:
        problems.append(
            f"{len(found)} imports inside functions, more than {ceiling}: import at the top, "
            "or move the function to where its imports are"
        )
    return problems


def _child_of(module: str, package: str) -> str | None:
    """The module or sub-package directly under `package` that holds `module`."""
    if not module.startswith(package + "."):
        return None
    return ".".join(module.split(".")[: package.count(".") + 2])


def sibling_graphs(
    graph: Mapping[str, list[Import]], files: Mapping[str, Path]
) -> dict[str, dict[str, list[Import]]]:
    """For each package, the imports between its direct children (modules and sub-packages),
    each edge kept with the file and line of one import that draws it."""
    packages = [name for name, path in files.items() if path.name == "__init__.py"]
    found: dict[str, dict[str, list[Import]]] = {}
    for package in packages:
        children: dict[str, list[Import]] = {}
        for module, edges in graph.items():
            importer = _child_of(module, package)
            if importer is None:
                continue
            for edge in edges:
                target = _child_of(edge.target, package)
                if target is None or target == importer:
                    continue
                if all(e.target != target for e in children.get(importer, [])):
                    children.setdefault(importer, []).append(
                        Import(importer, target, edge.file, edge.line)
                    )
        found[package] = children
    return found


# Cycles between the parts of a package known and kept, with why: delete an entry once its
# cycle is gone (the test fails while an entry names a cycle that no longer exists).
KNOWN_SIBLING_CYCLES: dict[frozenset[str], str] = {}


def sibling_cycles(
    graph: Mapping[str, list[Import]],
    files: Mapping[str, Path],
    known: Mapping[frozenset[str], str] | None = None,
) -> list[str]:
    """A cycle between the children of one package: a sub-package and a module beside it (or
    two sub-packages) that import each other, however indirectly; `known` ones pass."""
    known = {} if known is None else known
    problems = []
    found = set()
    for package, children in sorted(sibling_graphs(graph, files).items()):
        for component in strongly_connected(children):
            found.add(frozenset(component))
            if frozenset(component) not in known:
                problems.append(f"inside {package}: " + describe_cycle(children, component))
    problems += [
        f"known cycle {sorted(members)} is gone: delete its entry in KNOWN_SIBLING_CYCLES"
        for members in known
        if members not in found
    ]
    return problems


# --- the package ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def graph() -> dict[str, list[Import]]:
    return import_graph(SRC, ROOT_PACKAGE)


def test_the_package_has_no_import_cycle(graph: dict[str, list[Import]]) -> None:
    problems = cycle_problems(graph, KNOWN_CYCLES)
    assert not problems, "\n".join(problems)


def test_judging_does_no_io(graph: dict[str, list[Import]]) -> None:
    assert any(name.startswith(JUDGING + ".") for name in graph)  # the rule guards something
    problems = purity_problems(graph, module_names(SRC, ROOT_PACKAGE))
    assert not problems, "\n".join(problems)


def test_renderers_are_handed_the_judgement_and_never_judge() -> None:
    files = module_names(SRC, ROOT_PACKAGE)
    functions = judge_functions(files[JUDGE])
    assert {"judge_sweep", "judge_figures"} <= functions  # the rule guards something
    problems = judging_in_renderers(files, functions)
    assert not problems, "\n".join(problems)


def test_real_parts_are_built_in_the_composition_root_only() -> None:
    files = module_names(SRC, ROOT_PACKAGE)
    problems = real_parts_built(files, {COMPOSITION, *BUILDS_ITS_OWN})
    assert not problems, "\n".join(problems)


def test_every_unit_imports_only_what_the_table_allows(graph: dict[str, list[Import]]) -> None:
    problems = dependency_problems(graph, ALLOWED, EDGE)
    assert not problems, "\n".join(problems)


def test_the_documented_table_is_the_enforced_one() -> None:
    documented = documented_table(ARCHITECTURE_DOC.read_text(encoding="utf-8"))
    problems = table_drift(documented, ALLOWED, EDGE)
    assert not problems, f"{ARCHITECTURE_DOC} and ALLOWED differ:\n" + "\n".join(problems)


def test_every_unit_of_the_package_is_in_the_table(graph: dict[str, list[Import]]) -> None:
    units = {unit_of(module) for module in graph} - {EDGE, SLOTS}
    assert units <= set(ALLOWED), sorted(units - set(ALLOWED))


def test_no_package_holds_more_than_a_dozen_modules() -> None:
    problems = crowded_packages(SRC, ROOT_PACKAGE)
    assert not problems, "\n".join(problems)


def test_imports_inside_functions_are_few_and_each_says_why() -> None:
    problems = lazy_import_problems(
        lazy_imports(SRC, ROOT_PACKAGE), MAX_LAZY_IMPORTS, LAZY_UNLABELLED_IN
    )
    assert not problems, "\n".join(problems)


def test_the_parts_of_each_package_import_one_another_one_way(
    graph: dict[str, list[Import]],
) -> None:
    files = module_names(SRC, ROOT_PACKAGE)
    assert any(children for children in sibling_graphs(graph, files).values())
    problems = sibling_cycles(graph, files, KNOWN_SIBLING_CYCLES)
    assert not problems, "\n".join(problems)


# --- the checks themselves catch what they are for ---------------------------------------------


def _write(root: Path, files: Mapping[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_a_cycle_through_a_lazy_import_is_caught_with_file_and_line(tmp_path: Path) -> None:
    src = _write(
        tmp_path,
        {
            "vibey_gh/__init__.py": "",
            "vibey_gh/a.py": "from .b import thing\n",
            "vibey_gh/b.py": "import json\n\n\ndef thing():\n    from .sub import c\n",
            "vibey_gh/sub/__init__.py": "",
            "vibey_gh/sub/c.py": "from ..a import x\n",
            "vibey_gh/quiet.py": "from . import b\n",
        },
    )
    graph = import_graph(src, ROOT_PACKAGE)
    assert strongly_connected(graph) == [["vibey_gh.a", "vibey_gh.b", "vibey_gh.sub.c"]]
    problems = cycle_problems(graph, {})
    assert len(problems) == 1
    assert "vibey_gh.a -> vibey_gh.b -> vibey_gh.sub.c -> vibey_gh.a" in problems[0]
    assert f"{src / 'vibey_gh' / 'b.py'}:5: vibey_gh.b imports vibey_gh.sub.c" in problems[0]
    assert (
        f"{src / 'vibey_gh' / 'sub' / 'c.py'}:1: vibey_gh.sub.c imports vibey_gh.a" in problems[0]
    )


def test_a_known_cycle_passes_and_a_known_cycle_that_is_gone_fails(tmp_path: Path) -> None:
    src = _write(
        tmp_path,
        {"vibey_gh/__init__.py": "", "vibey_gh/a.py": "import vibey_gh.b\n", "vibey_gh/b.py": ""},
    )
    graph = import_graph(src, ROOT_PACKAGE)
    assert cycle_problems(graph, {}) == []
    assert "is gone" in cycle_problems(graph, {"old": frozenset({"vibey_gh.a", "vibey_gh.b"})})[0]
    (src / "vibey_gh" / "b.py").write_text("from vibey_gh import a\n", encoding="utf-8")
    graph = import_graph(src, ROOT_PACKAGE)
    assert cycle_problems(graph, {"a-b": frozenset({"vibey_gh.a", "vibey_gh.b"})}) == []


def test_judging_that_reaches_io_is_caught(tmp_path: Path) -> None:
    src = _write(
        tmp_path,
        {
            "vibey_gh/__init__.py": "",
            "vibey_gh/errors.py": "",
            "vibey_gh/state.py": "",
            "vibey_gh/slots/__init__.py": "",
            "vibey_gh/slots/judging/__init__.py": "",
            "vibey_gh/slots/judging/fine.py": "import math\nfrom ...errors import X\n",
            "vibey_gh/slots/judging/judge.py": (
                "import math\n\n\ndef f():\n    from ...state import StateLayout\n"
                "    import os.path\n    return open('x')\n"
            ),
        },
    )
    graph = import_graph(src, ROOT_PACKAGE)
    problems = purity_problems(graph, module_names(src, ROOT_PACKAGE))
    judge = src / "vibey_gh" / "slots" / "judging" / "judge.py"
    assert problems == [
        f"{judge}:5: vibey_gh.slots.judging.judge imports vibey_gh.state (judging does no I/O)",
        f"{judge}:6: vibey_gh.slots.judging.judge imports os (I/O)",
        f"{judge}:7: vibey_gh.slots.judging.judge calls open() (I/O)",
    ]


def test_an_import_the_table_does_not_allow_is_caught(tmp_path: Path) -> None:
    src = _write(
        tmp_path,
        {
            "vibey_gh/__init__.py": "",
            "vibey_gh/platforms/__init__.py": "",
            "vibey_gh/platforms/probe.py": "from ..errors import E\nfrom ..runners import x\n",
            "vibey_gh/errors.py": "",
            "vibey_gh/runners/__init__.py": "",
            "vibey_gh/runners/x.py": "from ..platforms import probe\n",
            "vibey_gh/cli/__init__.py": "from ..runners import x\n",
        },
    )
    graph = import_graph(src, ROOT_PACKAGE)
    problems = dependency_problems(graph, ALLOWED, EDGE)
    probe = src / "vibey_gh" / "platforms" / "probe.py"
    assert problems == [
        f"{probe}:2: vibey_gh.platforms.probe imports vibey_gh.runners.x"
        " (vibey_gh.platforms may not import vibey_gh.runners)"
    ]


def test_a_renderer_that_judges_is_caught(tmp_path: Path) -> None:
    src = _write(
        tmp_path,
        {
            "vibey_gh/__init__.py": "",
            "vibey_gh/slots/__init__.py": "",
            "vibey_gh/slots/judging/__init__.py": "",
            "vibey_gh/slots/judging/judge.py": (
                "def judge_sweep(): ...\n\n\nclass SweepJudgement: ...\n"
            ),
            "vibey_gh/slots/report/__init__.py": "",
            "vibey_gh/slots/report/fine.py": "from ..judging.judge import SweepJudgement\n",
            "vibey_gh/slots/report/summary.py": (
                "def render():\n    from ..judging.judge import judge_sweep\n"
            ),
            "vibey_gh/cli/__init__.py": "",
            "vibey_gh/cli/show.py": "from vibey_gh.slots.judging import judge\n",
        },
    )
    files = module_names(src, ROOT_PACKAGE)
    functions = judge_functions(files[JUDGE])
    assert functions == {"judge_sweep"}
    cli = src / "vibey_gh" / "cli" / "show.py"
    summary = src / "vibey_gh" / "slots" / "report" / "summary.py"
    assert judging_in_renderers(files, functions) == [
        f"{cli}:1: vibey_gh.cli.show imports judge (renderers judge nothing)",
        f"{summary}:2: vibey_gh.slots.report.summary imports judge_sweep (renderers judge nothing)",
    ]


def test_a_documented_table_that_drifted_is_caught() -> None:
    doc = (
        "# Map\n\n## Packages\n\n| Package | What | May import |\n| --- | --- | --- |\n"
        "| `errors` | types | nothing |\n"
        "| `clock`, `guarded` | time; reads | nothing |\n"
        "| `files` | writes | errors, guarded (size caps) — **no cycle** |\n"
        "| `cli` | the edge | anything |\n\n## Next\n\n| `state` | x | files |\n"
    )
    documented = documented_table(doc)
    assert documented == {
        ERRORS: frozenset(),
        CLOCK: frozenset(),
        GUARDED: frozenset(),
        FILES: frozenset({ERRORS, GUARDED}),
        EDGE: None,
    }
    enforced = {ERRORS: frozenset(), CLOCK: frozenset(), FILES: frozenset({ERRORS, PLATFORMS})}
    assert table_drift(documented, enforced, EDGE) == [
        f"{FILES}: the doc adds ['{GUARDED}'], leaves out ['{PLATFORMS}']",
        f"{GUARDED}: documented but not enforced (add it to ALLOWED)",
    ]
    assert table_drift({ERRORS: frozenset(), EDGE: None}, {CLOCK: frozenset()}, EDGE) == [
        f"{CLOCK}: enforced but missing from the documented table",
        f"{ERRORS}: documented but not enforced (add it to ALLOWED)",
    ]


def test_a_real_part_built_outside_the_root_is_caught(tmp_path: Path) -> None:
    src = _write(
        tmp_path,
        {
            "vibey_gh/__init__.py": "",
            "vibey_gh/composition.py": "def parts():\n    return StateLayout.from_env()\n",
            "vibey_gh/slots/__init__.py": "",
            "vibey_gh/slots/gate/__init__.py": "",
            "vibey_gh/slots/gate/allowed.py": (
                "def deps(layout=None):\n"
                "    return layout or StateLayout.from_env(), PlatformProbes.detect()\n"
            ),
        },
    )
    files = module_names(src, ROOT_PACKAGE)
    allowed = src / "vibey_gh" / "slots" / "gate" / "allowed.py"
    assert real_parts_built(files, {COMPOSITION}) == [
        f"{allowed}:2: vibey_gh.slots.gate.allowed calls StateLayout.from_env() "
        "(real parts come from vibey_gh.composition)",
        f"{allowed}:2: vibey_gh.slots.gate.allowed calls PlatformProbes.detect() "
        "(real parts come from vibey_gh.composition)",
    ]


def test_a_package_with_too_many_modules_is_caught(tmp_path: Path) -> None:
    src = _write(
        tmp_path,
        {
            "vibey_gh/__init__.py": "",
            "vibey_gh/a.py": "",
            "vibey_gh/big/__init__.py": "",
            **{f"vibey_gh/big/m{i}.py": "" for i in range(4)},
            "vibey_gh/big/sub/__init__.py": "",
            "vibey_gh/big/sub/s.py": "",
        },
    )
    assert crowded_packages(src, ROOT_PACKAGE, limit=4) == []
    (src / "vibey_gh" / "big" / "m4.py").write_text("", encoding="utf-8")
    assert crowded_packages(src, ROOT_PACKAGE, limit=4) == [
        "vibey_gh.big holds 5 modules, more than 4: split it into sub-packages by idea "
        "(m0, m1, m2, m3, m4)"
    ]


def test_a_sub_package_and_a_module_beside_it_importing_each_other_are_caught(
    tmp_path: Path,
) -> None:
    src = _write(
        tmp_path,
        {
            "vibey_gh/__init__.py": "",
            "vibey_gh/pkg/__init__.py": "",
            "vibey_gh/pkg/top.py": "from .sub.low import x\n",
            "vibey_gh/pkg/base.py": "",
            "vibey_gh/pkg/sub/__init__.py": "",
            "vibey_gh/pkg/sub/low.py": "from ..base import y\n",
            "vibey_gh/pkg/sub/other.py": "",
        },
    )
    graph = import_graph(src, ROOT_PACKAGE)
    files = module_names(src, ROOT_PACKAGE)
    assert sibling_cycles(graph, files) == []
    (src / "vibey_gh" / "pkg" / "sub" / "other.py").write_text(
        "def f():\n    from ..top import z\n", encoding="utf-8"
    )
    graph = import_graph(src, ROOT_PACKAGE)
    assert strongly_connected(graph) == []  # no module cycle: only the parts' arrows turn
    problems = sibling_cycles(graph, module_names(src, ROOT_PACKAGE))
    assert len(problems) == 1
    cycle = "vibey_gh.pkg.sub -> vibey_gh.pkg.top -> vibey_gh.pkg.sub"
    assert problems[0].startswith(f"inside vibey_gh.pkg: import cycle: {cycle}")
    assert f"{src / 'vibey_gh' / 'pkg' / 'sub' / 'other.py'}:2" in problems[0]


# --- runner kinds -----------------------------------------------------------------------------
# A runner kind's name ("ollama", "llama-server", …) used as an identifier in code (a string
# constant that is exactly the name: compared, a dict key, passed, assigned) appears only in the
# kind's own folder (the folder of the module that defines its kind class) and in the registry.
# Prose is not checked: docstrings, and help or error text that mentions a kind inside a longer
# string. See tests/support/kind_names.py for the rule, and docs/architecture.md ("Add a runner
# kind") for what a kind's folder holds.


def _kind_homes() -> dict[str, tuple[Path, ...]]:
    import inspect

    from vibey_gh.runners.registry import KINDS

    return {kind.name: (Path(inspect.getfile(type(kind))).parent,) for kind in KINDS}


def test_a_kind_name_appears_only_in_its_folder_and_the_registry() -> None:
    from tests.support.kind_names import misplaced_names

    package = SRC / ROOT_PACKAGE
    found = misplaced_names(package, _kind_homes(), package / "runners" / "registry.py")
    assert found == [], "ask the runner kind (runners/registry.py) instead:\n" + "\n".join(
        use.where() for use in found
    )


def test_each_kind_lives_in_a_folder_of_its_own_under_runners() -> None:
    runners = SRC / ROOT_PACKAGE / "runners"
    for name, (home,) in _kind_homes().items():
        assert home.parent == runners, f"{name}'s kind is defined in {home}, not a kind folder"


# One kind's folder importing another's, with why: what is shared between kinds lives beside
# them in `runners/` (`http/`, `builds`, `digest`), so a later kind imports no sibling.
KIND_TO_KIND: dict[tuple[str, str], str] = {
    # Ollama serves through llama.cpp: its server log carries llama.cpp's own lines
    ("ollama", "llamacpp"): "llama.cpp's log lines",
    # the simulated runner is a model behind llama-server's own API (/props, /slots), served
    # and started as a llama.cpp server is
    ("simulated", "llamacpp"): "llama-server's API and server",
}


def kind_to_kind_imports(
    graph: Mapping[str, list[Import]], kinds: Iterable[str], known: Mapping[tuple[str, str], str]
) -> list[str]:
    """Every import of one kind's folder by another's that `known` does not name."""
    folder = {f"{ROOT_PACKAGE}.runners.{kind}": kind for kind in kinds}

    def kind_of(module: str) -> str | None:
        return next(
            (k for f, k in folder.items() if module == f or module.startswith(f + ".")), None
        )

    problems = []
    for importer, imports in sorted(graph.items()):
        for edge in imports:
            pair = (kind_of(importer), kind_of(edge.target))
            if None not in pair and pair[0] != pair[1] and pair not in known:
                problems.append(edge.where())
    return problems


def test_a_kind_imports_another_only_where_named(graph: dict[str, list[Import]]) -> None:
    kinds = [home.name for (home,) in _kind_homes().values()]
    assert "ollama" in kinds and "llamacpp" in kinds
    problems = kind_to_kind_imports(graph, kinds, KIND_TO_KIND)
    assert problems == [], "move what kinds share beside them in runners/:\n" + "\n".join(problems)
    # the rule bites: without the named exception Ollama's log-line import is reported
    assert any("ollama" in p and "llamacpp" in p for p in kind_to_kind_imports(graph, kinds, {}))


def test_a_misplaced_kind_name_is_caught_and_prose_is_not(tmp_path: Path) -> None:
    from tests.support.kind_names import misplaced_names

    src = _write(
        tmp_path,
        {
            "vibey_gh/runners/registry.py": 'KINDS = {"vllm": 1}\n',
            "vibey_gh/runners/vllm/kind.py": 'NAME = "vllm"\n',
            "vibey_gh/config.py": (
                '"""Runners: "vllm" and others."""\n'
                'HELP = "start vllm with --port"\n'
                'def port(runner):\n    return 8000 if runner == "vllm" else 0\n'
            ),
            "vibey_gh/platforms/tree.py": 'MARKERS = ("vllm",)\n',
        },
    )
    package = src / "vibey_gh"
    homes = {"vllm": (package / "runners" / "vllm",)}
    found = misplaced_names(package, homes, package / "runners" / "registry.py")
    assert [(use.file.relative_to(package).as_posix(), use.line) for use in found] == [
        ("config.py", 4),
        ("platforms/tree.py", 1),
    ]


def test_an_unexplained_lazy_import_and_too_many_are_caught(tmp_path: Path) -> None:
    src = _write(
        tmp_path,
        {
            "vibey_gh/__init__.py": "",
            "vibey_gh/a.py": (
                "def f():\n"
                "    # lazy: an optional extra\n"
                "    # (said over two lines)\n"
                "    import matplotlib\n"
                "    import json  # lazy: said on its line\n"
                "\n"
                "\n"
                "def g():\n"
                "    def inner():\n"
                "        import csv\n"
            ),
            "vibey_gh/cli/__init__.py": "",
            "vibey_gh/cli/b.py": "def h():\n    import click\n",
        },
    )
    found = lazy_imports(src, ROOT_PACKAGE)
    assert [(item.module, item.line, item.labelled) for item in found] == [
        ("vibey_gh.a", 4, True),
        ("vibey_gh.a", 5, True),
        ("vibey_gh.a", 10, False),
        ("vibey_gh.cli.b", 2, False),
    ]
    a = src / "vibey_gh" / "a.py"
    assert lazy_import_problems(found, 4, ["vibey_gh.cli"]) == [
        f"{a}:10: vibey_gh.a imports inside a function without a '# lazy: why' comment "
        "(or import it at the top)"
    ]
    assert lazy_import_problems(found, 3, ["vibey_gh.a", "vibey_gh.cli"]) == [
        "4 imports inside functions, more than 3: import at the top, "
        "or move the function to where its imports are"
    ]
