"""Authorization (AUTH-): each rule passes good traffic, fails bad traffic, and says when it cannot tell or
does not apply; plus the WWW-Authenticate parser and the helpers the rules and probes share."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from mcp_assay.recording.redaction import fingerprint
from mcp_assay.spec import SpecSet
from mcp_assay.spec.checks import REGISTRY
from mcp_assay.spec.engine import evaluate
from mcp_assay.spec.rules.auth.facts import (
    canonical_uri,
    is_loopback_host,
    jwt_claims,
    jwt_shaped,
    parse_challenges,
    presented,
    prm_candidates,
    prm_kind,
    unsigned_jwt,
)
from mcp_assay.vocabulary.verdicts import Outcome, Side
from mcp_assay.wire.model import Headers, HttpExchange
from tests.factories import (
    http,
    judge,
    legacy_headers,
    legacy_session,
    log_of,
    modern_call,
    modern_headers,
    request_body,
    result_body,
    stdio,
)

URL = "http://127.0.0.1:8000/mcp"
PRM_URL = "http://127.0.0.1:8000/.well-known/oauth-protected-resource/mcp"
ROOT_PRM = "http://127.0.0.1:8000/.well-known/oauth-protected-resource"
TOKEN = "opaque-token-3f9a1c77e2b4"
TOOLS = {"tools": [], "ttlMs": 0, "cacheScope": "private"}
CHALLENGE = f'Bearer resource_metadata="{PRM_URL}", scope="notes:read"'
PRM = {
    "resource": URL,
    "authorization_servers": ["https://as.example"],
    "scopes_supported": ["notes:read"],
    "bearer_methods_supported": ["header"],
}
NO_AUTH = "served tools/list without credentials"


# -- traffic builders ---------------------------------------------------------------------------------
def auth_headers(body: Any, authorization: str | None = f"Bearer {TOKEN}", **extra: str) -> dict[str, str]:
    headers = modern_headers(body)
    if authorization is not None:
        headers["authorization"] = authorization
    headers.update(extra)
    return headers


def served(
    method: str = "tools/list",
    *,
    authorization: str | None = f"Bearer {TOKEN}",
    probe: dict[str, Any] | None = None,
    url: str = URL,
    ident: Any = 1,
    extra: dict[str, str] | None = None,
) -> HttpExchange:
    params: dict[str, Any] = {}
    body = request_body(method, ident, params)
    result = TOOLS if method == "tools/list" else {}
    return modern_call(
        method, params, result, ident=ident, url=url, probe=probe,
        headers=auth_headers(body, authorization, **(extra or {})),
    )  # fmt: skip


def refused(
    method: str = "tools/list",
    *,
    authorization: str | None = None,
    status: int = 401,
    challenge: str | None = CHALLENGE,
    probe: dict[str, Any] | None = None,
    url: str = URL,
    ident: Any = 1,
    extra: dict[str, str] | None = None,
) -> HttpExchange:
    body = request_body(method, ident, {})
    response_headers = {"content-type": "application/json"}
    if challenge is not None:
        response_headers["www-authenticate"] = challenge
    return http(
        body, {"error": "invalid_token"}, status=status, url=url, probe=probe, response_headers=response_headers,
        headers=auth_headers(body, authorization, **(extra or {})),
    )  # fmt: skip


def document(
    body: Any = PRM, *, url: str = PRM_URL, status: int = 200, content_type: str = "application/json"
) -> HttpExchange:
    return http(
        None, body, method="GET", url=url, status=status, headers={"accept": "application/json"},
        response_headers={"content-type": content_type},
    )  # fmt: skip


def control() -> HttpExchange:
    return served(probe={"name": "auth-control", "invalid": False, "credential": "own"})


def tag(name: str, credential: str, variant: str = "a probe") -> dict[str, Any]:
    return {"name": name, "family": "auth", "invalid": True, "credential": credential, "variant": variant}


def outcome(spec: SpecSet, check: str, *items: Any) -> Outcome:
    return judge(log_of(*items), spec, check).outcome


PROTECTED = [refused(), document()]
"""A server that answers 401 with a challenge and publishes PRM."""


# == the WWW-Authenticate parser (FX-7) ============================================================
def test_several_challenges_in_one_field_are_read_with_their_parameters() -> None:
    """Tool-defined (RFC 9110 §11.6.1): challenges and auth-params share one comma-separated list."""
    parsed = parse_challenges(['Newauth realm="apps", type=1, title="Login to \\"apps\\"", Basic realm="simple"'])
    assert [(item.scheme, dict(item.params)) for item in parsed.items] == [
        ("Newauth", {"realm": "apps", "type": "1", "title": 'Login to "apps"'}),
        ("Basic", {"realm": "simple"}),
    ]
    assert parsed.problems == ()


def test_challenges_spread_over_several_fields_are_all_read() -> None:
    """Tool-defined: each WWW-Authenticate field starts a new challenge list."""
    parsed = parse_challenges(["Basic YWxhZGRpbjpvcGVuc2VzYW1l", 'bearer scope="a b", resource_metadata="https://h/x"'])
    assert [item.scheme for item in parsed.items] == ["Basic", "bearer"]
    assert parsed.items[0].token68 == "YWxhZGRpbjpvcGVuc2VzYW1l"
    assert parsed.bearer is not None and parsed.bearer.get("scope") == "a b"
    assert parsed.fields == 2


def test_commas_and_escapes_inside_quoted_strings_stay_in_the_value() -> None:
    """Tool-defined: a quoted string may hold commas, equals signs and escaped quotes."""
    parsed = parse_challenges(['Bearer error_description="a, b = c, \\"d\\"", scope="x"'])
    bearer = parsed.bearer
    assert bearer is not None
    assert bearer.get("error_description") == 'a, b = c, "d"' and bearer.get("scope") == "x"


def test_schemes_and_parameter_names_are_case_insensitive_and_order_free() -> None:
    """Tool-defined: BEARER is Bearer, SCOPE is scope, whitespace around = is allowed."""
    parsed = parse_challenges(['DPoP algs="ES256", BEARER SCOPE = "s", Resource_Metadata="u"'])
    bearer = parsed.bearer
    assert bearer is not None and bearer.scheme == "BEARER"
    assert dict(bearer.params) == {"scope": "s", "resource_metadata": "u"}
    assert parsed.schemes() == ["DPoP", "BEARER"]


def test_empty_list_elements_and_a_bare_scheme_are_fine() -> None:
    """Tool-defined: `Bearer, , Basic` is two challenges without parameters."""
    parsed = parse_challenges(["Bearer, , Basic"])
    assert parsed.schemes() == ["Bearer", "Basic"] and parsed.problems == ()


def test_unreadable_challenges_are_reported_not_guessed() -> None:
    """Tool-defined: a parameter without a challenge, an unterminated quote, a repeated parameter."""
    assert parse_challenges(["realm=x"]).problems
    unterminated = parse_challenges(['Bearer realm="open'])
    assert any("unterminated" in problem for problem in unterminated.problems)
    repeated = parse_challenges(['Bearer scope="a", scope="b"'])
    assert repeated.bearer is not None and repeated.bearer.get("scope") == "a"
    assert any("more than once" in problem for problem in repeated.problems)
    after_token68 = parse_challenges(["Basic abc=, realm=x"])
    assert after_token68.items[0].token68 == "abc=" and after_token68.problems


# == PRM URLs, canonical URIs, credentials, JWTs ==================================================
@pytest.mark.parametrize(
    ("endpoint", "expected"),
    [
        ("https://h/mcp", ["https://h/.well-known/oauth-protected-resource/mcp", "https://h/.well-known/oauth-protected-resource"]),
        ("https://h/", ["https://h/.well-known/oauth-protected-resource"]),
        ("https://h", ["https://h/.well-known/oauth-protected-resource"]),
        ("https://h/a/b/", ["https://h/.well-known/oauth-protected-resource/a/b", "https://h/.well-known/oauth-protected-resource"]),
        ("https://h:8443/mcp?x=1", ["https://h:8443/.well-known/oauth-protected-resource/mcp", "https://h:8443/.well-known/oauth-protected-resource"]),
    ],
)  # fmt: skip
def test_prm_urls_are_built_path_scoped_first_then_root(endpoint: str, expected: list[str]) -> None:
    """Spec-mandated (AUTH-04, RFC 9728 §3.1): the path-scoped URI (none for a root endpoint), then the root one."""
    assert [url for _kind, url in prm_candidates(endpoint)] == expected
    assert prm_kind(expected[-1]) == "root"
    assert prm_kind(expected[0]) == ("path" if len(expected) == 2 else "root")
    assert prm_kind("https://h/mcp") is None


def test_canonical_uris_ignore_case_default_ports_queries_fragments_and_a_trailing_slash() -> None:
    """Tool-defined: the form AUTH-03 compares in."""
    assert canonical_uri("HTTPS://MCP.Example.com:443/mcp/?x=1#f") == "https://mcp.example.com/mcp"
    assert canonical_uri("http://127.0.0.1:8000/mcp") == "http://127.0.0.1:8000/mcp"
    assert canonical_uri("http://[::1]:80/") == "http://[::1]"
    assert is_loopback_host("localhost") and is_loopback_host("127.0.0.9") and is_loopback_host("[::1]")
    assert not is_loopback_host("example.com") and not is_loopback_host("10.0.0.1")


def test_presented_credentials_tell_anonymous_requests_from_bearer_query_and_key_ones() -> None:
    """Tool-defined: what counts as "no credentials at all"."""
    body = request_body("tools/list")
    assert presented(refused().request).anonymous
    bearer = presented(served().request)
    assert bearer.bearer == TOKEN and not bearer.anonymous
    assert presented(refused(authorization="Bearer").request).bearer == ""
    assert presented(refused(authorization="Basic Zm9vOmJhcg==").request).bearer is None
    query = presented(http(body, url=f"{URL}?access_token=abc&page=2", headers=modern_headers(body)).request)
    assert query.query == (("access_token", "abc"),) and not query.anonymous
    keyed = presented(http(body, headers={**modern_headers(body), "x-api-key": "k"}).request)
    assert keyed.other == ("x-api-key",) and not keyed.anonymous


def test_jwts_are_recognised_and_read_without_verification() -> None:
    """Tool-defined: claims are evidence only; opaque tokens are not JWTs."""
    token = unsigned_jwt({"aud": URL, "exp": 5}, {"alg": "none"})
    assert jwt_shaped(token) and token.endswith(".")
    assert jwt_claims(token) == {"aud": URL, "exp": 5}
    assert not jwt_shaped(TOKEN) and jwt_claims(TOKEN) is None
    assert jwt_claims("eyJub3QiOiJqc29u.bm90IGpzb24.x") is None


# == applicability ================================================================================
SERVER_CHECKS = [
    "protected_resource_metadata_is_served",
    "protected_resource_metadata_names_authorization_servers",
    "protected_resource_metadata_names_this_server",
    "protected_resource_metadata_uses_the_canonical_form",
    "protected_resource_metadata_is_discoverable",
    "advertised_resource_metadata_resolves",
    "resource_server_does_not_advertise_offline_access",
    "protected_resource_metadata_offers_no_query_tokens",
    "protected_resource_metadata_avoids_omnibus_scopes",
    "unauthenticated_requests_get_401",
    "refusals_carry_a_bearer_challenge",
    "unauthorized_challenges_name_scopes",
    "challenge_error_codes_follow_rfc_6750",
    "scope_refusals_carry_a_complete_challenge",
    "invalid_tokens_get_401",
    "malformed_credentials_are_not_served",
    "query_string_tokens_are_refused",
    "unauthenticated_requests_are_not_served",
    "authorization_urls_use_https",
    "openid_metadata_lists_pkce_methods",
]


@pytest.mark.parametrize("check", SERVER_CHECKS)
def test_a_server_without_authorization_makes_the_server_items_not_applicable(spec: SpecSet, check: str) -> None:
    """Tool-defined (AUTH-AND-BEHAVIOUR §0.3): tools/list served without a token and no PRM: nothing to fail."""
    log = log_of(
        served(authorization=None), served(authorization="Bearer not-a-jwt"), document({}, url=ROOT_PRM, status=404)
    )
    verdict = judge(log, spec, check)
    assert verdict.outcome is Outcome.NOT_APPLICABLE
    assert NO_AUTH in verdict.reason


@pytest.mark.parametrize("check", [*SERVER_CHECKS, "clients_send_the_token_on_every_request"])
def test_stdio_traffic_has_no_authorization_items(spec: SpecSet, check: str) -> None:
    """Spec-mandated (basic/authorization: stdio takes credentials from the environment)."""
    log = log_of(stdio(Side.CLIENT, request_body("tools/list")), stdio(Side.SERVER, result_body(TOOLS)))
    assert judge(log, spec, check).outcome is Outcome.NOT_APPLICABLE


def test_the_origin_check_states_auth_30_too() -> None:
    """Spec-mandated (HTTP-35, AUTH-30): one property, one check citing both IDs."""
    assert REGISTRY["foreign_origins_get_403"].requirements == ("HTTP-35", "AUTH-30")


# == A. Protected Resource Metadata ===============================================================
def test_a_served_prm_passes_auth_01(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-01): 200, application/json, a JSON object; a 404 at the root URI does not matter."""
    root = document({"error": "nope"}, url=ROOT_PRM, status=404)
    assert outcome(spec, "protected_resource_metadata_is_served", refused(), document(), root) is Outcome.PASSED


