"""The evidence, checkpoint and request files as typed documents: one reader that names the
JSON path of a bad field, one writer, and files written before today still read."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from msgspec.structs import asdict

from tests.support.evidence import EVIDENCE_FIXTURES
from vibey_gh.errors import EvidenceError, MalformedJson
from vibey_gh.interfaces import json_fields
from vibey_gh.interfaces.schema import as_json, checked_at
from vibey_gh.slots.evidence.checkpoints import (
    PROGRESS_KIND,
    PROGRESS_SCHEMA,
    ProgressDocument,
    load_progress,
    read_progress,
    save_progress,
)
from vibey_gh.slots.evidence.document import Decision, EvidenceDocument
from vibey_gh.slots.evidence.requests import (
    RequestDocument,
    pending_requests,
    read_request,
    request_path,
    write_request,
)
from vibey_gh.slots.evidence.store import (
    evidence_from_json,
    integrity_digest,
    load_evidence,
    seal_evidence,
    write_evidence,
)
from vibey_gh.state import StateLayout

FIXTURES = EVIDENCE_FIXTURES
# recorded by an earlier version: no `confidence` and no `production_absent`
RECORDED = FIXTURES / "slots-a6e718b9b4a7bd46.json"


def recorded_json() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(RECORDED.read_text(encoding="utf-8"))
    return data


def _set(data: Any, path: tuple[str | int, ...], value: Any) -> None:
    for part in path[:-1]:
        data = data[part]
    data[path[-1]] = value


def _delete(data: Any, path: tuple[str | int, ...]) -> None:
    for part in path[:-1]:
        data = data[part]
    del data[path[-1]]


MISSING = object()

BAD_EVIDENCE_FIELDS = [
    (("steps", 0, "turns", 1, "result", "finish_reason"), 3, "expected a string, got 3"),
    (("steps", 0, "turns", 0, "worker"), True, "expected a whole number, got True"),
    (("steps", 1, "slots"), "two", "expected a whole number, got 'two'"),
    (("steps", 0, "started_at"), None, "expected a number, got None"),
    (("steps", 0, "timeline", 2, 1), "x", "expected a number, got 'x'"),
    (("steps", 0, "timeline", 0), 5, "expected a list, got 5"),
    (("steps", 0, "gpu_budget_bytes"), [1, "x"], None),
    (("steps", 1, "production", "polls"), 1.5, "expected a whole number, got 1.5"),
    (("steps", 0, "turns", 0, "result", "tool_calls"), [{"name": 7}], None),
    (("steps", 0, "turns", 0), "a turn", "expected an object, got 'a turn'"),
    (("steps", 0, "log_events"), {}, "expected a list, got {}"),
    (("steps", 0, "index"), MISSING, "missing"),
    (("steps",), MISSING, "missing"),
    (("steps",), {"0": {}}, "expected a list, got {'0': {}}"),
    (("created_at",), "yesterday", "expected a number, got 'yesterday'"),
    (("fingerprint", "id"), 16, "expected a string, got 16"),
    (("fingerprint", "id"), MISSING, "missing"),
    (("decision", "ideal"), "two", "expected a whole number, got 'two'"),
    (("verdicts", 1), 3, "expected an object, got 3"),
    (("notes",), ["fine", 5], None),
    (("complete",), "yes", "expected true or false, got 'yes'"),
    (("corpus",), [], "expected an object, got []"),
    (("runs_dir",), 7, "expected a string, got 7"),
    # the nested sections, typed
    (("device", "sources", "os_name"), 5, "expected a string, got 5"),
    (("device", "memory_limit_bytes"), "1G", "expected a whole number, got '1G'"),
    (("corpus", "window"), "big", "expected a whole number, got 'big'"),
    (("corpus", "strata"), {}, "expected a list, got {}"),
    (("method", "slots"), {"a": 1}, "expected a list, got {'a': 1}"),
    (("method", "temperature"), "cold", "expected a number, got 'cold'"),
    (("bounds", "patience"), 2.5, "expected a whole number, got 2.5"),
    (("runner", "kind"), 3, "expected a string, got 3"),
    (("integrity", "digest"), 5, "expected a string, got 5"),
    (("verdicts", 0, "label"), ["x"], "expected a string, got ['x']"),
]


def _where(path: tuple[str | int, ...], value: Any) -> str:
    """The JSON path the reader must name (lists of bad items: the bad item's index)."""
    if path[-1] == "gpu_budget_bytes":
        path = (*path, 1)
    elif path[-1] == "tool_calls":
        path = (*path, 0, "name")
    elif path[-1] == "notes":
        path = (*path, 1)
    text = "evidence"
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text


@pytest.mark.parametrize(("path", "value", "problem"), BAD_EVIDENCE_FIELDS)
def test_the_evidence_reader_names_the_json_path_of_a_bad_field(
    path: tuple[str | int, ...], value: Any, problem: str | None
) -> None:
    data = recorded_json()
    if value is MISSING:
        _delete(data, path)
    else:
        _set(data, path, value)
    with pytest.raises(MalformedJson) as caught:
        evidence_from_json(data, None)
    message = str(caught.value)
    assert message.startswith(f"evidence is malformed: {_where(path, value)}: "), message
    if problem is not None:
        assert message.endswith(f": {problem}"), message
    assert "\n" not in message
    # one error type: every reader of state files catches it as an evidence error
    assert isinstance(caught.value, EvidenceError)


def test_a_bad_field_in_a_file_names_the_file_and_the_path(tmp_path: Path) -> None:
    data = recorded_json()
    data["steps"][2]["turns"][12]["result"]["finish_reason"] = 3
    path = tmp_path / "slots-a6e718b9b4a7bd46.json"
    path.write_text(json.dumps(seal_evidence(data)), encoding="utf-8")
    with pytest.raises(
        MalformedJson,
        match=r"slots-a6e718b9b4a7bd46\.json is malformed: "
        r"evidence\.steps\[2\]\.turns\[12\]\.result\.finish_reason: expected a string, got 3$",
    ) as caught:
        load_evidence(path)
    assert caught.value.path == ("evidence", "steps", 2, "turns", 12, "result", "finish_reason")
    assert caught.value.source == str(path) and caught.value.problem == "expected a string, got 3"


def test_an_old_file_without_the_newer_fields_still_reads_and_verifies() -> None:
    data = recorded_json()
    assert "confidence" not in data and "production_absent" not in data
    evidence = load_evidence(RECORDED)  # the digest recorded then still verifies
    document = evidence.document
    assert document.schema_version == 1
    assert document.confidence is None and document.production_absent is None
    assert document.fingerprint == data["fingerprint"]["id"] == RECORDED.stem[len("slots-") :]
    assert document.decision == Decision(**data["decision"])
    assert document.notes == tuple(data["notes"])
    assert [as_json(step) for step in document.steps][0]["index"] == 0
    assert len(document.steps) == len(data["steps"]) == len(document.verdicts)
    assert document.integrity is not None
    assert document.integrity["digest"] == integrity_digest(data)


def test_a_minimal_file_reads_with_the_defaults() -> None:
    data = recorded_json()
    minimal = {key: data[key] for key in ("schema_version", "kind", "fingerprint", "created_at")}
    document = EvidenceDocument.from_json({**minimal, "steps": []})
    assert document.decision is None and document.complete and not document.recorded
    assert document.steps == () and document.notes == () and dict(document.corpus) == {}


def test_evidence_round_trips_through_its_writer_and_reader(tmp_path: Path) -> None:
    document = load_evidence(RECORDED).document
    fresh = EvidenceDocument(**{**asdict(document), "confidence": 0.9, "integrity": None})
    path = tmp_path / f"{fresh.fingerprint}.json"
    written = write_evidence(path, fresh)
    assert json.loads(path.read_text(encoding="utf-8")) == written
    assert list(written) == [*fresh.to_json(), "integrity"]  # the order it was always written
    back = load_evidence(path).document  # the digest of what was written verifies
    assert back == EvidenceDocument(**{**asdict(fresh), "integrity": written["integrity"]})
    assert EvidenceDocument.from_json(json.loads(json.dumps(back.to_json()))) == back


def test_keys_this_version_does_not_name_are_kept() -> None:
    data = {**recorded_json(), "written_by_a_later_version": {"x": 1}}
    data["corpus"]["later"] = [1, "two"]
    data["runner"]["later"] = {"y": None}
    document = evidence_from_json(data, None).document
    assert document.extra == {"written_by_a_later_version": {"x": 1}}
    written = document.to_json()
    assert written["written_by_a_later_version"] == {"x": 1}
    # a section keeps the keys it does not name, and reads its own typed
    assert written["corpus"]["later"] == [1, "two"] and written["runner"]["later"] == {"y": None}
    assert document.corpus.get("window") == 4096 and document.runner.get("kind") == "embedded"
    for section in ("device", "corpus", "method", "bounds", "runner", "verdicts", "integrity"):
        assert written[section] == data[section], section


def test_a_checkpoint_round_trips_and_names_a_bad_field(tmp_path: Path) -> None:
    steps = load_evidence(RECORDED).steps[:2]
    key = {"fingerprint": "f" * 16, "corpus": "c" * 12, "method": "m" * 12}
    path = tmp_path / "progress.json"
    save_progress(path, key, list(steps))
    assert read_progress(path) == ProgressDocument(
        schema_version=PROGRESS_SCHEMA, kind=PROGRESS_KIND, key=key, steps=tuple(steps)
    )
    assert load_progress(path, key) == list(steps)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["steps"][1]["turns"][0]["segment_id"] = None
    path.write_text(json.dumps(data), encoding="utf-8")
    where = "progress.steps[1].turns[0].segment_id: expected a string, got None"
    with pytest.raises(MalformedJson) as caught:
        read_progress(path)
    assert str(caught.value) == where
    with pytest.raises(EvidenceError, match=r"is malformed \(progress\.steps\[1\]\.turns\[0\]"):
        load_progress(path, key)


def test_a_request_round_trips_and_names_a_bad_field(tmp_path: Path) -> None:
    layout = StateLayout(tmp_path)
    fields = {"window": 8192, "runner_kind": "embedded"}
    path = write_request(layout, "a" * 16, fields, "unmeasured", 12.5, {"runner": "embedded"})
    expected = RequestDocument.of("a" * 16, fields, "unmeasured", 12.5, {"runner": "embedded"})
    assert read_request(path) == expected
    assert pending_requests(layout) == [expected]
    data = json.loads(path.read_text(encoding="utf-8"))
    data["reason"] = 3
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(MalformedJson, match=r"^request\.reason: expected a string, got 3$"):
        read_request(path)
    assert pending_requests(layout) == []  # a damaged request is skipped, not fatal
    del data["fingerprint"]["id"]
    data["reason"] = "stale"
    request_path(layout, "a" * 16).write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(MalformedJson, match=r"^request\.fingerprint\.id: missing$"):
        read_request(path)


@pytest.mark.parametrize(
    ("read", "message"),
    [
        (lambda d: json_fields.integer(d, "n"), "n: expected a whole number, got '1'"),
        (lambda d: json_fields.number(d, "n"), "n: expected a number, got '1'"),
        (lambda d: checked_at(d, "n", list), "n: expected a list, got '1'"),
        (lambda d: checked_at(d, "n", dict), "n: expected an object, got '1'"),
        (lambda d: checked_at(d, "absent", str, json_fields.REQUIRED), "absent: missing"),
    ],
)
def test_the_field_reader_names_the_field(read: Callable[[Any], Any], message: str) -> None:
    with pytest.raises(MalformedJson) as caught, json_fields.within("outer", 2):
        read({"n": "1"})
    assert str(caught.value) == f"outer[2].{message}"
