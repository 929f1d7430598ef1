"""The files a spec reads: a git repository at a commit, or a working tree.

A folder inside a git repository is read at the spec's commit (default HEAD) with git itself
(argv, never a shell): `git rev-parse` names the commit, `git ls-tree` lists its files and one
`git cat-file --batch` reads every blob a pool needs — the same bytes `git show COMMIT:path`
prints, in one process instead of one per file. A folder outside any repository, or one whose
HEAD holds none of its files (an installed package inside a checkout's virtualenv), is read
from disk, and the sha256 of every file read is recorded instead of a commit.
"""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path

from ...errors import BadInput, VibeyError
from ...lanes.tools import MAX_TREE_DEPTH, MAX_TREE_ENTRIES, TreeTooLarge, WorkingTree, too_deep

DEFAULT_REVISION = "HEAD"
GIT_TIMEOUT_S = 120.0
_SYMLINK_MODE = "120000"


class GitFailed(VibeyError):
    """git ran and said no (exit 1): a corrupt repository, a lost object, a slow disk."""


def run_git(git: str, folder: Path, args: Sequence[str], stdin: bytes | None = None) -> bytes:
    """stdout of `git -C folder args...`; GitFailed with git's own first error line."""
    argv = [git, "-C", str(folder), *args]
    try:
        done = subprocess.run(
            argv, input=stdin, capture_output=True, timeout=GIT_TIMEOUT_S, check=False
        )
    except FileNotFoundError:
        raise BadInput(f"git is not installed (needed to read {folder})") from None
    except subprocess.TimeoutExpired:
        raise GitFailed(f"git {args[0]} in {folder} took over {GIT_TIMEOUT_S:.0f}s") from None
    if done.returncode != 0:
        lines = done.stderr.decode("utf-8", errors="replace").strip().splitlines()
        raise GitFailed(f"git {args[0]} in {folder}: {lines[0] if lines else 'failed'}")
    return done.stdout


@dataclass
class Provenance:
    """Where a tree's files came from, as recorded in the corpus.

    repository: the folder's name; commit: the full sha, or None for a working tree;
    files: path -> sha256 of each file read from a working tree (empty for a commit).
    """

    repository: str
    commit: str | None
    files: dict[str, str] = field(default_factory=dict)

    # By hand: `source` is derived from `commit`, and `files` written only for a working tree;
    # corpora hash these bytes, so their form stays as it was.
    def to_json(self) -> dict[str, object]:
        data: dict[str, object] = {
            "repository": self.repository,
            "commit": self.commit,
            "source": "git" if self.commit else "working-tree",
        }
        if self.commit is None:
            data["files"] = dict(sorted(self.files.items()))
        return data


@dataclass(eq=False)
class GitTree:
    """A folder of a git repository at one commit. Paths are relative to that folder.

    Its listing is capped as a working tree's walk is: TreeTooLarge past `max_entries` files
    and folders or below `max_depth` folders, never a listing cut short."""

    toplevel: Path
    prefix: str
    commit: str
    git: str = "git"
    _: KW_ONLY
    max_entries: int = MAX_TREE_ENTRIES
    max_depth: int = MAX_TREE_DEPTH
    # read once, when first asked: the commit's listing (path -> blob sha) and its blobs
    _objects: dict[str, str] | None = field(default=None, init=False, repr=False)
    _blobs: dict[str, bytes] = field(default_factory=dict, init=False, repr=False)

    def _listing(self) -> dict[str, str]:
        if self._objects is None:
            # -t lists the folders too, so they count toward the cap as on disk
            args = ["ls-tree", "-r", "-t", "-z", "--full-tree", self.commit]
            if self.prefix:
                args += ["--", self.prefix]
            out = run_git(self.git, self.toplevel, args)
            objects: dict[str, str] = {}
            entries = 0
            for entry in out.decode("utf-8", errors="surrogateescape").split("\0"):
                meta, _, path = entry.partition("\t")
                if not path.startswith(self.prefix) or len(path) == len(self.prefix):
                    continue  # the folder itself and those above it (-t lists them)
                relative = path[len(self.prefix) :]
                mode, kind, sha = meta.split(" ")
                entries += 1
                if entries > self.max_entries:
                    raise TreeTooLarge(
                        f"{self.root} holds more than {self.max_entries:,} files and folders "
                        f"at commit {self.commit[:12]}: name a smaller folder as the spec's "
                        "repository"
                    )
                if kind == "tree" and relative.count("/") >= self.max_depth:
                    raise TreeTooLarge(
                        too_deep(self.root, relative, self.max_depth, "the spec's repository")
                    )
                if kind == "blob" and mode != _SYMLINK_MODE:
                    objects[relative] = sha
            self._objects = dict(sorted(objects.items()))
        return self._objects

    @property
    def root(self) -> Path:
        """The folder the spec named, inside the repository."""
        return self.toplevel / self.prefix

    def list_files(self) -> Sequence[str]:
        return list(self._listing())

    def read_bytes(self, path: str) -> bytes:
        if path not in self._blobs:
            self.prefetch([path])
        return self._blobs[path]

    def prefetch(self, paths: Iterable[str]) -> None:
        """Read every missing blob of `paths` with one `git cat-file --batch`."""
        listing = self._listing()
        wanted: dict[str, str] = {}
        for path in paths:
            if path in self._blobs or path in wanted:
                continue
            if path not in listing:
                folder = path.rstrip("/") + "/"
                if any(name.startswith(folder) for name in listing):
                    raise IsADirectoryError(path)
                raise FileNotFoundError(path)
            wanted[path] = listing[path]
        if not wanted:
            return
        request = "".join(f"{sha}\n" for sha in wanted.values()).encode("ascii")
        out = run_git(self.git, self.toplevel, ["cat-file", "--batch"], stdin=request)
        position = 0
        for path in wanted:
            header_end = out.index(b"\n", position)
            header = out[position:header_end].split(b" ")
            if len(header) != 3:
                raise BadInput(f"git could not read {path} at {self.commit[:12]}")
            size = int(header[2])
            start = header_end + 1
            self._blobs[path] = out[start : start + size]
            position = start + size + 1


