"""The compiled validator's *valid* is taken only where :mod:`jsonschema` says valid too.

Tool-defined: :mod:`mcp_assay.spec.fastschema` answers first and :mod:`jsonschema` judges whatever it
refuses. These tests compare the two on every message of every recording in tests/data (the same
valid/invalid, and the same issues and paths in the validation a report shows) and on the places
where the two validators read JSON Schema differently.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_assay.recording.records import read_recording
from mcp_assay.spec import SpecSet
from mcp_assay.spec.fastschema import STRICT_INTEGER, strict_integers
from mcp_assay.spec.validator import MessageValidator, Validation
from mcp_assay.vocabulary.verdicts import Side
from mcp_assay.wire.jsonrpc import Message, parse_message
from mcp_assay.wire.traffic import ExchangeLog

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
}
RECORDINGS = sorted((Path(__file__).parents[1] / "data" / "recordings").glob("*.jsonl"))


class Pairs:
    """Every (definition, instance) a validator is asked about, with the compiled validator's answer."""

    def __init__(self, validator: MessageValidator) -> None:
        self.asked: list[tuple[str, Any, bool]] = []
        fast = validator._fast
        original = fast.valid

        def valid(definition: str, instance: Any) -> bool:
            answer = original(definition, instance)
            self.asked.append((definition, instance, answer))
            return answer

        fast.valid = valid  # type: ignore[method-assign]


def reference(validator: MessageValidator) -> MessageValidator:
    """The same validator with the compiled one never asked: :mod:`jsonschema` judges everything."""
    copy = MessageValidator(validator.revision, validator.document)
    copy._fast.valid = lambda definition, instance: False  # type: ignore[method-assign]
    return copy


def recorded(spec: SpecSet) -> Iterator[tuple[Message, Message | None, ExchangeLog]]:
    for path in RECORDINGS:
        log = read_recording(path).log
        for exchange in log:
            for message in exchange.messages:
                yield message, log.request_of(message), log


def test_every_recorded_message_validates_as_jsonschema_validates_it(spec: SpecSet) -> None:
    compared = refused = 0
    for revision in spec.window:
        fast = MessageValidator(revision.name, revision.validator.document)
        pairs = Pairs(fast)
        slow = reference(revision.validator)
        for message, request, _ in recorded(spec):
            expected: Validation = slow.validate(message, request)
            assert fast.validate(message, request) == expected, message.describe()
            compared += 1
        for definition, instance, answer in pairs.asked:
            issues = slow._validate_def(definition, instance, "")
            assert answer == (not issues), (definition, json.dumps(instance)[:200])
            refused += bool(issues)
        assert sum(answer for _, _, answer in pairs.asked) > 100  # the compiled validator does answer
    assert compared > 800 and refused > 0  # both revisions, valid and invalid messages alike


def validates(validator: MessageValidator, definition: str, instance: Any) -> tuple[bool, bool]:
    """(compiled validator's yes, jsonschema's yes) for one instance."""
    return validator._fast.valid(definition, instance), not validator._validate_def(definition, instance, "")


@pytest.mark.parametrize(
    ("ident", "valid"),
    [(1, True), ("a", True), (1.0, False), (2.0**53, False), (True, False), (10**30, True), (None, False)],
)
def test_request_ids_are_integers_only_when_they_are_not_floats(spec: SpecSet, ident: Any, valid: bool) -> None:
    """Spec-mandated (JSON-RPC ids are strings or integers); ``1.0`` is no integer to mcp-assay."""
    validator = spec.newest.validator
    body = {"jsonrpc": "2.0", "id": ident, "method": "tools/list", "params": {"_meta": META}}
    fast, slow = validates(validator, "ListToolsRequest", body)
    assert slow is valid
    assert fast is (valid and not isinstance(ident, float))
    message = parse_message(json.dumps(body).encode(), sender=Side.CLIENT, time=0.0)
    assert validator.validate(message).ok is valid


@pytest.mark.parametrize(
    ("uri", "valid"), [("file:///a.txt", True), ("https://x.test/a?b=c", True), ("not a uri", False), ("", False)]
)
def test_formats_are_checked_by_the_reference_format_checker(spec: SpecSet, uri: str, valid: bool) -> None:
    validator = spec.newest.validator
    resource = {"uri": uri, "name": "a"}
    assert validates(validator, "Resource", resource) == (valid, valid)


@pytest.mark.parametrize(("blob", "valid"), [("aGVsbG8=", True), ("not base64!", False)])
def test_base64_blobs_are_checked_as_the_reference_checks_them(spec: SpecSet, blob: str, valid: bool) -> None:
    validator = spec.newest.validator
    contents = {"uri": "file:///a", "blob": blob}
    assert validates(validator, "BlobResourceContents", contents) == (valid, valid)


def test_values_that_are_not_clean_are_left_to_the_reference(spec: SpecSet) -> None:
    """``inf`` (read from ``1e400``) never reaches the compiled validator; a lone surrogate is a no from it."""
    revision = spec.newest
    validator = MessageValidator(revision.name, revision.validator.document)
    slow = reference(validator)
    pairs = Pairs(validator)
    params = {"progressToken": "t", "progress": 1}
    for value in (math.inf, -math.inf, 1e308):
        body = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {**params, "progress": value}}
        assert validator.validate_def("ProgressNotification", body) == slow.validate_def("ProgressNotification", body)
    assert [instance["params"]["progress"] for _, instance, _ in pairs.asked] == [1e308]
    for body in (
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {**params, "progressToken": "\ud800"}},
        {"jsonrpc": "2.0", "id": "\udc00", "method": "tools/list", "params": {"_meta": META}},
    ):
        definition = "ListToolsRequest" if "id" in body else "ProgressNotification"
        assert validator.validate_def(definition, body) == slow.validate_def(definition, body)
    assert len(pairs.asked) == 1


def test_schemas_that_allow_integers_but_not_numbers_refuse_floats() -> None:
    schema = {
        "$defs": {
            "A": {"type": "integer"},
            "B": {"type": ["integer", "string"]},
            "C": {"type": ["integer", "number"]},
            "D": {"type": "number"},
        }
    }
    marked = strict_integers(schema)["$defs"]
    assert [STRICT_INTEGER in marked[name] for name in "ABCD"] == [True, True, False, False]
    assert STRICT_INTEGER not in schema["$defs"]["A"]  # a copy: the schema itself is never changed
