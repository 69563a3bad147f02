"""A client's OAuth flow (AUTH-39..47, 49): a clean flow passes, one bent step fails, and a capture
without the flow says why it cannot tell."""

from __future__ import annotations

import pytest

from mcp_assay.spec import SpecSet
from mcp_assay.vocabulary.verdicts import Outcome
from tests.factories import LEGACY, judge, log_of, modern_call
from tests.spec.rules._oauth_builders import PRM_PATH_URL, PRM_ROOT_URL, TOOLS, Faults, challenge, flow

AUTHORIZE = 4
"""Where the authorization request sits in :func:`flow`."""
CHECKS = (
    "clients_discover_prm_where_told",
    "clients_discover_authorization_servers_in_order",
    "clients_name_the_resource",
    "clients_use_pkce_s256",
    "clients_check_the_response_issuer",
    "clients_send_state",
    "clients_ask_for_the_challenged_scopes",
    "clients_register_in_the_prescribed_form",
    "client_ids_stay_with_their_issuer",
    "authorization_responses_carry_iss",
    "response_issuers_are_advertised",
)


def outcome(spec: SpecSet, check: str, faults: Faults | None = None) -> Outcome:
    return judge(log_of(flow(faults)), spec, check).outcome


@pytest.mark.parametrize("check", CHECKS)
def test_a_clean_flow_passes(spec: SpecSet, check: str) -> None:
    """Spec-mandated: discovery in order, resource, PKCE S256, state, scopes, iss, registration form."""
    verdict = judge(log_of(flow()), spec, check)
    assert verdict.outcome is Outcome.PASSED, verdict.reason


@pytest.mark.parametrize("check", CHECKS)
def test_a_challenge_without_the_flow_is_not_verified(spec: SpecSet, check: str) -> None:
    """Tool-defined: a 401 shows authorization in use, but the client's flow went elsewhere (a reverse
    proxy sees none of it)."""
    verdict = judge(log_of(challenge(Faults())), spec, check)
    assert verdict.outcome is Outcome.NOT_VERIFIED
    assert "forward proxy" in verdict.reason


@pytest.mark.parametrize("check", CHECKS)
def test_traffic_without_authorization_makes_the_flow_rules_not_applicable(spec: SpecSet, check: str) -> None:
    verdict = judge(log_of(modern_call("tools/list", {}, TOOLS)), spec, check)
    assert verdict.outcome is Outcome.NOT_APPLICABLE


def test_prm_fetched_elsewhere_than_the_challenge_named_fails_auth_39(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-39): the challenge's resource_metadata is the URL to use."""
    verdict = judge(log_of(flow(Faults(prm_first=PRM_ROOT_URL))), spec, "clients_discover_prm_where_told")
    assert verdict.outcome is Outcome.FAILED
    assert "named resource_metadata" in verdict.reason


def test_without_resource_metadata_the_path_scoped_uri_comes_first_auth_39(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-39): path-scoped before root."""
    good = Faults(challenge_names_metadata=False)
    assert outcome(spec, "clients_discover_prm_where_told", good) is Outcome.PASSED
    bad = Faults(challenge_names_metadata=False, prm_first=PRM_ROOT_URL, prm_also=[PRM_PATH_URL])
    verdict = judge(log_of(flow(bad)), spec, "clients_discover_prm_where_told")
    assert verdict.outcome is Outcome.FAILED
    assert "before the path-scoped" in verdict.reason


def test_openid_discovery_tried_before_oauth_metadata_fails_auth_40(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-40): RFC 8414 metadata first, then OpenID discovery."""
    faults = Faults(metadata_paths=["/.well-known/openid-configuration", "/.well-known/oauth-authorization-server"])
    verdict = judge(log_of(flow(faults)), spec, "clients_discover_authorization_servers_in_order")
    assert verdict.outcome is Outcome.FAILED
    assert "first fetched" in verdict.reason


def test_metadata_naming_another_issuer_fails_auth_40_only_when_used(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-40): a client that notices the mismatch and stops passes."""
    faults = Faults(served_issuer="https://evil.example")
    verdict = judge(log_of(flow(faults)), spec, "clients_discover_authorization_servers_in_order")
    assert verdict.outcome is Outcome.FAILED
    assert "used its endpoints anyway" in verdict.reason
    stopped = flow(faults)[:3]  # the challenge, PRM and the metadata; nothing after
    verdict = judge(log_of(stopped), spec, "clients_discover_authorization_servers_in_order")
    assert verdict.outcome is Outcome.PASSED


def test_a_missing_or_foreign_resource_fails_auth_41(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-41): both requests name the MCP server's canonical URI."""
    missing = judge(log_of(flow(Faults(authorize={"resource": None}))), spec, "clients_name_the_resource")
    assert missing.outcome is Outcome.FAILED and "no resource parameter" in missing.reason
    other = Faults(token={"resource": "http://127.0.0.1:8000/other"})
    verdict = judge(log_of(flow(other)), spec, "clients_name_the_resource")
    assert verdict.outcome is Outcome.FAILED and "not the canonical URI" in verdict.reason


@pytest.mark.parametrize(
    ("faults", "said"),
    [
        (Faults(authorize={"code_challenge_method": None}), "plain"),
        (Faults(authorize={"code_challenge": None, "code_challenge_method": None}), "no code_challenge"),
        (Faults(token={"code_verifier": None}), "without a code_verifier"),
        (Faults(metadata_drop=("code_challenge_methods_supported",)), "lists no code_challenge_methods_supported"),
    ],
)
def test_pkce_faults_fail_auth_42(spec: SpecSet, faults: Faults, said: str) -> None:
    """Spec-mandated (AUTH-42)."""
    verdict = judge(log_of(flow(faults)), spec, "clients_use_pkce_s256")
    assert verdict.outcome is Outcome.FAILED
    assert said in verdict.reason


