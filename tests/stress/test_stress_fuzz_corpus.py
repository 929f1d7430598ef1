"""Fuzzing corpus files, read by `slots corpus --show` and `slots calibrate --corpus`. A corpus
carries its own hash, so most edits are refused at once; the re-hashed edits below get past
that check and reach the parts of the reader behind it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fuzz_support import FUZZ, assert_clean_outcome, invoke, json_values, mutations_of
from hypothesis import given
from hypothesis import strategies as st
from stress_support import (
    MICRO_WINDOW,
    config_toml,
    micro_config,
    micro_corpus_document,
    port_held,
)

from vibey_gh.files import canonical_json
from vibey_gh.slots.corpus.corpus import read_corpus
from vibey_gh.slots.corpus.turns import sha256_text

VALID = micro_corpus_document()
HASH_KEY = "corpus_sha256"


def _rehashed(document: Any) -> Any:
    """The edited corpus with a hash that matches its new content."""
    if isinstance(document, dict):
        body = {k: v for k, v in document.items() if k != HASH_KEY}
        return {**body, HASH_KEY: sha256_text(canonical_json(body))}
    return document


def _as_bytes(document: Any) -> bytes:
    return json.dumps(document, ensure_ascii=False).encode()


corpus_contents = st.one_of(
    st.text(max_size=200).map(str.encode),
    json_values.map(_as_bytes),
    mutations_of(VALID).map(_as_bytes),
    mutations_of(VALID).map(_rehashed).map(_as_bytes),
)


@FUZZ
@given(content=corpus_contents)
def test_corpus_show_summarizes_or_fails_in_one_line(content: bytes) -> None:
    path = Path("fuzz-corpus.json")
    path.write_bytes(content)
    result = invoke(["slots", "corpus", "--show", str(path), "--json"])
    assert_clean_outcome(result)
    assert path.read_bytes() == content
    if result.exit_code == 0:
        read_corpus(json.loads(content))  # only a corpus that reads back is summarized


@FUZZ
@given(content=corpus_contents)
def test_calibrate_refuses_a_bad_corpus_in_one_line(content: bytes) -> None:
    """A corpus that still reads as valid meets the port this test holds (exit 2): no runner
    is ever started."""
    path = Path("fuzz-corpus.json")
    path.write_bytes(content)
    config = micro_config()
    Path("vibey-gh.toml").write_text(config_toml(config))
    args = ["slots", "calibrate", "--corpus", str(path), "--window", str(MICRO_WINDOW)]
    with port_held(config.calibration_port):
        result = invoke([*args, "--slots", "1", "--max-tokens", "8"])
    assert_clean_outcome(result, ok_codes=(), alone=False)
    assert path.read_bytes() == content
