"""The corpus: golden hashes, byte-identical files, validation on load, and the demo."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
from pathlib import Path

import pytest
from test_corpus_support import SOURCE_FILES, synthetic_run, write_spec

from tests.support.repos import make_repo
from vibey_gh.errors import BadInput
from vibey_gh.files import canonical_json
from vibey_gh.interfaces.schema import as_json
from vibey_gh.lanes.specs import load_specs
from vibey_gh.slots.corpus.corpus import (
    Corpus,
    build_corpus,
    build_demo_corpus,
    demo_specs_dir,
    load_corpus,
    write_corpus,
)
from vibey_gh.slots.corpus.pool import Pool, PoolSources, build_pool, make_pool
from vibey_gh.slots.corpus.summary import corpus_summary
from vibey_gh.slots.corpus.turns import sha256_text

# Golden values: a change here means every stored corpus and checkpoint key changes too.
SYNTHETIC_POOL_SHA256 = "7e672b119032811437672dcea9ce5888fcb17a8ce6d68aa921868b3af61fd782"
SYNTHETIC_CORPUS_SHA256 = "bb1872082d591a3a9ec54148707cef3d813a2324d038c6e728f255d5b1ad6235"
GIT_COMMIT = "0f2fbbae1ac895c0d250d473c9c54895b8b765fd"
GIT_POOL_SHA256 = "29a7651c1ff28d2b766f7c35186b2b61fb03489f79fc794f11617573aa5ab425"
GIT_CORPUS_SHA256 = "dde7505b7d423b0a15f64d95e770ac12f1259f79dc1563e3a24d651422c2b10b"


def synthetic_pool() -> Pool:
    return make_pool(
        synthetic_run(f"run-{r:02d}", [100 + r * 7 + i * 250 for i in range(16)]) for r in range(12)
    )


def synthetic_corpus() -> Corpus:
    return build_corpus(
        synthetic_pool(), window=4000, segments_per_stratum=3, segment_turns=3, seed=0
    )


def git_corpus(root: Path) -> Corpus:
    make_repo(root / "repo", SOURCE_FILES)
    write_spec(root / "specs", "alpha", ["pkg/*.py", "data/big.txt"], "../repo")
    write_spec(root / "specs", "beta", ["README.md", "**/*.py"], "../repo")
    pool = build_pool(PoolSources(specs=[root / "specs"]))
    return build_corpus(pool, window=8192, segments_per_stratum=2, segment_turns=2, seed=0)


def test_golden_hashes_of_a_synthetic_pool() -> None:
    corpus = synthetic_corpus()
    assert corpus.pool_sha256 == SYNTHETIC_POOL_SHA256
    assert corpus.corpus_sha256 == SYNTHETIC_CORPUS_SHA256
    assert corpus.turn_count == 36


def test_golden_hashes_of_a_spec_pool_over_a_real_repository(tmp_path: Path) -> None:
    corpus = git_corpus(tmp_path)
    assert corpus.commits == ({"repository": "repo", "commit": GIT_COMMIT, "source": "git"},)
    assert corpus.pool_sha256 == GIT_POOL_SHA256
    assert corpus.corpus_sha256 == GIT_CORPUS_SHA256
    assert [stratum.segments for stratum in corpus.strata] == [2, 1, 0, 1]


def test_same_inputs_give_byte_identical_files(tmp_path: Path) -> None:
    first, second = tmp_path / "one" / "c.json", tmp_path / "two" / "c.json"
    write_corpus(git_corpus(tmp_path / "a"), first)
    write_corpus(git_corpus(tmp_path / "b"), second)
    assert first.read_bytes() == second.read_bytes()
    assert stat.S_IMODE(first.stat().st_mode) == 0o600
    assert first.read_bytes().count(b"\n") == 1


def test_a_written_corpus_loads_back_equal(tmp_path: Path) -> None:
    corpus = synthetic_corpus()
    path = tmp_path / "corpus.json"
    write_corpus(corpus, path)
    loaded = load_corpus(path)
    assert loaded == corpus
    assert loaded.max_depth_estimate == corpus.max_depth_estimate
    assert [s.segments for s in loaded.strata] == [3, 3, 3, 3]


def test_the_hash_covers_everything_but_itself(tmp_path: Path) -> None:
    corpus = synthetic_corpus()
    data = as_json(corpus)
    assert set(data) - set(corpus.body_json()) == {"corpus_sha256"}
    changed = build_corpus(
        synthetic_pool(), window=4000, segments_per_stratum=3, segment_turns=3, seed=1
    )
    assert changed.corpus_sha256 != corpus.corpus_sha256
    assert changed.pool_sha256 == corpus.pool_sha256


def tampered(tmp_path: Path, change: str) -> Path:
    path = tmp_path / "corpus.json"
    write_corpus(synthetic_corpus(), path)
    data = json.loads(path.read_text(encoding="utf-8"))
    if change == "content":
        data["segments"][0]["turns"][0]["messages"][0]["content"] = "edited by hand"
    elif change == "window":
        data["window"] = 8000
    elif change == "schema":
        data["schema_version"] = 99
    elif change == "kind":
        data["kind"] = "something else"
    elif change == "field":
        del data["seed"]
        body = {key: value for key, value in data.items() if key != "corpus_sha256"}
        data["corpus_sha256"] = sha256_text(canonical_json(body))
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("content", "content does not match its corpus_sha256"),
        ("window", "content does not match its corpus_sha256"),
        ("schema", "schema_version 99; this tool reads 1"),
        ("kind", "not a corpus file"),
        ("field", "malformed corpus"),
    ],
)
def test_a_changed_or_malformed_file_is_refused(tmp_path: Path, change: str, message: str) -> None:
    with pytest.raises(BadInput, match=message):
        load_corpus(tampered(tmp_path, change))


def test_unreadable_corpus_files_are_bad_input(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="corpus file not found"):
        load_corpus(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{oops", encoding="utf-8")
    with pytest.raises(BadInput, match="is not valid JSON"):
        load_corpus(tmp_path / "bad.json")
    (tmp_path / "list.json").write_text("[]", encoding="utf-8")
    with pytest.raises(BadInput, match="expected a JSON object"):
        load_corpus(tmp_path / "list.json")


def test_a_corpus_holding_nan_is_refused_even_with_a_matching_hash(tmp_path: Path) -> None:
    path = tmp_path / "corpus.json"
    write_corpus(synthetic_corpus(), path)
    text = path.read_text(encoding="utf-8").replace('"seed":', '"nan_here":NaN,"seed":', 1)
    path.write_text(text, encoding="utf-8")
    with pytest.raises(BadInput, match="corpus.json holds the non-finite number NaN"):
        load_corpus(path)


def test_a_fifo_corpus_is_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "corpus.json")
    with pytest.raises(BadInput, match="corpus.json is a FIFO, not a regular file"):
        load_corpus(tmp_path / "corpus.json")


def test_writing_over_a_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="is a folder"):
        write_corpus(synthetic_corpus(), tmp_path)


def test_summary_has_what_scripts_read() -> None:
    summary = corpus_summary(synthetic_corpus())
    assert summary["corpus_sha256"] == SYNTHETIC_CORPUS_SHA256
    assert summary["pool_sha256"] == SYNTHETIC_POOL_SHA256
    assert (summary["window"], summary["seed"]) == (4000, 0)
    assert (summary["segments"], summary["turns"]) == (12, 36)
    assert summary["strata"] == [3, 3, 3, 3]
    names = [s["name"] for s in summary["strata_detail"]]
    assert names == ["<1,000", "1,000–2,000", "2,000–3,000", "≥3,000"]


def test_the_shipped_demo_specs_are_valid_and_read_the_package() -> None:
    specs = load_specs([demo_specs_dir()])
    assert len(specs) >= 4
    package = demo_specs_dir().parent.parent
    assert all(spec.repository == package for spec in specs)


def test_the_demo_corpus_fills_every_stratum_of_a_4096_window() -> None:
    corpus = build_demo_corpus()
    assert corpus.window == 4096
    assert corpus.segment_turns == 2
    assert [stratum.segments for stratum in corpus.strata] == [2, 2, 2, 2]
    assert corpus.turn_count == 16
    assert corpus.max_depth_estimate <= 4096
    assert corpus.commits and corpus.commits[0]["repository"] == "vibey_gh"
    assert build_demo_corpus().corpus_sha256 == corpus.corpus_sha256


def test_an_installed_copy_outside_git_reads_its_own_files_with_hashes(tmp_path: Path) -> None:
    package = demo_specs_dir().parent.parent
    copy = tmp_path / "site-packages" / "vibey_gh"
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__"))
    pool = build_pool(PoolSources(specs=[copy / "demo" / "specs"]))
    corpus = build_corpus(pool, window=4096, segments_per_stratum=2, segment_turns=2)
    (commit,) = corpus.commits
    assert commit["source"] == "working-tree"
    assert commit["commit"] is None
    results = {turn.messages[-1]["content"] for run in pool.runs for turn in run.turns}
    assert (copy / "errors.py").read_text(encoding="utf-8") in results
    digest = hashlib.sha256((copy / "errors.py").read_bytes()).hexdigest()
    assert commit["files"]["errors.py"] == digest
    assert [stratum.segments for stratum in corpus.strata] == [2, 2, 2, 2]


def test_corpus_turns_share_no_message_objects() -> None:
    corpus = build_demo_corpus()
    first, second = corpus.segments[0].turns
    first.messages[0]["content"] = "changed by a careless sender"
    assert second.messages[0]["content"] != "changed by a careless sender"
    assert first.tools is not second.tools


@pytest.mark.parametrize(
    ("path", "value", "where"),
    [
        (("seed",), None, "seed: missing"),
        (("window",), "big", "window: expected a whole number, got 'big'"),
        (("pool", "runs"), 1.5, "pool.runs: expected a whole number, got 1.5"),
        (("segments",), {}, "segments: expected a list, got {}"),
        (("segments", 0, "turns", 1, "id"), 3, "segments[0].turns[1].id: expected a string, got 3"),
        (
            ("segments", 0, "stratum"),
            True,
            "segments[0].stratum: expected a whole number, got True",
        ),
        (("strata", 2, "wanted"), "4", "strata[2].wanted: expected a whole number, got '4'"),
    ],
)
def test_a_bad_corpus_field_is_named_by_its_json_path(
    tmp_path: Path, path: tuple[str | int, ...], value: object, where: str
) -> None:
    file = tmp_path / "corpus.json"
    write_corpus(synthetic_corpus(), file)
    data = json.loads(file.read_text(encoding="utf-8"))
    holder = data
    for part in path[:-1]:
        holder = holder[part]
    if value is None:
        del holder[path[-1]]
    else:
        holder[path[-1]] = value
    body = {key: value for key, value in data.items() if key != "corpus_sha256"}
    data["corpus_sha256"] = sha256_text(canonical_json(body))
    file.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(BadInput) as caught:
        load_corpus(file)
    assert str(caught.value) == f"corpus file {file}: malformed corpus ({where})"


def test_a_message_role_that_is_no_string_is_refused_in_one_line(tmp_path: Path) -> None:
    file = tmp_path / "corpus.json"
    write_corpus(synthetic_corpus(), file)
    data = json.loads(file.read_text(encoding="utf-8"))
    data["segments"][0]["turns"][0]["messages"][0]["role"] = ["user"]
    body = {key: value for key, value in data.items() if key != "corpus_sha256"}
    data["corpus_sha256"] = sha256_text(canonical_json(body))
    file.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(BadInput, match=r"message 0 has role \['user'\]"):
        load_corpus(file)