def test_a_code_redeemed_despite_a_missing_or_wrong_iss_fails_auth_43(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-43, RFC 9207): advertised iss missing, or a different iss, and the client went on."""
    missing = judge(log_of(flow(Faults(redirect={"iss": None}))), spec, "clients_check_the_response_issuer")
    assert missing.outcome is Outcome.FAILED and "no iss" in missing.reason
    wrong = judge(
        log_of(flow(Faults(redirect={"iss": "https://evil.example"}))), spec, "clients_check_the_response_issuer"
    )
    assert wrong.outcome is Outcome.FAILED and "evil.example" in wrong.reason


def test_a_client_that_stops_at_a_wrong_iss_passes_auth_43(spec: SpecSet) -> None:
    faults = Faults(redirect={"iss": "https://evil.example"}, redeem=False)
    verdict = judge(log_of(flow(faults)), spec, "clients_check_the_response_issuer")
    assert verdict.outcome is Outcome.PASSED
    assert "did not redeem" in verdict.reason


@pytest.mark.parametrize(
    "check",
    [
        "clients_check_the_response_issuer",
        "client_ids_stay_with_their_issuer",
        "authorization_responses_carry_iss",
        "response_issuers_are_advertised",
        "clients_register_in_the_prescribed_form",
    ],
)
def test_the_2026_only_flow_rules_do_not_apply_to_a_2025_client(spec: SpecSet, check: str) -> None:
    """Spec-mandated: AUTH-43, 47 and 49, and the application_type part of AUTH-46, are 2026 rules."""
    verdict = judge(log_of(flow(Faults(revision=LEGACY))), spec, check)
    assert verdict.outcome is Outcome.NOT_APPLICABLE
    assert "2026" in verdict.reason


def test_an_authorization_request_without_state_fails_auth_44(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-44, SHOULD)."""
    verdict = judge(log_of(flow(Faults(authorize={"state": None}))), spec, "clients_send_state")
    assert verdict.outcome is Outcome.FAILED


def test_scopes_follow_the_challenge_else_prm_auth_45(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-45): the challenge's scope first; without one, PRM scopes_supported."""
    assert outcome(spec, "clients_ask_for_the_challenged_scopes", Faults(authorize={"scope": "calc:admin"})) is (
        Outcome.FAILED
    )
    from_prm = Faults(challenge_scope=None, authorize={"scope": "calc:use calc:admin"})
    assert outcome(spec, "clients_ask_for_the_challenged_scopes", from_prm) is Outcome.PASSED
    narrower = Faults(challenge_scope=None)
    verdict = judge(log_of(flow(narrower)), spec, "clients_ask_for_the_challenged_scopes")
    assert verdict.outcome is Outcome.FAILED and "PRM scopes_supported" in verdict.reason


def test_a_step_up_asks_for_the_union_auth_45(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-45): after insufficient_scope the client asks for what it had and what is missing."""
    first = flow()
    header = 'Bearer error="insufficient_scope", scope="calc:admin"'
    step_up = modern_call("tools/call", {"name": "add", "arguments": {}}, {}, status=403,
                          response_headers={"www-authenticate": header})  # fmt: skip
    union = flow(Faults(authorize={"scope": "calc:use calc:admin"}))[AUTHORIZE]
    only_new = flow(Faults(authorize={"scope": "calc:admin"}))[AUTHORIZE]
    assert judge(log_of(first, step_up, union), spec, "clients_ask_for_the_challenged_scopes").outcome is (
        Outcome.PASSED
    )
    verdict = judge(log_of(first, step_up, only_new), spec, "clients_ask_for_the_challenged_scopes")
    assert verdict.outcome is Outcome.FAILED and "union" in verdict.reason


def test_registration_without_application_type_or_an_http_client_id_fails_auth_46(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-46)."""
    no_type = judge(
        log_of(flow(Faults(registration_drop=("application_type",)))), spec, "clients_register_in_the_prescribed_form"
    )
    assert no_type.outcome is Outcome.FAILED and "application_type" in no_type.reason
    url_id = Faults(authorize={"client_id": "http://127.0.0.1:7777/client.json"})
    verdict = judge(log_of(flow(url_id)), spec, "clients_register_in_the_prescribed_form")
    assert verdict.outcome is Outcome.FAILED and "not an https URL" in verdict.reason


def test_a_client_id_presented_to_another_authorization_server_fails_auth_47(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-47)."""
    faults = Faults(token_endpoint="http://127.0.0.1:9500/token")
    verdict = judge(log_of(flow(faults)), spec, "client_ids_stay_with_their_issuer")
    assert verdict.outcome is Outcome.FAILED
    assert "127.0.0.1:9500" in verdict.reason


def test_an_authorization_server_without_iss_fails_auth_49(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-49): SHOULD put iss in; MUST advertise it when it does."""
    assert outcome(spec, "authorization_responses_carry_iss", Faults(redirect={"iss": None})) is Outcome.FAILED
    unadvertised = Faults(metadata_drop=("authorization_response_iss_parameter_supported",))
    verdict = judge(log_of(flow(unadvertised)), spec, "response_issuers_are_advertised")
    assert verdict.outcome is Outcome.FAILED and "does not advertise" in verdict.reason


def test_the_oauth_steps_carry_no_json_rpc_messages(spec: SpecSet) -> None:
    """Tool-defined: a registration's JSON or a token form is HTTP, not a malformed JSON-RPC message."""
    log = log_of(flow())
    assert len(log.oauth_exchanges()) == 3
    assert judge(log, spec, "messages_are_jsonrpc_2_0_objects").outcome is Outcome.PASSED
