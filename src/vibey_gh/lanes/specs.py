"""Lane specs: what one lane is asked to do, in a small TOML file.

Format (every key required except `commit` and `allow_system_folder`; any other key is an
error)::

    id = "state-layout"                 # letters, digits, '.', '_' or '-'; unique in a pool
    title = "Where the tool keeps its files"
    task = "Explain which folders the tool creates under its state root, and why."
    repository = "../.."                # folder to read; relative to this file, or absolute
    files = ["state.py", "files.py", "cli/*.py"]   # paths or globs, in reading order
    commit = "HEAD"                     # optional: any git revision (default HEAD)
    allow_system_folder = false         # optional: see below

`files` are relative to `repository`, never absolute and never through `..`. A glob uses `*`
and `?` (not crossing `/`), `**` (any depth) and `[...]`; its matches are read in sorted order
after the files before it, and a file named twice is read once. A path or glob that matches
nothing is an error: a spec that silently reads less would measure less. Matching is bounded
(`lanes.globs`): a spec whose globs would take too long is refused, saying so.

A `repository` that is a system folder — the root, an operating system folder (/etc, /usr,
/bin, …), the home folder itself, or anything in /proc, /sys or /dev — is refused: the lane's
model may read any file of its repository, and there that is every file the user can read.
`allow_system_folder = true` lifts the refusal for the folders a user could mean on purpose
(a dotfiles repository in the home folder, say); the kernel file systems stay refused.
"""

from __future__ import annotations

import os.path
import re
import tomllib
from collections.abc import Iterable, Sequence
from pathlib import Path, PurePosixPath

import msgspec

from ..errors import BadInput
from ..guarded import MIB, InputProblem, loads_toml, read_regular_text
from ..platforms.storage.system_paths import kernel_filesystem_of, system_folder_of
from .globs import BadGlob, Glob, MatchBudget
from .globs import glob_regex as glob_regex  # the spec format's, where readers look for it
from .tools import capped_walk

SPEC_KEYS = ("id", "title", "task", "repository", "files", "commit", "allow_system_folder")
REQUIRED_KEYS = ("id", "title", "task", "repository", "files")
SPEC_SUFFIX = ".toml"
_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z")
_GLOB_CHARS = frozenset("*?[")
SPEC_SIZE_LIMIT = MIB


class LaneSpec(msgspec.Struct, frozen=True):
    """One validated spec. `repository` is resolved to an absolute folder path (it may not exist
    yet: whoever reads it says so); `source` is the spec file, or None for a spec built in code."""

    id: str
    title: str
    task: str
    repository: Path
    files: tuple[str, ...]
    commit: str | None = None
    source: Path | None = None

    @property
    def where(self) -> str:
        """How error messages name this spec."""
        return f"spec {self.id} ({self.source})" if self.source else f"spec {self.id}"


def parse_spec(raw: dict[str, object], *, base: Path, source: Path | None = None) -> LaneSpec:
    """Validate a parsed TOML table; relative `repository` paths are taken from `base`."""
    where = str(source) if source else "spec"
    unknown = sorted(set(raw) - set(SPEC_KEYS))
    if unknown:
        raise BadInput(
            f"{where}: unknown key {unknown[0]!r} (a lane spec has {', '.join(SPEC_KEYS)})"
        )
    missing = [key for key in REQUIRED_KEYS if key not in raw]
    if missing:
        raise BadInput(f"{where}: missing key {missing[0]!r}")
    spec_id = _text(raw, "id", where)
    if not _ID_PATTERN.match(spec_id):
        raise BadInput(f"{where}: id {spec_id!r} may hold only letters, digits, '.', '_' and '-'")
    files = raw["files"]
    if not isinstance(files, list) or not files:
        raise BadInput(f"{where}: 'files' must be a non-empty list of paths or globs")
    patterns = tuple(_pattern(item, where) for item in files)
    commit = _text(raw, "commit", where) if "commit" in raw else None
    if commit is not None and (commit.startswith("-") or any(c.isspace() for c in commit)):
        raise BadInput(f"{where}: commit {commit!r} is not a git revision")
    repository = Path(_text(raw, "repository", where)).expanduser()
    if not repository.is_absolute():
        repository = base / repository
    allow_system = raw.get("allow_system_folder", False)
    if not isinstance(allow_system, bool):
        raise BadInput(f"{where}: 'allow_system_folder' must be true or false")
    _refuse_system_folder(repository, where, allowed=allow_system)
    return LaneSpec(
        id=spec_id,
        title=_text(raw, "title", where),
        task=_text(raw, "task", where),
        repository=Path(_normalize(repository)),
        files=patterns,
        commit=commit,
        source=source,
    )


def load_spec(path: Path) -> LaneSpec:
    """Read and validate one spec file."""
    try:
        raw = loads_toml(read_regular_text(path, limit=SPEC_SIZE_LIMIT))
    except FileNotFoundError:
        raise BadInput(f"spec file not found: {path}") from None
    except tomllib.TOMLDecodeError as exc:
        raise BadInput(f"{path}: not valid TOML ({exc})") from None
    except InputProblem as problem:
        raise BadInput(f"spec file {path} {problem}") from None
    return parse_spec(raw, base=path.parent, source=path)