def test_a_prm_that_is_no_json_object_or_nowhere_fails_auth_01(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-01)."""
    html = document("<html>", content_type="text/html")
    verdict = judge(log_of(refused(), html), spec, "protected_resource_metadata_is_served")
    assert verdict.outcome is Outcome.FAILED and "text/html" in verdict.reason
    missing = [document({}, status=404), document({}, url=ROOT_PRM, status=404)]
    verdict = judge(log_of(refused(), *missing), spec, "protected_resource_metadata_is_served")
    assert verdict.outcome is Outcome.FAILED and "no PRM URL" in verdict.reason


def test_auth_01_is_not_verified_when_no_prm_fetch_was_captured(spec: SpecSet) -> None:
    """Tool-defined: the proxy keeps only MCP traffic, so a 401 alone says nothing about the PRM."""
    verdict = judge(log_of(refused()), spec, "protected_resource_metadata_is_served")
    assert verdict.outcome is Outcome.NOT_VERIFIED and "reverse proxy" in verdict.reason


def test_authorization_servers_must_be_a_non_empty_array_of_issuer_urls(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-02)."""
    check = "protected_resource_metadata_names_authorization_servers"
    assert outcome(spec, check, *PROTECTED) is Outcome.PASSED
    for body, words in (
        ({"resource": URL}, "missing"),
        ({"resource": URL, "authorization_servers": []}, "not an array"),
        ({"resource": URL, "authorization_server": "https://as.example"}, "singular"),
        ({"resource": URL, "authorization_servers": ["not a url", 7]}, "not issuer URLs"),
    ):
        verdict = judge(log_of(refused(), document(body)), spec, check)
        assert verdict.outcome is Outcome.FAILED and words in verdict.reason


