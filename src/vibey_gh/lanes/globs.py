"""A spec's globs, matched against a repository's files in bounded time.

The syntax is the spec format's (`lanes.specs`): `*` and `?` within one path segment, `**/` for
any number of whole segments, `**` for any characters, `[...]` for one character of a set.
`glob_regex` writes a glob as a regular expression, and for everyday globs that is what
matches. But a backtracking regex engine tries every way of splitting a path among the
wildcards: ten `**/` against a path 40 folders deep is billions of tries, and one `re.match`
call cannot be interrupted. So a glob with more than two wildcards is matched by simulating
its automaton instead (every partial match kept at once, one pass over the path): time grows
with the path's length times the glob's, never exponentially.

Both ways count their work in steps (a character of a path; for a transition of the automaton
met for the first time, a character times the partial matches alive), and a spec's globs share
one budget (`MatchBudget`, MAX_MATCH_STEPS); running out is an error that says so.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import msgspec

from ..errors import BadInput

# A step is one character of one path (one partial match, when a transition is new): at most
# about ten seconds on a slow, busy core. An ordinary spec over a large repository (three globs,
# 100,000 files of 60 characters) spends 18 million.
MAX_MATCH_STEPS = 30_000_000
# Globs with at most this many wildcards (`*`, `**`, `**/`) use the regular expression: with
# two, a path of n characters costs at most n² tries.
REGEX_WILDCARDS = 2
TRANSITIONS_KEPT = 100_000

_LITERAL, _ONE, _CLASS, _STAR, _ANY, _SEGMENTS = range(6)
_REPEATING = (_STAR, _ANY, _SEGMENTS)


class _Token(msgspec.Struct, frozen=True):
    kind: int
    char: str = ""
    chars: re.Pattern[str] | None = None

    def takes(self, char: str) -> bool:
        """Whether this token consumes `char` (and moves on, or stays for a repeating one)."""
        if self.kind == _LITERAL:
            return char == self.char
        if self.kind == _CLASS:
            assert self.chars is not None
            return self.chars.match(char) is not None
        if self.kind == _ANY:
            return char != "\n"  # as the regex's `.`
        return char != "/"  # `?`, `*`, and the segments of `**/`


def tokenize(pattern: str) -> list[tuple[str, str]]:
    """The glob as (kind, text) pieces, in the order `glob_regex` reads it: kind is "**/",
    "**", "*", "?", "[]" (text: the class's regex) or "" (text: one literal character)."""
    pieces: list[tuple[str, str]] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            pieces.append(("**/", ""))
            i += 3
        elif pattern.startswith("**", i):
            pieces.append(("**", ""))
            i += 2
        elif pattern[i] in "*?":
            pieces.append((pattern[i], ""))
            i += 1
        elif pattern[i] == "[" and "]" in pattern[i + 2 :]:
            end = pattern.index("]", i + 2)
            body = pattern[i + 1 : end]
            negate = body.startswith("!")
            body = body[1:] if negate else body
            text = "[" + ("^" if negate else "") + body.replace("\\", "\\\\") + "]"
            pieces.append(("[]", _checked_class(pattern[i : end + 1], body, text)))
            i = end + 1
        else:
            pieces.append(("", pattern[i]))
            i += 1
    return pieces


class BadGlob(ValueError):
    """A glob that names nothing it could match, said in the glob's own terms."""


def _checked_class(written: str, body: str, regex: str) -> str:
    """The regex of the class `written` in the glob; BadGlob when it cannot be one (never the
    regex's own complaint, which speaks of escapes the user did not write)."""
    if not body:
        raise BadGlob(f"the class {written} names no character")
    try:
        re.compile(regex)
    except re.error as exc:
        raise BadGlob(f"the class {written} is not a set of characters ({exc.msg})") from None
    return regex


_REGEX_OF = {"**/": "(?:[^/]+/)*", "**": ".*", "*": "[^/]*", "?": "[^/]"}


def glob_regex(pattern: str) -> re.Pattern[str]:
    """The regular expression for one glob (the syntax is in `lanes.specs`)."""
    parts = [
        text if kind == "[]" else _REGEX_OF.get(kind) or re.escape(text)
        for kind, text in tokenize(pattern)
    ]
    return re.compile("".join(parts) + r"\Z")


class MatchBudget:
    """The steps one spec's globs may take; `spend` raises BadInput once they run out."""

    def __init__(self, where: str, steps: int | None = None) -> None:
        self.where = where
        self.total = MAX_MATCH_STEPS if steps is None else steps
        self.left = self.total

    def spend(self, steps: int, pattern: str, files: int) -> None:
        self.left -= steps
        if self.left < 0:
            raise BadInput(
                f"{self.where}: matching its globs against {files:,} files ran out of its "
                f"budget of {self.total:,} steps at {pattern!r}; name fewer or narrower globs"
            )


class Glob:
    """One glob, ready to match whole relative paths."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        kind_of = {"**/": _SEGMENTS, "**": _ANY, "*": _STAR, "?": _ONE}
        self._tokens: list[_Token] = []
        for kind, text in tokenize(pattern):
            if kind == "[]":
                self._tokens.append(_Token(_CLASS, chars=re.compile(text)))
            elif kind:
                self._tokens.append(_Token(kind_of[kind]))
            else:
                self._tokens.append(_Token(_LITERAL, char=text))
        wildcards = sum(token.kind in _REPEATING for token in self._tokens)
        self._regex = glob_regex(pattern) if wildcards <= REGEX_WILDCARDS else None
        self._start = self._closure({0})
        self._transitions: dict[tuple[frozenset[int], str], frozenset[int]] = {}

    def matching(self, paths: Sequence[str], budget: MatchBudget) -> list[str]:
        """The paths this glob matches, in their order; each one's work charged to `budget`."""
        found: list[str] = []
        for path in paths:
            if self._regex is not None:
                budget.spend(len(path), self.pattern, len(paths))
                if self._regex.match(path):
                    found.append(path)
            elif self._simulate(path, budget, len(paths)):
                found.append(path)
        return found

    def _closure(self, states: set[int]) -> frozenset[int]:
        """`states` and every state a repeating token can skip to without a character. A state
        is 2k at token k, or 2k + 1 inside a segment of a `**/` at token k."""
        done: set[int] = set()
        pending = list(states)
        while pending:
            state = pending.pop()
            if state in done:
                continue
            done.add(state)
            index, inside = divmod(state, 2)
            if not inside and index < len(self._tokens) and self._tokens[index].kind in _REPEATING:
                pending.append(2 * (index + 1))
        return frozenset(done)

    def _step(self, states: frozenset[int], char: str) -> frozenset[int]:
        """The partial matches alive after `char`, from those alive before it."""
        tokens = self._tokens
        following: set[int] = set()
        for state in states:
            index, inside = divmod(state, 2)
            if index == len(tokens):
                continue
            token = tokens[index]
            if token.kind == _SEGMENTS:
                if char != "/":
                    following.add(2 * index + 1)  # within a segment of `**/`
                elif inside:
                    following.add(2 * index)  # that segment ended: another may start
            elif token.takes(char):
                following.add(2 * index if token.kind in (_STAR, _ANY) else 2 * (index + 1))
        return self._closure(following)

    def _simulate(self, path: str, budget: MatchBudget, files: int) -> bool:
        # Each (partial matches, character) pair is worked out once and remembered, so most
        # characters cost one lookup (a lazily built deterministic automaton); the memory is
        # bounded by forgetting everything once it holds TRANSITIONS_KEPT pairs.
        states = self._start
        for char in path:
            key = (states, char)
            following = self._transitions.get(key)
            if following is None:
                budget.spend(len(states), self.pattern, files)
                following = self._step(states, char)
                if len(self._transitions) >= TRANSITIONS_KEPT:
                    self._transitions.clear()
                self._transitions[key] = following
            else:
                budget.spend(1, self.pattern, files)
            if not following:
                return False
            states = following
        return 2 * len(self._tokens) in states