def find_spec_files(paths: Iterable[Path]) -> list[Path]:
    """Spec files named directly, or every `*.toml` under a folder (recursively), sorted."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found.extend(sorted(_spec_files_under(path)))
        elif path.is_file():
            found.append(path)
        else:
            raise BadInput(
                f"no such spec file or folder: {path} (a lane spec is a TOML file, one a "
                "lane; `vibey-gh slots corpus --demo` builds a corpus from the shipped specs)"
            )
    unique: dict[Path, None] = {}
    for path in found:
        unique.setdefault(path.resolve(), None)
    return list(unique)


def _spec_files_under(folder: Path) -> list[Path]:
    """Every `*.toml` file under `folder`, links to folders not followed; TreeTooLarge past
    the working tree's caps (lanes.tools), as a folder named by mistake (a home folder) would
    otherwise be walked whole."""
    found: list[Path] = []
    walk = capped_walk(folder, skipped=frozenset(), advice="--specs")
    for parent, _, names in walk:
        for name in names:
            candidate = Path(parent, name)
            if name.endswith(SPEC_SUFFIX) and candidate.is_file():
                found.append(candidate)
    return found


def load_specs(paths: Iterable[Path]) -> list[LaneSpec]:
    """Every spec under `paths`, sorted by id; two specs with one id are an error."""
    specs: dict[str, LaneSpec] = {}
    for file in find_spec_files(paths):
        spec = load_spec(file)
        if spec.id in specs:
            raise BadInput(f"spec id {spec.id!r} is used twice: {specs[spec.id].source} and {file}")
        specs[spec.id] = spec
    if not specs:
        raise BadInput("no lane specs found (looked for *.toml files)")
    return [specs[key] for key in sorted(specs)]


def resolve_files(spec: LaneSpec, available: Sequence[str]) -> list[str]:
    """The spec's files in reading order, globs expanded against `available` (relative POSIX
    paths of every file in the repository at the commit read). The globs' matching shares one
    budget (`lanes.globs`): a spec that would take too long is refused, saying so."""
    present = set(available)
    budget = MatchBudget(spec.where)
    ordered: dict[str, None] = {}
    for pattern in spec.files:
        if _GLOB_CHARS.isdisjoint(pattern):
            if pattern not in present:
                raise _not_listed(spec, pattern)
            ordered.setdefault(pattern, None)
            continue
        matches = sorted(Glob(pattern).matching(available, budget))
        if not matches:
            raise BadInput(f"{spec.where}: no file in {spec.repository} matches {pattern!r}")
        for path in matches:
            ordered.setdefault(path, None)
    return list(ordered)


def _not_listed(spec: LaneSpec, pattern: str) -> BadInput:
    """Why a file the spec names is not among the repository's files: a link (the lanes read no
    link: it could lead out of the repository), or not there at all."""
    path = spec.repository / pattern
    if path.is_symlink():
        target = path.resolve()
        if not target.is_relative_to(spec.repository.resolve()):
            return BadInput(
                f"{spec.where}: {pattern} in {spec.repository} is a link out of the repository "
                f"(to {target}); a lane reads only files inside it"
            )
        return BadInput(
            f"{spec.where}: {pattern} in {spec.repository} is a link; a lane reads no link, so "
            "name the file it points to"
        )
    return BadInput(f"{spec.where}: file not found in {spec.repository}: {pattern}")


def _refuse_system_folder(repository: Path, where: str, *, allowed: bool) -> None:
    kernel = kernel_filesystem_of(repository)
    system = kernel or system_folder_of(repository)
    if system is None or (allowed and kernel is None):
        return
    lift = "" if kernel else "; name a folder inside it, or set allow_system_folder = true"
    raise BadInput(
        f"{where}: repository {repository} is the system folder {system}, and the lane's model "
        f"could read every file in it{lift}"
    )


def _text(raw: dict[str, object], key: str, where: str) -> str:
    value = raw[key]
    if not isinstance(value, str) or not value.strip():
        raise BadInput(f"{where}: {key!r} must be a non-empty string")
    return value


def _pattern(item: object, where: str) -> str:
    if not isinstance(item, str) or not item.strip():
        raise BadInput(f"{where}: every entry of 'files' must be a non-empty string")
    path = PurePosixPath(item)
    if path.is_absolute() or ".." in path.parts or "\\" in item:
        raise BadInput(f"{where}: file {item!r} must be a relative path inside the repository")
    if not _GLOB_CHARS.isdisjoint(item):
        try:
            glob_regex(str(path))
        except BadGlob as exc:
            raise BadInput(f"{where}: file glob {item!r} is not a valid glob: {exc}") from None
        except re.error:
            raise BadInput(f"{where}: file glob {item!r} is not a valid glob") from None
    return str(path)


def _normalize(path: Path) -> str:
    # resolve() would follow symlinks and need the folder to exist; a spec names a folder
    # by its path, and a missing one is reported by whoever opens it.
    return os.path.normpath(os.path.abspath(path))