def test_prm_content_rules_wait_for_a_served_document(spec: SpecSet) -> None:
    """Tool-defined: only 404s were fetched, so AUTH-02 cannot be judged (blocked by AUTH-01)."""
    verdict = judge(
        log_of(refused(), document({}, status=404)), spec, "protected_resource_metadata_names_authorization_servers"
    )
    assert verdict.outcome is Outcome.NOT_VERIFIED and verdict.blocked_by == "AUTH-01"


def test_the_prm_resource_must_identify_this_server(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-03): exact for the path-scoped document, a path prefix allowed at the root."""
    check = "protected_resource_metadata_names_this_server"
    assert outcome(spec, check, *PROTECTED) is Outcome.PASSED
    prefix = document({**PRM, "resource": "http://127.0.0.1:8000"}, url=ROOT_PRM)
    verdict = judge(log_of(refused(), prefix), spec, check)
    assert verdict.outcome is Outcome.PASSED and "prefix" in verdict.reason
    wrong = judge(log_of(refused(), document({**PRM, "resource": "https://other.example/mcp"})), spec, check)
    assert wrong.outcome is Outcome.FAILED and "does not identify" in wrong.reason
    scoped_prefix = document({**PRM, "resource": "http://127.0.0.1:8000"})
    assert outcome(spec, check, refused(), scoped_prefix) is Outcome.FAILED
    assert outcome(spec, check, refused(), document({"authorization_servers": ["https://a"]})) is Outcome.FAILED
    assert outcome(spec, check, refused(), document({**PRM, "resource": URL + "#x"})) is Outcome.FAILED


def test_the_prm_resource_should_be_in_canonical_form(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-03, SHOULD): no trailing slash the endpoint lacks, lowercase scheme and host."""
    check = "protected_resource_metadata_uses_the_canonical_form"
    assert outcome(spec, check, *PROTECTED) is Outcome.PASSED
    slash = judge(log_of(refused(), document({**PRM, "resource": URL + "/"})), spec, check)
    assert slash.outcome is Outcome.FAILED and "trailing slash" in slash.reason
    upper = document({**PRM, "resource": "HTTP://127.0.0.1:8000/mcp"})
    assert outcome(spec, check, refused(), upper) is Outcome.FAILED


