"""The message validator: dispatch in code, strict integers, formats, and no network."""

from __future__ import annotations

import json

from mcp_assay.spec import SpecSet
from mcp_assay.vocabulary.verdicts import Side
from mcp_assay.wire.jsonrpc import parse_message

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def message(body: object, sender: Side = Side.SERVER) -> object:
    return parse_message(json.dumps(body).encode(), sender=sender, time=0.0)


def request(method: str, params: object | None = None, ident: int = 1) -> object:
    body: dict[str, object] = {"jsonrpc": "2.0", "id": ident, "method": method}
    if params is not None:
        body["params"] = params
    return message(body, Side.CLIENT)


def test_method_maps_are_read_from_the_schema(spec: SpecSet) -> None:
    modern, legacy = (r.validator for r in spec.window)
    assert modern.request_defs["server/discover"] == "DiscoverRequest"
    assert modern.result_defs["tools/list"] == "ListToolsResult"
    assert modern.input_required_methods == {"tools/call", "prompts/get", "resources/read"}
    assert modern.error_response_defs[-32022] == "UnsupportedProtocolVersionError"
    assert modern.error_object_defs[-32700] == "ParseError"
    assert "initialize" not in modern.request_defs
    assert legacy.result_defs["ping"] == "EmptyResult"
    assert legacy.result_defs["initialize"] == "InitializeResult"
    assert "sampling/createMessage" in legacy.server_requests
    assert modern.server_requests == frozenset()


def test_result_type_alone_is_not_a_valid_tools_list_result(spec: SpecSet) -> None:
    """Tool-defined: the schema's anyOf loophole is closed by dispatching on resultType."""
    validator = spec.newest.validator
    bare = validator.validate(
        message({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete"}}),
        request("tools/list", {"_meta": META}),
    )
    assert bare.definition == "ListToolsResult"
    assert not bare.ok
    assert any("'tools' is a required property" in issue.message for issue in bare.issues)
    call = validator.validate(
        message({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete"}}),
        request("tools/call", {"name": "x", "_meta": META}),
    )
    assert call.definition == "CallToolResult" and not call.ok


def test_input_required_results_are_judged_as_input_required(spec: SpecSet) -> None:
    validator = spec.newest.validator
    result = {"resultType": "input_required", "requestState": "abc"}
    ok = validator.validate(
        message({"jsonrpc": "2.0", "id": 1, "result": result}), request("tools/call", {"name": "x", "_meta": META})
    )
    assert ok.definition == "InputRequiredResult" and ok.ok
    empty = validator.validate(
        message({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "input_required"}}),
        request("tools/call", {"name": "x", "_meta": META}),
    )
    assert not empty.ok
    assert any(issue.erratum == "E1" for issue in empty.issues)


def test_fractional_integers_and_bad_formats_fail(spec: SpecSet) -> None:
    validator = spec.newest.validator
    tools = {"resultType": "complete", "tools": [], "ttlMs": 1500.0, "cacheScope": "private"}
    float_ttl = validator.validate(
        message({"jsonrpc": "2.0", "id": 1, "result": tools}), request("tools/list", {"_meta": META})
    )
    assert any(issue.path == "result.ttlMs" for issue in float_ttl.issues)
    blob = {
        "resultType": "complete",
        "ttlMs": 0,
        "cacheScope": "private",
        "contents": [{"uri": "not a uri", "blob": "%%%not-base64%%%"}],
    }
    read = validator.validate(
        message({"jsonrpc": "2.0", "id": 1, "result": blob}), request("resources/read", {"uri": "x:y", "_meta": META})
    )
    paths = {issue.path for issue in read.issues}
    assert "result.contents[0].uri" in paths and "result.contents[0].blob" in paths


def test_errors_are_validated_by_their_code(spec: SpecSet) -> None:
    validator = spec.newest.validator
    unsupported = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32022, "message": "Unsupported protocol version"}}
    outcome = validator.validate(message(unsupported))
    assert outcome.definition == "UnsupportedProtocolVersionError"
    assert not outcome.ok  # data.supported and data.requested are required
    parse_error = {"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}}
    assert validator.validate(message(parse_error)).ok


def test_requests_in_the_wrong_direction_or_revision_are_noted(spec: SpecSet) -> None:
    modern, legacy = (r.validator for r in spec.window)
    sampling = {
        "jsonrpc": "2.0",
        "id": 9,
        "method": "sampling/createMessage",
        "params": {"messages": [], "maxTokens": 5},
    }
    assert "not defined" in modern.validate(message(sampling)).note
    assert legacy.validate(message(sampling)).note == ""
    client_sampling = parse_message(json.dumps(sampling).encode(), sender=Side.CLIENT, time=0.0)
    assert "not sent by the client" in legacy.validate(client_sampling).note


def test_validators_are_compiled_once_per_definition(spec: SpecSet) -> None:
    validator = spec.newest.validator
    assert validator._compiled("ListToolsResult") is validator._compiled("ListToolsResult")


def test_a_repeated_body_is_validated_once_and_judged_the_same(spec: SpecSet) -> None:
    """Tool-defined: the validation memo gives every message the issues validating it afresh gives,
    whatever its id (differential: each body of the revision's examples, twice, with other ids)."""
    from mcp_assay.vocabulary.verdicts import Side
    from mcp_assay.wire.jsonrpc import parse_message

    revision = spec.require("2026-07-28")
    validator = revision.validator
    bodies = [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
        {"jsonrpc": "2.0", "id": "a", "method": "tools/list", "params": {"cursor": 5}},
        {"jsonrpc": "2.0", "id": 1.5, "method": "tools/list", "params": {}},
        {"jsonrpc": "2.0", "id": None, "method": "ping"},
    ]
    for body in bodies:
        for ident in (body["id"], 7, "x", 2.5, True):
            again = {**body, "id": ident}
            message = parse_message(json.dumps(again).encode(), sender=Side.CLIENT, time=0.0)
            remembered = validator.validate(message)
            fresh = validator._validate_def(remembered.definition or "JSONRPCRequest", message.payload, "")
            assert tuple(issue.render() for issue in remembered.issues) == tuple(issue.render() for issue in fresh)
