"""Tool-supplied schemas are judged in their dialect, without network access and with bounded work."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import pytest

from mcp_assay.spec import SpecSet
from mcp_assay.spec.toolschema import MAX_DEPTH, MAX_SIZE, review_schema, validate_instance
from mcp_assay.vocabulary.verdicts import Outcome
from tests.factories import judge, log_of
from tests.spec.rules._capability_builders import ADD, call, caps, text, tools_list


def test_an_object_schema_in_the_default_dialect_is_valid() -> None:
    """Spec-mandated (TOOL-06): no $schema means JSON Schema 2020-12."""
    review = review_schema({"type": "object", "properties": {"a": {"type": "integer"}}})
    assert review.valid and review.blocked is None
    assert review.dialect.endswith("2020-12/schema")


def test_a_schema_breaking_its_metaschema_has_problems() -> None:
    """Spec-mandated (TOOL-06): the schema must be valid in its dialect."""
    review = review_schema({"type": "object", "properties": {"a": {"type": "integr"}}})
    assert not review.valid
    assert "properties.a.type" in review.problems[0]


def test_draft_07_tuple_items_are_valid_only_under_draft_07() -> None:
    """Spec-mandated (TOOL-06): the dialect named by $schema decides."""
    tuple_items = {"type": "object", "properties": {"p": {"type": "array", "items": [{"type": "string"}]}}}
    assert not review_schema(tuple_items).valid
    draft7 = {"$schema": "http://json-schema.org/draft-07/schema#", **tuple_items}
    assert review_schema(draft7).valid


def test_an_unknown_dialect_is_reported_without_a_warning() -> None:
    """Tool-defined: jsonschema warns on unknown $schema; mcp-assay says it cannot judge instead."""
    review = review_schema({"$schema": "https://example.com/my-dialect", "type": "object"})
    assert review.valid
    assert review.blocked is not None and "does not know" in review.blocked


def test_a_local_ref_to_nothing_is_a_problem() -> None:
    review = review_schema({"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}})
    assert not review.valid
    assert "points to nothing" in review.problems[0]


def test_a_local_ref_that_resolves_is_followed() -> None:
    schema = {"type": "object", "$defs": {"n": {"type": "integer"}}, "properties": {"a": {"$ref": "#/$defs/n"}}}
    assert review_schema(schema).valid
    assert validate_instance(schema, {"a": 1}).ok
    assert validate_instance(schema, {"a": "x"}).issues[0].path == "a"


def test_schemas_deeper_than_the_limit_are_not_judged() -> None:
    """Tool-defined: hostile schemas are bounded instead of exhausting the validator."""
    schema: dict[str, Any] = {"type": "object"}
    node = schema
    for _ in range(MAX_DEPTH + 1):
        node["properties"] = {"x": {"type": "object"}}
        node = node["properties"]["x"]
    review = review_schema(schema)
    assert review.blocked is not None and "deeper" in review.blocked


def test_a_schema_over_the_size_mcp_assay_judges_is_not_judged_counting_escaped_characters() -> None:
    """Tool-defined: the size is the schema's compact ASCII JSON, so a non-ASCII character counts as its escape
    (six characters, twelve past the Basic Multilingual Plane), whatever order its keys come in."""
    room = MAX_SIZE - len('{"description":"","type":"object"}')
    fits = {"type": "object", "description": "x" * room}
    assert review_schema(fits).blocked is None
    assert "over the" in (review_schema({**fits, "description": "x" * (room + 1)}).blocked or "")
    wide = {"description": "\u65e5" * (room // 6), "type": "object"}  # fits once escaped
    assert review_schema(wide).blocked is None
    wider = {"description": "\u65e5" * (room // 6 + 1), "type": "object"}  # 6 characters over once escaped
    assert f"is {MAX_SIZE - room % 6 + 6} characters long" in (review_schema(wider).blocked or "")
    astral = {"type": "object", "description": "\U0001f600" * (room // 12 + 1)}
    assert "over the" in (review_schema(astral).blocked or "")


def test_a_self_referencing_schema_does_not_crash_validation() -> None:
    review = validate_instance({"$ref": "#"}, {"a": 1})
    assert review.blocked is not None and "recursed" in review.blocked


def test_strict_validation_rejects_fractional_integers() -> None:
    """Tool-defined: strict=True applies the MCP messages' reading, where 1.0 is not an integer."""
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    assert validate_instance(schema, {"n": 1}, strict=True).ok
    issues = validate_instance(schema, {"n": 1.0}, "result.structuredContent", strict=True).issues
    assert issues and issues[0].path == "result.structuredContent.n"
    assert validate_instance(schema, {"n": "1"}).issues  # a string is never an integer


def test_lenient_validation_applies_the_dialect_as_written() -> None:
    """Spec-mandated (JSON Schema 2020-12): 1.0 is an integer and formats only annotate."""
    schema = {"type": "object", "properties": {"n": {"type": "integer"}, "u": {"type": "string", "format": "uri"}}}
    assert validate_instance(schema, {"n": 1.0, "u": "not a uri"}).ok
    assert len(validate_instance(schema, {"n": 1.0, "u": "not a uri"}, strict=True).issues) == 2