def test_prm_is_discoverable_through_the_challenge_or_a_well_known_uri(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-04): either mechanism is enough."""
    check = "protected_resource_metadata_is_discoverable"
    header_only = judge(log_of(refused()), spec, check)
    assert header_only.outcome is Outcome.PASSED and "resource_metadata" in header_only.reason
    bare = refused(challenge='Bearer scope="notes:read"')
    wellknown = judge(log_of(bare, document()), spec, check)
    assert wellknown.outcome is Outcome.PASSED and "path well-known" in wellknown.reason


def test_no_discovery_mechanism_at_all_fails_auth_04(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-04): no resource_metadata and both well-known URIs answer 404."""
    bare = refused(challenge='Bearer scope="notes:read"')
    log = log_of(bare, document({}, status=404), document({}, url=ROOT_PRM, status=404))
    verdict = judge(log, spec, "protected_resource_metadata_is_discoverable")
    assert verdict.outcome is Outcome.FAILED and "404" in verdict.reason


def test_auth_04_is_not_verified_when_the_well_known_uris_were_not_tried(spec: SpecSet) -> None:
    """Tool-defined: a passive capture without metadata fetches."""
    bare = refused(challenge="Bearer")
    assert outcome(spec, "protected_resource_metadata_is_discoverable", bare) is Outcome.NOT_VERIFIED


def test_the_advertised_resource_metadata_url_must_resolve(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-05): pass when fetched and served, fail on a 404, not verified when never fetched."""
    check = "advertised_resource_metadata_resolves"
    assert outcome(spec, check, *PROTECTED) is Outcome.PASSED
    dangling = judge(log_of(refused(), document({}, status=404)), spec, check)
    assert dangling.outcome is Outcome.FAILED and "404" in dangling.reason
    assert outcome(spec, check, refused()) is Outcome.NOT_VERIFIED
    relative = refused(challenge='Bearer resource_metadata="/prm"')
    assert outcome(spec, check, relative) is Outcome.FAILED


def test_offline_access_is_not_advertised(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-06, SHOULD NOT): neither in scopes_supported nor in a challenge scope."""
    check = "resource_server_does_not_advertise_offline_access"
    assert outcome(spec, check, *PROTECTED) is Outcome.PASSED
    prm = document({**PRM, "scopes_supported": ["notes:read", "offline_access"]})
    assert outcome(spec, check, refused(), prm) is Outcome.FAILED
    challenged = refused(challenge='Bearer scope="notes:read offline_access"')
    assert outcome(spec, check, challenged) is Outcome.FAILED


def test_prm_does_not_offer_query_tokens(spec: SpecSet) -> None:
    """Tool-defined policy (AUTH-07)."""
    check = "protected_resource_metadata_offers_no_query_tokens"
    assert outcome(spec, check, *PROTECTED) is Outcome.PASSED
    query = document({**PRM, "bearer_methods_supported": ["header", "query"]})
    assert outcome(spec, check, refused(), query) is Outcome.FAILED
    assert outcome(spec, check, refused()) is Outcome.NOT_VERIFIED


def test_omnibus_scopes_are_noted(spec: SpecSet) -> None:
    """Spec-advised (AUTH-08, advisory): `*` and friends are flagged at INFO."""
    check = "protected_resource_metadata_avoids_omnibus_scopes"
    assert outcome(spec, check, *PROTECTED) is Outcome.PASSED
    verdict = judge(log_of(refused(), document({**PRM, "scopes_supported": ["*"]})), spec, check)
    assert verdict.outcome is Outcome.FAILED and verdict.severity.value == "info"


