"""The wire model keeps the HTTP authorization layer's own documents and answers out of the JSON-RPC messages."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mcp_assay.recording.redaction import Redactor
from mcp_assay.spec import SpecSet
from mcp_assay.spec.checks import REGISTRY, Every, Finding, log_check, not_applicable
from mcp_assay.spec.context import Context
from mcp_assay.vocabulary.verdicts import Level, Outcome
from mcp_assay.wire.jsonrpc import Kind
from mcp_assay.wire.model import Headers, HttpExchange, HttpRequest
from tests.factories import error_body, http, judge, log_of, modern_call, request_body

SCRATCH = Every("a scratch check of this test reads everything")

PRM = {"resource": "http://127.0.0.1:8000/mcp", "authorization_servers": ["https://as.example"]}


def test_a_well_known_metadata_document_carries_no_jsonrpc_message() -> None:
    """Tool-defined: a Protected Resource Metadata fetch is HTTP traffic, not an MCP message."""
    fetch = http(None, PRM, method="GET", url="http://127.0.0.1:8000/.well-known/oauth-protected-resource/mcp")
    assert fetch.messages == ()
    assert fetch.response is not None and fetch.response.status == 200


@pytest.mark.parametrize(
    ("method", "content_type", "body", "kinds"),
    [
        ("POST", "application/json", b'{"redirect_uris":["http://c/cb"],"client_name":"c"}', []),
        ("post", "application/json; charset=utf-8", b' {"redirect_uris":["http://c/cb"]}', []),
        ("POST", "application/x-www-form-urlencoded", b"grant_type=authorization_code&code=x", []),
        (
            "POST",
            "application/json",
            b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"redirect_uris":[]}}',
            ["request"],
        ),
        ("POST", "application/json", b'{"redirect_uris":"http://c/cb"}', ["invalid"]),
        ("POST", "application/x-www-form-urlencoded", b"code=x", ["unparseable"]),
        ("POST", "text/plain", b'{"jsonrpc":"2.0","id":1,"method":"m"}', ["request"]),
        ("PUT", "application/json", b'{"redirect_uris":["http://c/cb"]}', ["invalid"]),
    ],
)
def test_an_oauth_step_posted_carries_no_jsonrpc_message(
    method: str, content_type: str, body: bytes, kinds: list[str]
) -> None:
    """Tool-defined: a dynamic client registration (a JSON object with ``redirect_uris`` and no ``jsonrpc``) and a
    token request (a form with a ``grant_type``) are steps of an OAuth flow, not MCP messages; any other POST
    body is read as a message, whatever it mentions."""
    request = HttpRequest(
        method=method, url="http://127.0.0.1:8000/register", headers=Headers({"content-type": content_type}),
        body=body, time=1.0,
    )  # fmt: skip
    exchange = HttpExchange.build(id="o", request=request)
    assert [message.kind.value for message in exchange.messages] == kinds


def test_an_oauth_error_body_on_a_401_is_not_a_jsonrpc_message() -> None:
    """Tool-defined: {"error": "invalid_token"} from the authorization layer is not a malformed JSON-RPC error."""
    exchange = http(
        request_body("tools/list"),
        {"error": "invalid_token", "error_description": "Authentication required"},
        status=401,
        response_headers={"content-type": "application/json", "www-authenticate": "Bearer"},
    )
    assert [message.kind for message in exchange.messages] == [Kind.REQUEST]


def test_a_jsonrpc_error_body_on_a_401_or_a_challenging_403_is_still_judged() -> None:
    """Tool-defined: a server that answers in JSON-RPC keeps its answer judged."""
    for status in (401, 403):
        exchange = http(
            request_body("tools/list"),
            error_body(-32001, "unauthorized", ident=1),
            status=status,
            response_headers={"content-type": "application/json", "www-authenticate": "Bearer"},
        )
        assert [message.kind for message in exchange.messages] == [Kind.REQUEST, Kind.ERROR]


def test_a_403_without_a_challenge_keeps_its_body_as_before() -> None:
    """Tool-defined: an Origin refusal's body is judged by the JSON-RPC rules as it always was."""
    exchange = http(request_body("tools/list"), {"detail": "forbidden"}, status=403)
    assert [message.kind for message in exchange.messages] == [Kind.REQUEST, Kind.INVALID]


def test_authorization_traffic_does_not_fail_the_jsonrpc_rules(spec: SpecSet) -> None:
    """Tool-defined: a PRM fetch and an OAuth-style 401 leave RPC-01 passing."""
    log = log_of(
        modern_call("tools/list", {}, {"tools": [], "ttlMs": 0, "cacheScope": "private"}),
        http(None, PRM, method="GET", url="http://127.0.0.1:8000/.well-known/oauth-protected-resource/mcp"),
        http(request_body("tools/list", 2), {"error": "invalid_token"}, status=401,
             response_headers={"content-type": "application/json", "www-authenticate": "Bearer"}),
    )  # fmt: skip
    assert judge(log, spec, "messages_are_jsonrpc_2_0_objects").outcome is Outcome.PASSED


@pytest.fixture()
def scratch_checks() -> Iterator[None]:
    """Register throwaway checks for one test and remove them afterwards."""
    before = set(REGISTRY)
    yield
    for name in set(REGISTRY) - before:
        del REGISTRY[name]


def test_a_not_applicable_finding_makes_the_verdict_not_applicable(spec: SpecSet, scratch_checks: None) -> None:
    """Tool-defined: a reason only the traffic shows can make a check not applicable, with that reason."""

    @log_check(requirements="AUTH-09", level=Level.MUST, subject="probes", follows=SCRATCH)
    def scratch_inapplicable(ctx: Context) -> Finding:
        return not_applicable("the server uses no authorization")

    log = log_of(modern_call("tools/list", {}, {"tools": [], "ttlMs": 0, "cacheScope": "private"}))
    verdict = judge(log, spec, "scratch_inapplicable")
    assert verdict.outcome is Outcome.NOT_APPLICABLE
    assert verdict.reason == "the server uses no authorization"


def test_a_bare_authentication_scheme_is_not_learned_as_a_secret() -> None:
    """Tool-defined: `Authorization: Bearer` without a token must not turn the word Bearer into [REDACTED]."""
    redactor = Redactor()
    redactor.learn_header("Authorization", "Bearer")
    redactor.learn_header("Authorization", "Bearer real-token-1234")
    redactor.learn_header("X-Api-Key", "opaquekey99")
    assert redactor.text("a Bearer challenge") == "a Bearer challenge"
    assert redactor.text("real-token-1234 and opaquekey99") == "[REDACTED] and [REDACTED]"
    assert redactor.header("Authorization", "Bearer") == "Bearer"
    assert redactor.header("Authorization", "Bearer real-token-1234") == "Bearer [REDACTED]"
    assert redactor.header("Authorization", "opaquekey99") == "[REDACTED]"