def test_an_invalid_schema_blocks_instance_validation() -> None:
    review = validate_instance({"type": "nope"}, {})
    assert review.blocked is not None and "itself is invalid" in review.blocked


class _Recorder(BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - the http.server hook name
        type(self).hits.append(self.path)
        body = b'{"type": "string"}'
        self.send_response(200)
        self.send_header("content-type", "application/schema+json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.fixture
def schema_server() -> Iterator[tuple[str, list[str]]]:
    hits: list[str] = []
    handler = type("Recorder", (_Recorder,), {"hits": hits})
    server = HTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/schema.json", hits
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_a_remote_ref_in_a_tool_schema_is_never_fetched(spec: SpecSet, schema_server: tuple[str, list[str]]) -> None:
    """Spec-mandated (TOOL-06, TOOL-10; Schema notes Q13): no automatic network dereferencing of $ref."""
    url, hits = schema_server
    remote = {"type": "object", "properties": {"x": {"$ref": url}}}
    tool = {**ADD, "inputSchema": remote, "outputSchema": remote}
    log = log_of(
        caps(),
        tools_list([tool]),
        call("add", {"x": "y"}, {"content": [text('{"x": 1}')], "structuredContent": {"x": 1}}),
    )
    input_verdict = judge(log, spec, "input_schemas_are_object_schemas")
    output_verdict = judge(log, spec, "structured_content_matches_the_output_schema")
    arguments_verdict = judge(log, spec, "invalid_tool_arguments_never_succeed")
    review = review_schema(remote)
    instance = validate_instance(remote, {"x": 1})
    assert hits == []
    assert input_verdict.outcome is Outcome.NOT_VERIFIED
    assert "will not fetch" in input_verdict.reason and url in input_verdict.reason
    assert output_verdict.outcome is Outcome.NOT_VERIFIED
    assert "will not fetch" in output_verdict.reason
    assert arguments_verdict.outcome is Outcome.NOT_VERIFIED  # nothing known to be invalid
    assert review.blocked is not None and url in review.blocked
    assert instance.blocked is not None and "will not fetch" in instance.blocked


def _recorded_pairs() -> Iterator[tuple[Any, Any]]:
    """Every tool schema of the recordings in ``tests/data`` with every value a call or a result gave it (and a
    few values that break it)."""
    from mcp_assay.recording.records import read_recording
    from tests.scale.growth import RECORDINGS

    for path in sorted(RECORDINGS.glob("*.jsonl")):
        log = read_recording(path).log
        tools: dict[str, dict[str, Any]] = {}
        for message in log.messages():
            result = message.result if isinstance(message.result, dict) else {}
            for tool in result.get("tools", []) if isinstance(result.get("tools"), list) else []:
                if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                    tools[tool["name"]] = tool
        for message in log.messages():
            params = message.params if isinstance(message.params, dict) else {}
            tool = tools.get(str(params.get("name"))) if message.method == "tools/call" else None
            if tool is not None and isinstance(tool.get("inputSchema"), dict):
                arguments = params.get("arguments", {})
                widened = {**arguments, "x": float("inf")} if isinstance(arguments, dict) else None
                for value in (arguments, {"unexpected": [1.5, None]}, [], widened):
                    yield tool["inputSchema"], value


def test_the_compiled_validator_and_the_memo_agree_with_jsonschema_on_every_recorded_call() -> None:
    """Tool-defined: a value the compiled validator passes, or one met before, gets jsonschema's own review."""
    from mcp_assay.spec import toolschema

    pairs = list(_recorded_pairs())
    assert len(pairs) > 50
    for schema, value in pairs * 2:  # the second round is answered from the memo
        text = toolschema._canonical(schema)
        assert text is not None
        assert validate_instance(schema, value, "arguments") == toolschema._validated(text, value, "arguments", False)


def test_a_value_met_before_is_not_validated_again(monkeypatch: pytest.MonkeyPatch) -> None:
    from mcp_assay.spec import toolschema

    calls: list[Any] = []
    real = toolschema._validated
    monkeypatch.setattr(toolschema, "_validated", lambda *args: calls.append(args) or real(*args))
    schema = {"type": "object", "properties": {"n": {"type": "integer", "pattern": "x"}}}  # no compiled validator
    for _ in range(3):
        assert validate_instance(schema, {"n": "a"}, "arguments").issues
    assert len(calls) == 1


def test_a_schema_listed_again_as_a_new_object_is_reviewed_once_and_told_apart_from_others(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A server lists the same tools again and again, each listing parsed into new objects: a schema of a value met
    before reuses its review, and a schema differing in one value, or in a float against an integer, gets its own."""
    from mcp_assay.spec import toolschema

    sized: list[Any] = []
    real = toolschema._sized

    def counted(schema: Any) -> tuple[str | None, str | None]:
        sized.append(schema)
        return real(schema)

    monkeypatch.setattr(toolschema, "_sized", counted)

    def listed(kind: str, limit: float = 3) -> dict[str, Any]:  # parsed anew each time, as each listing is
        return {"type": "object", "properties": {"a": {"type": kind, "maximum": limit}}}

    assert all(review_schema(listed("integer")).valid for _ in range(3))
    assert len(sized) == 1
    assert not review_schema(listed("integr")).valid
    assert review_schema(listed("integer", 3.0)).valid
    assert len(sized) == 3