# == B. Challenges and status codes ===============================================================
def test_an_unauthenticated_request_gets_401(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-09)."""
    check = "unauthenticated_requests_get_401"
    assert outcome(spec, check, refused()) is Outcome.PASSED
    forbidden = judge(log_of(document(), refused(status=403, challenge=None)), spec, check)
    assert forbidden.outcome is Outcome.FAILED and "HTTP 403" in forbidden.reason
    assert outcome(spec, check, document(), refused(status=500, challenge=None)) is Outcome.FAILED


def test_auth_09_leaves_origin_refusals_and_unknown_sessions_to_their_own_rules(spec: SpecSet) -> None:
    """Tool-defined: a 403 to a foreign Origin is HTTP-35's; a 404 for a session id is AUTH-32's."""
    check = "unauthenticated_requests_get_401"
    origin = refused(status=403, challenge=None, extra={"origin": "https://evil.example"})
    session = refused(status=404, challenge=None, extra={"mcp-session-id": "s-1"})
    assert outcome(spec, check, refused(), origin, session) is Outcome.PASSED


def test_auth_09_judges_only_requests_that_are_otherwise_well_formed(spec: SpecSet) -> None:
    """Issue 28 (AUTH-09 is a status-code requirement): the suite's protocol-invalid probes (a bad version, no
    _meta, a wrong Accept, "jsonrpc": "1.0"), answered 400/406 for that protocol reason, and anyone's request
    refused with a protocol error code or 406, are no evidence against it; the public method stays the reason."""
    check = "unauthenticated_requests_get_401"
    bad_version = {"name": "unsupported-version", "family": "versioning", "invalid": True}
    wrong_accept = {"name": "wrong-accept", "family": "envelope", "invalid": True}
    probes = [
        refused(status=400, challenge=None, probe=bad_version),
        refused(status=406, challenge=None, probe=wrong_accept),
    ]
    body = request_body("tools/list", 9, {})
    passive = http(body, {"jsonrpc": "2.0", "id": 9, "error": {"code": -32602, "message": "params._meta is missing"}},
                   status=400, headers=auth_headers(body, None))  # fmt: skip
    verdict = judge(log_of(document(), served(authorization=None), *probes, passive), spec, check)
    assert verdict.outcome is Outcome.NOT_VERIFIED and "AUTH-29" in verdict.reason, verdict.reason
    only = judge(log_of(document(), *probes, passive), spec, check)
    assert only.outcome is Outcome.NOT_VERIFIED and "otherwise" not in only.reason and "malformed" in only.reason
    assert outcome(spec, check, document(), *probes, refused()) is Outcome.PASSED
    plain_400 = http(body, {"error": "bad"}, status=400, headers=auth_headers(body, None))
    assert outcome(spec, check, document(), *probes, plain_400) is Outcome.FAILED  # no protocol reason named


def test_public_methods_leave_auth_09_not_verified(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-09): a served request means the method is public (AUTH-29 judges that)."""
    verdict = judge(log_of(document(), served(authorization=None)), spec, "unauthenticated_requests_get_401")
    assert verdict.outcome is Outcome.NOT_VERIFIED and "AUTH-29" in verdict.reason


def test_a_probe_refusal_of_a_bad_token_counts_only_between_served_controls(spec: SpecSet) -> None:
    """Tool-defined (AUTH-AND-BEHAVIOUR §2.4): a server that refuses everything earns no pass for refusing a bad
    token."""
    check = "invalid_tokens_get_401"
    probe = tag("auth-invalid-token", "invalid")
    bad = {"authorization": "Bearer not-a-token", "probe": probe}
    assert outcome(spec, check, control(), refused(**bad), control()) is Outcome.PASSED
    lone = judge(log_of(refused(**bad)), spec, check)
    assert lone.outcome is Outcome.NOT_VERIFIED and "control" in lone.reason
    locked = {"name": "auth-control", "invalid": False}
    verdict = judge(
        log_of(control(), refused(**bad), refused(authorization=f"Bearer {TOKEN}", probe=locked)), spec, check
    )
    assert verdict.outcome is Outcome.NOT_VERIFIED and "HTTP 401" in verdict.reason


def test_a_401_without_credentials_shows_auth_09_and_auth_29_without_controls(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-09, AUTH-29): a request carrying no credential owes a 401 whatever the server does with
    tokens, so a run with no token of its own (no control to send) still judges it; controls only add to it."""
    probe = tag("auth-no-token", "none")
    for check in ("unauthenticated_requests_get_401", "unauthenticated_requests_are_not_served"):
        lone = judge(log_of(refused(probe=probe)), spec, check)
        assert lone.outcome is Outcome.PASSED and "whatever the server does with tokens" in lone.reason, check
        bracketed = judge(log_of(control(), refused(probe=probe), control()), spec, check)
        assert bracketed.outcome is Outcome.PASSED and "own credentials was served" in bracketed.reason, check


def test_every_401_carries_a_bearer_challenge(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-10, RFC 6750 §3)."""
    check = "refusals_carry_a_bearer_challenge"
    assert outcome(spec, check, refused(), refused(challenge='DPoP algs="ES256", Bearer')) is Outcome.PASSED
    bare = judge(log_of(refused(challenge=None)), spec, check)
    assert bare.outcome is Outcome.FAILED and "without a WWW-Authenticate" in bare.reason
    basic = judge(log_of(refused(challenge='Basic realm="x"')), spec, check)
    assert basic.outcome is Outcome.FAILED and "no Bearer" in basic.reason
    scope_403 = refused(status=403, challenge='Basic realm="x", error="insufficient_scope"')
    assert outcome(spec, check, refused(), scope_403) is Outcome.FAILED


def test_a_401_challenge_names_the_scopes(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-11, SHOULD)."""
    check = "unauthorized_challenges_name_scopes"
    assert outcome(spec, check, refused()) is Outcome.PASSED
    assert outcome(spec, check, refused(challenge=f'Bearer resource_metadata="{PRM_URL}"')) is Outcome.FAILED
    blocked = judge(log_of(document(), refused(challenge=None)), spec, check)
    assert blocked.outcome is Outcome.NOT_VERIFIED and blocked.blocked_by == "AUTH-10"


def test_challenge_error_codes_follow_rfc_6750(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-12, inherited SHOULD graded INFO)."""
    check = "challenge_error_codes_follow_rfc_6750"
    token_refused = refused(authorization="Bearer nope-123456", challenge=f'{CHALLENGE}, error="invalid_token"')
    assert outcome(spec, check, refused(), token_refused) is Outcome.PASSED
    anonymous_error = refused(challenge=f'{CHALLENGE}, error="invalid_token"')
    verdict = judge(log_of(anonymous_error), spec, check)
    assert verdict.outcome is Outcome.FAILED and verdict.severity.value == "info"
    assert outcome(spec, check, refused(authorization="Bearer nope-123456")) is Outcome.FAILED
    assert outcome(spec, check, refused(challenge=f'{CHALLENGE}, error="expired"')) is Outcome.FAILED


