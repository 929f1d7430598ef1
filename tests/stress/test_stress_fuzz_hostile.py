"""Fuzzing with what a hostile user would write: nesting far past any real file, non-finite
numbers, special characters in URLs and globs, and counts past any machine. Each reader either
accepts the input (and then every later use of it works) or raises its own one-line error."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from fuzz_support import FUZZ, assert_clean_outcome, invoke, json_values
from hypothesis import given
from hypothesis import strategies as st

from vibey_gh.config import parse_config
from vibey_gh.errors import BadInput, ConfigError
from vibey_gh.guarded import MAX_DEPTH, InputProblem, loads_json, loads_toml, nesting_depth
from vibey_gh.lanes.specs import glob_regex, parse_spec

OPENERS = st.lists(st.sampled_from(["[", '{"k":']), min_size=1, max_size=3000)


def _closed(openers: list[str]) -> str:
    return "".join(openers) + "".join("]" if o == "[" else "}" for o in reversed(openers))


@FUZZ
@given(openers=OPENERS, tail=st.text(max_size=4))
def test_json_of_any_depth_is_read_or_refused_in_words(openers: list[str], tail: str) -> None:
    text = _closed(openers) + tail
    try:
        value = loads_json(text)
    except InputProblem as problem:
        assert "\n" not in str(problem)
        if "nested" in str(problem):
            assert len(openers) > MAX_DEPTH
        return
    assert nesting_depth(value) == len(openers) <= MAX_DEPTH


@FUZZ
@given(value=json_values)
def test_json_with_non_finite_numbers_is_refused(value: Any) -> None:
    text = json.dumps(value)  # writes NaN and Infinity as Python does
    try:
        parsed = loads_json(text)
    except InputProblem as problem:
        assert "non-finite" in str(problem)
        assert re.search(r"NaN|Infinity", text)
        return
    assert not re.search(r"\bNaN\b|Infinity", json.dumps(parsed))


@FUZZ
@given(depth=st.integers(1, 2000), key=st.sampled_from(["x", "local_models.x"]))
def test_toml_of_any_depth_is_read_or_refused_in_words(depth: int, key: str) -> None:
    text = f"{key} = " + "[" * depth + "]" * depth + "\n"
    try:
        value = loads_toml(text)
    except InputProblem as problem:
        assert "nested more than" in str(problem)
        assert depth + key.count(".") + 1 > MAX_DEPTH
        return
    assert nesting_depth(value) <= MAX_DEPTH


@FUZZ
@given(depth=st.integers(60, 1500))
def test_a_deep_config_gives_an_answer_or_one_line(depth: int) -> None:
    config = Path("vibey-gh.toml")
    text = "[local_models]\nx = " + "[" * depth + "]" * depth + "\n"
    config.write_text(text)
    result = invoke(["slots", "allowed", "--json"])
    assert_clean_outcome(result)
    if result.exit_code == 0:  # the gate answers a broken config with one, and says why
        answer = json.loads(result.stdout)
        assert answer["allowed"] == 1
        assert (depth + 2 > 64) == ("nested more than 64 levels deep" in answer["reason"])
    assert config.read_text() == text


URL_PIECES = st.lists(
    st.sampled_from(
        [
            "http://",
            "https://",
            "ftp://",
            "[",
            "]",
            "::1",
            "127.0.0.1",
            ":",
            "0",
            "99999",
            "-1",
            "@",
            "/",
            "?",
            "#",
            "%",
            " ",
            "\t",
            "x",
            "ü",
            "[::1]",
            "\0",
            "65535",
        ]
    ),
    max_size=8,
).map("".join)


@FUZZ
@given(url=URL_PIECES)
def test_any_production_url_is_accepted_whole_or_refused_at_load(url: str) -> None:
    try:
        config = parse_config({"local_models": {"production_url": url}}, Path("vibey-gh.toml"))
    except ConfigError as exc:
        assert "\n" not in str(exc)
        return
    from urllib.parse import urlsplit

    parts = urlsplit(config.production)  # every later use of it works
    assert parts.scheme in ("http", "https") and parts.hostname
    assert parts.port is None or 1 <= parts.port <= 65535


GLOBS = st.text(alphabet="[]!^-*?az/.\\()|{}+", min_size=1, max_size=12)


@FUZZ
@given(pattern=GLOBS)
def test_any_glob_is_accepted_and_compiles_or_is_refused_in_words(pattern: str) -> None:
    raw = {"id": "g", "title": "t", "task": "Read.", "repository": "repo", "files": [pattern]}
    try:
        spec = parse_spec(raw, base=Path("/tmp"))
    except BadInput as exc:
        assert "\n" not in str(exc)
        return
    for accepted in spec.files:
        glob_regex(accepted).match("a/b.py")  # never re.error after the spec was accepted


@FUZZ
@given(
    items=st.lists(
        st.integers(-5, 10**30).map(str) | st.sampled_from(["", " ", "x", "1.5", "٣"]),
        min_size=1,
        max_size=5,
    )
)
def test_any_slots_list_is_refused_in_one_line_before_anything_starts(items: list[str]) -> None:
    text = ",".join(items)
    if all(item.strip().isdigit() and item.isascii() and 1 <= int(item) <= 16 for item in items):
        return  # a valid list: it would start a real sweep
    result = invoke(["slots", "calibrate", "--slots", text, "--corpus", "missing.json"])
    assert_clean_outcome(result, ok_codes=())
    assert "--slots" in result.stderr
