"""Resources (RSRC-): each rule passes good traffic, fails bad traffic, and says when it cannot tell."""

from __future__ import annotations

from typing import Any

from mcp_assay.spec import SpecSet
from mcp_assay.vocabulary.verdicts import Outcome, Side
from tests.factories import judge, legacy_call, legacy_session, log_of, request_body, result_body, stdio
from tests.spec.rules._capability_builders import CACHE, answered, call, caps, failing, listing, resources_list

STATIC = {"uri": "info://static", "name": "static_info", "mimeType": "text/plain"}
MISSING = "file:///mcp-conformance/does-not-exist-4711"


def outcome(spec: SpecSet, check: str, *items: Any) -> Outcome:
    return judge(log_of(*items), spec, check).outcome


def read(uri: Any, contents: list[Any], **kw: Any) -> Any:
    return answered("resources/read", {"uri": uri}, {"contents": contents, **CACHE}, **kw)


def test_resources_served_with_the_capability_pass_rsrc_01(spec: SpecSet) -> None:
    """Spec-mandated (RSRC-01)."""
    assert (
        outcome(spec, "servers_serving_resources_declare_resources", caps(), resources_list([STATIC])) is Outcome.PASSED
    )


def test_resources_served_without_the_capability_fail_rsrc_01(spec: SpecSet) -> None:
    log = (caps({"tools": {}}), resources_list([STATIC]))
    assert outcome(spec, "servers_serving_resources_declare_resources", *log) is Outcome.FAILED


def test_rsrc_01_is_not_verified_without_capabilities(spec: SpecSet) -> None:
    assert outcome(spec, "servers_serving_resources_declare_resources", resources_list([])) is Outcome.NOT_VERIFIED


def test_declared_resources_are_listed_passes_and_fails_rsrc_02(spec: SpecSet) -> None:
    """Spec-mandated (RSRC-02)."""
    assert outcome(spec, "declared_resources_are_listed", caps(), resources_list([])) is Outcome.PASSED
    broken = failing("resources/list", {}, -32601, status=404)
    assert outcome(spec, "declared_resources_are_listed", caps(), broken) is Outcome.FAILED
    assert outcome(spec, "declared_resources_are_listed", caps({"tools": {}}), broken) is Outcome.NOT_APPLICABLE


def test_resource_listings_are_compared_for_rsrc_03(spec: SpecSet) -> None:
    """Spec-mandated (RSRC-03)."""
    other = {"uri": "info://other", "name": "other"}
    assert outcome(spec, "resource_lists_do_not_depend_on_the_connection", resources_list([STATIC]),
                   resources_list([STATIC], ident=2)) is Outcome.PASSED  # fmt: skip
    assert outcome(spec, "resource_lists_do_not_depend_on_the_connection", resources_list([STATIC]),
                   resources_list([other], ident=2)) is Outcome.FAILED  # fmt: skip
    assert outcome(spec, "resource_lists_do_not_depend_on_the_connection", resources_list([STATIC])) is (
        Outcome.NOT_VERIFIED
    )


def test_resource_list_shapes_are_judged_by_rsrc_04(spec: SpecSet) -> None:
    """Spec-mandated (RSRC-04): uri and name required, size an integer."""
    assert outcome(spec, "resource_lists_match_the_schema", resources_list([STATIC])) is Outcome.PASSED
    verdict = judge(log_of(resources_list([{"uri": "info://x", "size": 1.5}])), spec, "resource_lists_match_the_schema")
    assert verdict.outcome is Outcome.FAILED
    assert "'name' is a required property" in verdict.reason
    assert outcome(spec, "resource_lists_match_the_schema", caps()) is Outcome.NOT_VERIFIED


def test_read_results_are_judged_by_rsrc_05(spec: SpecSet) -> None:
    """Spec-mandated (RSRC-05): each item is {uri, text} or {uri, blob}."""
    good = read("info://static", [{"uri": "info://static", "text": "x"}, {"uri": "info://static", "blob": "AA=="}])
    assert outcome(spec, "resource_reads_match_the_schema", good) is Outcome.PASSED
    verdict = judge(log_of(read("info://static", [{"uri": "info://static"}])), spec, "resource_reads_match_the_schema")
    assert verdict.outcome is Outcome.FAILED
    assert "neither text nor blob" in verdict.reason
    assert outcome(spec, "resource_reads_match_the_schema", resources_list([])) is Outcome.NOT_VERIFIED


def test_base64_is_decoded_for_rsrc_06(spec: SpecSet) -> None:
    """Spec-mandated (RSRC-06): blobs and image/audio data are decoded, not pattern-matched."""
    assert outcome(spec, "binary_data_is_valid_base64", read("a://b", [{"uri": "a://b", "blob": "aGk="}])) is (
        Outcome.PASSED
    )
    verdict = judge(log_of(read("a://b", [{"uri": "a://b", "blob": "aGk"}])), spec, "binary_data_is_valid_base64")
    assert verdict.outcome is Outcome.FAILED
    assert "result.contents[0].blob" in verdict.reason
    image = call("t", {}, {"content": [{"type": "image", "data": "%%%", "mimeType": "image/png"}]})
    assert outcome(spec, "binary_data_is_valid_base64", image) is Outcome.FAILED
    assert outcome(spec, "binary_data_is_valid_base64", read("a://b", [{"uri": "a://b", "text": "x"}])) is (
        Outcome.NOT_VERIFIED
    )