def test_a_scope_refusal_challenges_completely(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-14, SHOULD): insufficient_scope with scope and resource_metadata."""
    check = "scope_refusals_carry_a_complete_challenge"
    complete = f'Bearer error="insufficient_scope", scope="notes:write", resource_metadata="{PRM_URL}"'
    with_token = f"Bearer {TOKEN}"
    assert outcome(spec, check, refused(authorization=with_token, status=403, challenge=complete)) is Outcome.PASSED
    partial = refused(authorization=with_token, status=403, challenge='Bearer error="insufficient_scope"')
    verdict = judge(log_of(partial), spec, check)
    assert verdict.outcome is Outcome.FAILED and "resource_metadata" in verdict.reason
    assert outcome(spec, check, refused()) is Outcome.NOT_VERIFIED


# == C. Token validation ==========================================================================
def test_invalid_token_probes_get_401(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-13)."""
    check = "invalid_tokens_get_401"
    probe = tag("auth-not-a-jwt", "malformed", "a bearer string that is no JWT")
    good = log_of(control(), refused(authorization="Bearer not-a-jwt", probe=probe), control())
    assert judge(good, spec, check).outcome is Outcome.PASSED
    accepted = judge(log_of(document(), served(authorization="Bearer not-a-jwt", probe=probe)), spec, check)
    assert accepted.outcome is Outcome.FAILED and "was served" in accepted.reason
    forbidden = refused(authorization="Bearer not-a-jwt", probe=probe, status=403)
    verdict = judge(log_of(control(), forbidden, control()), spec, check)
    assert verdict.outcome is Outcome.FAILED and "HTTP 403, not 401" in verdict.reason


def test_a_visibly_expired_jwt_that_is_served_fails_auth_13(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-13, passive): exp had passed when the request was sent."""
    expired = unsigned_jwt({"aud": URL, "exp": 1_600_000_000}, {"alg": "RS256"}, b"sig")  # before the fixtures' clock
    verdict = judge(log_of(refused(), served(authorization=f"Bearer {expired}")), spec, "invalid_tokens_get_401")
    assert verdict.outcome is Outcome.FAILED and fingerprint(expired) in verdict.reason
    assert expired not in json.dumps(dataclasses.asdict(verdict))


def test_auth_13_is_not_verified_without_an_invalid_token(spec: SpecSet) -> None:
    """Tool-defined: valid traffic alone says nothing about invalid tokens."""
    assert outcome(spec, "invalid_tokens_get_401", refused(), served()) is Outcome.NOT_VERIFIED


def test_malformed_credentials_are_never_served(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-20): 401 or another refusal passes, being served or a 5xx fails."""
    check = "malformed_credentials_are_not_served"
    probe = tag("auth-basic", "malformed", "Basic credentials")
    basic = "Basic Zm9vOmJhcg=="
    assert outcome(spec, check, control(), refused(authorization=basic, probe=probe), control()) is Outcome.PASSED
    verdict = judge(
        log_of(document(), control(), refused(authorization=basic, probe=probe, status=400, challenge=None), control()),
        spec,
        check,
    )
    assert verdict.outcome is Outcome.PASSED and "400" in verdict.reason
    assert outcome(spec, check, document(), served(authorization=basic, probe=probe)) is Outcome.FAILED
    broke = refused(authorization=basic, probe=probe, status=500, challenge=None)
    assert outcome(spec, check, document(), broke) is Outcome.FAILED


def test_an_empty_bearer_is_judged_passively_too(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-20): a bare `Authorization: Bearer` from any client."""
    check = "malformed_credentials_are_not_served"
    assert outcome(spec, check, refused(authorization="Bearer")) is Outcome.PASSED
    assert outcome(spec, check, document(), served(authorization="Bearer")) is Outcome.FAILED
    assert outcome(spec, check, refused(), served()) is Outcome.NOT_VERIFIED


# == E. Query tokens and anonymous access ==========================================================
def query_probe(
    status: int = 401, *, authorization: str | None = None, name: str = "auth-query-access-token"
) -> HttpExchange:
    probe = tag(name, "query", "the run's token only in ?access_token=")
    url = f"{URL}?access_token={TOKEN}"
    if status == 200:
        return served(authorization=authorization, probe=probe, url=url)
    return refused(authorization=authorization, probe=probe, url=url, status=status)


def test_a_token_in_the_query_string_is_refused(spec: SpecSet) -> None:
    """Tool-defined policy (AUTH-28): refusal passes between served controls."""
    check = "query_string_tokens_are_refused"
    assert outcome(spec, check, control(), query_probe(), control()) is Outcome.PASSED


def test_a_served_query_token_fails_auth_28_when_no_token_was_refused(spec: SpecSet) -> None:
    """Tool-defined policy (AUTH-28): the same method without credentials got 401, with ?access_token= it was served."""
    verdict = judge(log_of(refused(), query_probe(200)), spec, "query_string_tokens_are_refused")
    assert verdict.outcome is Outcome.FAILED and "?access_token" in verdict.reason
    assert TOKEN not in verdict.reason and all(TOKEN not in item.excerpt for item in verdict.evidence)


def test_a_served_query_token_proves_nothing_when_the_garbage_header_alone_is_served(spec: SpecSet) -> None:
    """Tool-defined (AUTH-28): a server accepting any bearer string is AUTH-20's finding, not this one."""
    check = "query_string_tokens_are_refused"
    garbage = "Bearer not-a-jwt"
    with_header = query_probe(200, authorization=garbage, name="auth-query-with-garbage-header")
    alone = tag("auth-not-a-jwt", "malformed")  # the case the garbage-header case names as its counterpart
    alone_served = served(authorization=garbage, probe=alone)
    assert outcome(spec, check, refused(), alone_served, with_header) is Outcome.NOT_VERIFIED
    alone_refused = refused(authorization=garbage, probe=alone)
    assert outcome(spec, check, refused(), alone_refused, with_header) is Outcome.FAILED