class RecordingWorkingTree(WorkingTree):
    """A working tree that remembers the sha256 of every file it hands out."""

    def __init__(self, root: Path, provenance: Provenance) -> None:
        super().__init__(root)
        self.provenance = provenance

    def read_bytes(self, path: str) -> bytes:
        data = super().read_bytes(path)
        self.provenance.files[path] = hashlib.sha256(data).hexdigest()
        return data

    def prefetch(self, paths: Iterable[str]) -> None:
        """Nothing to batch on disk; present so both trees share one call."""


SpecTree = GitTree | RecordingWorkingTree


class TreeCache:
    """Opens each (folder, revision) once per pool, so specs over one repository share its
    listing and blobs."""

    def __init__(self, git: str = "git") -> None:
        self.git = git
        self._trees: dict[tuple[Path, str | None], tuple[SpecTree, Provenance]] = {}

    def open(self, repository: Path, revision: str | None, where: str) -> SpecTree:
        key = (repository, revision)
        if key not in self._trees:
            self._trees[key] = self._open(repository, revision, where)
        return self._trees[key][0]

    def provenances(self) -> list[Provenance]:
        unique: dict[tuple[str, str | None], Provenance] = {}
        for _, provenance in self._trees.values():
            existing = unique.setdefault((provenance.repository, provenance.commit), provenance)
            if existing is not provenance:
                existing.files.update(provenance.files)
        return [unique[key] for key in sorted(unique, key=lambda k: (k[0], k[1] or ""))]

    def _open(
        self, repository: Path, revision: str | None, where: str
    ) -> tuple[SpecTree, Provenance]:
        if not repository.is_dir():
            raise BadInput(f"{where}: repository folder not found: {repository}")
        toplevel = self._toplevel(repository, revision, where)
        if toplevel is not None:
            prefix = run_git(self.git, repository, ["rev-parse", "--show-prefix"])
            commit = self._commit(repository, revision or DEFAULT_REVISION)
            if commit is not None:
                tree = GitTree(toplevel, prefix.decode().strip(), commit, self.git)
                if revision is not None or _lists_files(tree, where):
                    return tree, Provenance(repository.name, commit)
            elif revision is not None:
                raise BadInput(f"{where}: commit {revision!r} not found in {repository}")
        provenance = Provenance(repository.name, None)
        return RecordingWorkingTree(repository, provenance), provenance

    def _toplevel(self, repository: Path, revision: str | None, where: str) -> Path | None:
        try:
            out = run_git(self.git, repository, ["rev-parse", "--show-toplevel"])
        except GitFailed:
            if revision is not None:
                raise BadInput(
                    f"{where}: names commit {revision!r} but {repository} is not in a git "
                    "repository"
                ) from None
            return None
        except BadInput:
            if revision is not None:
                raise
            return None  # no git at all: a working tree needs none
        return Path(out.decode().strip())

    def _commit(self, repository: Path, revision: str) -> str | None:
        try:
            out = run_git(
                self.git, repository, ["rev-parse", "--verify", "-q", f"{revision}^{{commit}}"]
            )
        except GitFailed:
            return None
        return out.decode().strip()


def _lists_files(tree: GitTree, where: str) -> bool:
    """Whether the commit holds any file of the tree's folder; a listing past the caps is
    refused as the spec's (`where`)."""
    try:
        return bool(tree.list_files())
    except TreeTooLarge as exc:
        raise BadInput(f"{where}: repository {exc}") from None