def test_rsrc_06_reads_protocol_content_never_a_schema_inside_it(spec: SpecSet) -> None:
    """Spec-mandated (RSRC-06) regression, from the filesystem server's evidence (issue 21): a tool's outputSchema
    describing an embedded resource's ``blob`` property, and structuredContent naming one, are not resource
    contents; an embedded resource and an input request's sampling message are."""
    schema = {"type": "object", "properties": {"content": {"type": "array", "items": {"anyOf": [
        {"type": "object"}, {"type": "object", "properties": {"resource": {"type": "object", "properties": {
            "uri": {"type": "string"}, "blob": {"type": "string"}}}}}]}}}}  # fmt: skip
    tools = answered("tools/list", {}, {"tools": [{"name": "read_media", "inputSchema": {"type": "object"},
                                                  "outputSchema": schema}], **CACHE})  # fmt: skip
    assert outcome(spec, "binary_data_is_valid_base64", tools) is Outcome.NOT_VERIFIED
    structured = call("t", {}, {"content": [], "structuredContent": {"uri": "a://b", "blob": "not base64!"}})
    assert outcome(spec, "binary_data_is_valid_base64", structured) is Outcome.NOT_VERIFIED
    embedded = call("t", {}, {"content": [{"type": "resource", "resource": {"uri": "a://b", "blob": "%%%"}}]})
    verdict = judge(log_of(embedded), spec, "binary_data_is_valid_base64")
    assert verdict.outcome is Outcome.FAILED and "result.content[0].resource.blob" in verdict.reason
    image = {"type": "image", "data": "%%%", "mimeType": "x"}
    sampling = {"method": "sampling/createMessage", "params": {"messages": [{"role": "user", "content": image}]}}
    asked = call("t", {}, {"resultType": "input_required", "inputRequests": {"s1": sampling}})
    assert (
        "inputRequests.s1.params.messages[0].content.data"
        in judge(log_of(asked), spec, "binary_data_is_valid_base64").reason
    )


def test_resource_uris_are_judged_by_rsrc_07(spec: SpecSet) -> None:
    """Spec-mandated (RSRC-07): custom schemes are fine; relative paths and spaces are not URIs."""
    assert outcome(spec, "resource_uris_are_valid_uris", resources_list([STATIC])) is Outcome.PASSED
    bad = resources_list([{"uri": "docs/read me.txt", "name": "x"}])
    assert outcome(spec, "resource_uris_are_valid_uris", bad) is Outcome.FAILED
    link = call("t", {}, {"content": [{"type": "resource_link", "uri": "not a uri", "name": "x"}]})
    assert outcome(spec, "resource_uris_are_valid_uris", link) is Outcome.FAILED
    updated = stdio(Side.SERVER, {"jsonrpc": "2.0", "method": "notifications/resources/updated",
                                  "params": {"uri": "greeting://bob"}})  # fmt: skip
    assert outcome(spec, "resource_uris_are_valid_uris", updated) is Outcome.PASSED
    assert outcome(spec, "resource_uris_are_valid_uris", caps()) is Outcome.NOT_VERIFIED


def test_missing_resources_get_minus_32602_in_2026(spec: SpecSet) -> None:
    """Spec-mandated (RSRC-08): 2026 uses -32602 for a resource that does not exist."""
    good = failing("resources/read", {"uri": MISSING}, -32602, "Resource not found", data={"uri": MISSING})
    assert outcome(spec, "missing_resources_get_invalid_params", good) is Outcome.PASSED
    retired = failing("resources/read", {"uri": MISSING}, -32002, "Resource not found")
    assert outcome(spec, "missing_resources_get_invalid_params", retired) is Outcome.FAILED
    internal = failing("resources/read", {"uri": "app://gone"}, -32603, "Unknown resource: app://gone")
    assert outcome(spec, "missing_resources_get_invalid_params", internal) is Outcome.FAILED
    assert outcome(spec, "missing_resources_get_invalid_params", read("a://b", [{"uri": "a://b", "text": ""}])) is (
        Outcome.NOT_VERIFIED
    )


def test_missing_resources_get_minus_32002_in_2025(spec: SpecSet) -> None:
    """Spec-mandated (RSRC-08): 2025-11-25 recommends -32002."""
    init = legacy_session(capabilities={"resources": {}})
    good = legacy_call("resources/read", {"uri": MISSING}, {"jsonrpc": "2.0", "id": 1,
                  "error": {"code": -32002, "message": "Resource not found"}})  # fmt: skip
    assert outcome(spec, "missing_resources_get_resource_not_found", init, good) is Outcome.PASSED
    other = legacy_call("resources/read", {"uri": MISSING}, {"jsonrpc": "2.0", "id": 1,
                   "error": {"code": -32602, "message": "Unknown resource"}})  # fmt: skip
    assert outcome(spec, "missing_resources_get_resource_not_found", init, other) is Outcome.FAILED
    normal = legacy_call(
        "resources/read", {"uri": "info://static"}, {"contents": [{"uri": "info://static", "text": "x"}]}
    )
    assert outcome(spec, "missing_resources_get_resource_not_found", init, normal) is Outcome.NOT_VERIFIED
    modern = failing("resources/read", {"uri": MISSING}, -32602, "Resource not found")
    assert outcome(spec, "missing_resources_get_resource_not_found", modern) is Outcome.NOT_APPLICABLE