def test_the_suite_names_the_counterpart_of_its_garbage_header_probe(spec: SpecSet) -> None:
    """Tool-defined (AUTH-28): in a recording every bearer reads "Bearer [REDACTED]", so the probe's `alone` tag
    names the request to compare with instead of the header value."""
    check = "query_string_tokens_are_refused"
    redacted = "Bearer [REDACTED]"
    probe = {**tag("auth-query-with-garbage-header", "query"), "alone": "auth-not-a-jwt"}
    log = log_of(
        refused(),
        served(authorization=redacted, probe={"name": "auth-control", "invalid": False}),
        refused(authorization=redacted, probe=tag("auth-not-a-jwt", "malformed")),
        served(authorization=redacted, probe=probe, url=f"{URL}?access_token=%5BREDACTED%5D"),
    )
    assert judge(log, spec, check).outcome is Outcome.FAILED


def test_an_unauthenticated_tools_list_is_refused(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-29, SHOULD)."""
    check = "unauthenticated_requests_are_not_served"
    assert outcome(spec, check, refused()) is Outcome.PASSED
    verdict = judge(log_of(document(), served(authorization=None)), spec, check)
    assert verdict.outcome is Outcome.FAILED and verdict.severity.value == "should"


def test_an_anonymous_discover_is_only_noted(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-29): a client may need server/discover before it holds a token."""
    discover = served("server/discover", authorization=None)
    verdict = judge(log_of(refused(), discover), spec, "unauthenticated_requests_are_not_served")
    assert verdict.outcome is Outcome.PASSED and "allowed before a token" in verdict.reason


# == G. 2025 sessions ==============================================================================
def legacy_request(
    authorization: str | None, status: int, *, session: str = "sess-1", result: Any = None
) -> HttpExchange:
    body = {"jsonrpc": "2.0", "id": 5, "method": "tools/list"}
    headers = legacy_headers(session)
    if authorization is not None:
        headers["authorization"] = authorization
    if status == 200:
        return http(body, result_body(result or {"tools": []}, 5), headers=headers)
    return http(body, {"error": "x"}, status=status, headers=headers, response_headers={"www-authenticate": CHALLENGE})


def signed_in_session(session: str = "sess-1") -> list[HttpExchange]:
    """A 2025 session whose initialize carried the run's token."""
    first, initialized = legacy_session(session)
    headers = Headers((*first.request.headers, ("authorization", f"Bearer {TOKEN}")))
    return [dataclasses.replace(first, request=dataclasses.replace(first.request, headers=headers)), initialized]


def test_a_session_id_is_not_a_credential(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-32): a 2025 session request without a token gets 401."""
    check = "session_ids_are_not_credentials"
    assert outcome(spec, check, legacy_session(), legacy_request(None, 401)) is Outcome.PASSED
    verdict = judge(log_of(legacy_session(), document(), legacy_request(None, 404)), spec, check)
    assert verdict.outcome is Outcome.PASSED and "the 401 AUTH-09 asks for" in verdict.reason
    served_session = legacy_request(None, 200)
    assert outcome(spec, check, signed_in_session(), refused(), served_session) is Outcome.FAILED


def test_a_session_opened_without_credentials_says_nothing_of_its_id_as_a_credential(spec: SpecSet) -> None:
    """Issue 28: a server with public methods opened the session for a client without a token; serving that
    session's requests without a token takes no id for a credential (AUTH-29 judges what is public)."""
    verdict = judge(
        log_of(legacy_session(), refused(), legacy_request(None, 200)), spec, "session_ids_are_not_credentials"
    )
    assert verdict.outcome is Outcome.NOT_VERIFIED and "opened without credentials" in verdict.reason


def test_auth_32_does_not_apply_to_2026(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-32 is 2025-only: 2026 has no sessions)."""
    assert outcome(spec, "session_ids_are_not_credentials", refused()) is Outcome.NOT_APPLICABLE


def session_opened(session: str) -> list[HttpExchange]:
    exchanges = legacy_session(session)
    return [*exchanges, legacy_request(None, 401, session=session)]


def test_session_ids_are_long_and_not_counters(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-34, heuristic graded SHOULD)."""
    check = "session_ids_are_unpredictable"
    good = [*session_opened("5f0c6a2e9b1d4c7a8e3f"), *session_opened("a93be07d1c4f46e2b8d1")]
    assert outcome(spec, check, *good) is Outcome.PASSED
    short = judge(log_of(*session_opened("abc123")), spec, check)
    assert short.outcome is Outcome.FAILED and short.severity.value == "should"
    counted = [*session_opened("session-000000000017"), *session_opened("session-000000000018")]
    verdict = judge(log_of(*counted), spec, check)
    assert verdict.outcome is Outcome.FAILED and "number" in verdict.reason


# == I. client side ===============================================================================
def test_a_client_keeps_sending_its_token(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-36)."""
    check = "clients_send_the_token_on_every_request"
    assert outcome(spec, check, served(authorization=None), served(), served()) is Outcome.PASSED
    verdict = judge(log_of(served(), served(authorization=None)), spec, check)
    assert verdict.outcome is Outcome.FAILED and "no Authorization" in verdict.reason
    probe = served(authorization=None, probe=tag("auth-no-token", "none"))
    assert outcome(spec, check, served(), probe, served()) is Outcome.PASSED


def test_two_clients_behind_one_proxy_are_told_apart(spec: SpecSet) -> None:
    """Tool-defined (AUTH-36): requests are grouped by User-Agent, so an anonymous second client is not the first."""
    other = served(authorization=None, extra={"user-agent": "another-client"})
    assert outcome(spec, "clients_send_the_token_on_every_request", served(), other, served()) is Outcome.PASSED


def test_auth_36_does_not_apply_when_no_client_presented_a_token(spec: SpecSet) -> None:
    """Tool-defined."""
    assert (
        outcome(spec, "clients_send_the_token_on_every_request", served(authorization=None)) is Outcome.NOT_APPLICABLE
    )


def test_a_client_never_puts_a_token_in_the_query(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-37): a JWT-shaped value, or one equal to a bearer token seen."""
    check = "clients_keep_tokens_out_of_query_strings"
    assert outcome(spec, check, served(), served(url=f"{URL}?page=2")) is Outcome.PASSED
    jwt = unsigned_jwt({"aud": URL}, {"alg": "none"})
    leaked = judge(log_of(served(url=f"{URL}?access_token={jwt}", authorization=None)), spec, check)
    assert leaked.outcome is Outcome.FAILED and fingerprint(jwt) in leaked.reason
    echoed = judge(log_of(served(), served(url=f"{URL}?key={TOKEN}")), spec, check)
    assert echoed.outcome is Outcome.FAILED and TOKEN not in echoed.reason
    probe = served(authorization=None, url=f"{URL}?access_token={TOKEN}", probe=tag("auth-query-token", "query"))
    assert outcome(spec, check, served(), probe) is Outcome.PASSED
    assert outcome(spec, check, served(authorization=None)) is Outcome.NOT_APPLICABLE


def test_a_client_sends_only_tokens_meant_for_this_server(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-38, heuristic graded SHOULD): a readable JWT's aud and iss."""
    check = "clients_send_only_tokens_meant_for_the_server"
    mine = unsigned_jwt({"aud": URL, "iss": "https://as.example"}, {"alg": "RS256"}, b"s")
    assert outcome(spec, check, document(), served(authorization=f"Bearer {mine}")) is Outcome.PASSED
    other = unsigned_jwt({"aud": ["https://api.other.example"], "iss": "https://as.example"}, {"alg": "RS256"}, b"s")
    verdict = judge(log_of(served(authorization=f"Bearer {other}")), spec, check)
    assert verdict.outcome is Outcome.FAILED and verdict.severity.value == "should"
    foreign = unsigned_jwt({"aud": URL, "iss": "https://evil.example"}, {"alg": "RS256"}, b"s")
    assert outcome(spec, check, document(), served(authorization=f"Bearer {foreign}")) is Outcome.FAILED
    assert outcome(spec, check, served()) is Outcome.NOT_VERIFIED
    assert outcome(spec, check, served(authorization=None)) is Outcome.NOT_APPLICABLE


# == J. authorization server ======================================================================
def test_authorization_urls_use_https_or_loopback(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-48): plain http on loopback passes as a test set-up."""
    check = "authorization_urls_use_https"
    assert outcome(spec, check, *PROTECTED) is Outcome.PASSED
    loopback = document({**PRM, "authorization_servers": ["http://127.0.0.1:9411"]})
    verdict = judge(log_of(refused(), loopback), spec, check)
    assert verdict.outcome is Outcome.PASSED and "loopback" in verdict.reason
    plain = document({**PRM, "authorization_servers": ["http://as.example"]})
    assert outcome(spec, check, refused(), plain) is Outcome.FAILED
    redirect = http(
        None, {}, method="GET", url="https://as.example/authorize?redirect_uri=http%3A%2F%2Fapp.example%2Fcb"
    )
    assert outcome(spec, check, *PROTECTED, redirect) is Outcome.FAILED
    assert outcome(spec, check, refused()) is Outcome.NOT_VERIFIED


def test_openid_discovery_lists_pkce_methods(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-50)."""
    check = "openid_metadata_lists_pkce_methods"
    oidc_url = "https://as.example/.well-known/openid-configuration"
    good = document({"issuer": "https://as.example", "code_challenge_methods_supported": ["S256"]}, url=oidc_url)
    assert outcome(spec, check, refused(), good) is Outcome.PASSED
    bad = document({"issuer": "https://as.example"}, url=oidc_url)
    assert outcome(spec, check, refused(), bad) is Outcome.FAILED
    assert outcome(spec, check, refused()) is Outcome.NOT_VERIFIED


# == redaction ====================================================================================
def test_no_token_from_the_traffic_appears_in_any_verdict(spec: SpecSet) -> None:
    """Tool-defined (AUTH-AND-BEHAVIOUR §0.4): header, query and body tokens are never written back out."""
    jwt = unsigned_jwt({"aud": "https://other.example", "exp": 1}, {"alg": "none"})
    body = request_body("tools/call", 3, {"name": "echo", "arguments": {"text": TOKEN}})
    log = log_of(
        refused(authorization=f"Bearer {TOKEN}"),
        served(authorization=f"Bearer {jwt}"),
        served(url=f"{URL}?access_token={jwt}&token={TOKEN}"),
        http(body, {"error": "x"}, status=401, headers=auth_headers(body, f"Bearer {TOKEN}")),
        query_probe(200),
    )
    verdicts = evaluate(log, spec)
    text = json.dumps([dataclasses.asdict(verdict) for verdict in verdicts], default=str)
    assert TOKEN not in text and jwt not in text
    failed = {verdict.check for verdict in verdicts if verdict.outcome is Outcome.FAILED}
    assert {"clients_keep_tokens_out_of_query_strings", "invalid_tokens_get_401"} <= failed