def test_empty_contents_for_a_missing_resource_fail_rsrc_09(spec: SpecSet) -> None:
    """Spec-mandated (RSRC-09)."""
    assert outcome(spec, "missing_resources_are_not_empty_contents", read(MISSING, [])) is Outcome.FAILED
    probe = read("app://x", [], probe={"name": "missing-resource"})
    assert outcome(spec, "missing_resources_are_not_empty_contents", probe) is Outcome.FAILED
    good = failing("resources/read", {"uri": MISSING}, -32602, "Resource not found")
    assert outcome(spec, "missing_resources_are_not_empty_contents", good) is Outcome.PASSED
    assert outcome(spec, "missing_resources_are_not_empty_contents", read("a://b", [])) is Outcome.NOT_VERIFIED


def test_internal_read_failures_are_judged_by_rsrc_10(spec: SpecSet) -> None:
    """Spec-mandated (RSRC-10)."""
    assert outcome(spec, "failed_reads_report_internal_errors",
                   failing("resources/read", {"uri": "db://x"}, -32603, "database down")) is Outcome.PASSED  # fmt: skip
    assert outcome(spec, "failed_reads_report_internal_errors",
                   failing("resources/read", {"uri": "db://x"}, 500, "database down")) is Outcome.FAILED  # fmt: skip
    assert outcome(spec, "failed_reads_report_internal_errors",
                   failing("resources/read", {"uri": "db://x"}, -32602, "bad uri")) is Outcome.NOT_VERIFIED  # fmt: skip


def test_template_lists_are_judged_by_rsrc_11(spec: SpecSet) -> None:
    """Spec-mandated (RSRC-11): uriTemplate must be an RFC 6570 template."""
    good = listing("resources/templates/list", [{"uriTemplate": "greeting://{name}", "name": "greeting"}],
                   member="resourceTemplates")  # fmt: skip
    assert outcome(spec, "resource_templates_match_the_schema", good) is Outcome.PASSED
    bad = listing("resources/templates/list", [{"uriTemplate": "greeting://{name", "name": "g"}],
                  member="resourceTemplates")  # fmt: skip
    assert outcome(spec, "resource_templates_match_the_schema", bad) is Outcome.FAILED
    assert outcome(spec, "resource_templates_match_the_schema", caps()) is Outcome.NOT_VERIFIED


def test_malformed_uris_must_be_refused_rsrc_12(spec: SpecSet) -> None:
    """Spec-mandated (RSRC-12)."""
    refused = failing("resources/read", {"uri": "not a uri"}, -32602, probe={"name": "malformed-uri", "invalid": True})
    assert outcome(spec, "malformed_uris_are_refused", refused) is Outcome.PASSED
    served = read("not a uri", [{"uri": "not a uri", "text": "?"}])
    assert outcome(spec, "malformed_uris_are_refused", served) is Outcome.FAILED
    assert outcome(spec, "malformed_uris_are_refused", read("a://b", [{"uri": "a://b", "text": ""}])) is (
        Outcome.NOT_VERIFIED
    )


def test_path_traversal_must_fail_rsrc_13(spec: SpecSet) -> None:
    """Spec-mandated (RSRC-13): dot-dot segments (also %2e%2e) that leave the tree are refused."""
    escape = "file:///mcp-conformance/%2e%2e/%2e%2e/%2e%2e/etc/passwd"
    refused = failing("resources/read", {"uri": escape}, -32602)
    assert outcome(spec, "file_uris_cannot_escape_the_served_tree", refused) is Outcome.PASSED
    served = read(escape, [{"uri": escape, "text": "root:x:0:0"}])
    assert outcome(spec, "file_uris_cannot_escape_the_served_tree", served) is Outcome.FAILED
    inside = read("file:///srv/a/../b.txt", [{"uri": "file:///srv/b.txt", "text": "b"}])
    assert outcome(spec, "file_uris_cannot_escape_the_served_tree", inside) is Outcome.NOT_VERIFIED


def test_other_methods_are_not_reads(spec: SpecSet) -> None:
    """Tool-defined: a tools/call answer never triggers the read rules."""
    result = result_body({"resultType": "complete", "content": []}, 1)
    exchange = stdio(Side.CLIENT, request_body("tools/call", 1, {"name": "read", "arguments": {"uri": MISSING}}))
    answer = stdio(Side.SERVER, result)
    assert outcome(spec, "missing_resources_get_invalid_params", exchange, answer) is Outcome.NOT_VERIFIED
