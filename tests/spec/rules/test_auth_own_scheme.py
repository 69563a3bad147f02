"""A server that protects itself with a scheme of its own (AUTH-AND-BEHAVIOUR §0.3.3): a 401 that names no
``resource_metadata`` and no Protected Resource Metadata at either well-known URI. The items that exist because
of MCP's OAuth profile are graded SHOULD for it, with the reason, by the engine (one grading, declared in the
catalogue); what holds for any HTTP authentication keeps its level."""

from __future__ import annotations

from mcp_assay.spec import SpecSet
from mcp_assay.spec.checks import GRADINGS, REGISTRY
from mcp_assay.spec.requirements import catalogue
from mcp_assay.vocabulary.verdicts import Outcome, Severity
from tests.factories import judge, log_of
from tests.spec.rules.test_auth import PRM_URL, ROOT_PRM, document, refused, served, tag

PLAIN = 'Bearer realm="mcp"'
NOT_FOUND = {"error": "not_found"}
OWN = "protects itself with a scheme of its own"


def own_scheme_server(*extra: object) -> list[object]:
    """401 with a plain Bearer challenge, both well-known URIs answered 404, a wrong token refused with 403."""
    return [
        refused(challenge=PLAIN),
        document(NOT_FOUND, url=PRM_URL, status=404),
        document(NOT_FOUND, url=ROOT_PRM, status=404),
        served(),
        *extra,
    ]


def wrong_token_403() -> object:
    return refused(
        authorization="Bearer not-the-token", status=403, challenge=None, probe=tag("auth-bad-token", "invalid")
    )


def test_the_profiles_items_are_graded_should_for_a_server_with_a_scheme_of_its_own(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-AND-BEHAVIOUR §0.3.3): AUTH-01, AUTH-04 and AUTH-13 (a 403 for a wrong token) are
    recommendations for such a server, each with the reason; nothing of them counts against conformance."""
    log = log_of(*own_scheme_server(wrong_token_403()))
    for check in (
        "protected_resource_metadata_is_served",
        "protected_resource_metadata_is_discoverable",
        "invalid_tokens_get_401",
    ):
        verdict = judge(log, spec, check)
        assert verdict.outcome is Outcome.FAILED, (check, verdict.reason)
        assert verdict.severity is Severity.SHOULD and not verdict.counts_against, check
        assert verdict.graded is not None and OWN in verdict.graded, check
        assert f"(graded SHOULD: http://127.0.0.1:8000/mcp {OWN}" in verdict.reason, check
        assert verdict.shown_level == "MUST, graded SHOULD"


def test_the_same_failures_count_in_full_against_a_server_that_publishes_metadata(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-13): a server on MCP's OAuth profile (its challenge names resource_metadata) owes a 401
    for an invalid token; the 403 is a MUST failure, not graded."""
    log = log_of(refused(), document(), served(), wrong_token_403())
    verdict = judge(log, spec, "invalid_tokens_get_401")
    assert verdict.outcome is Outcome.FAILED and verdict.severity is Severity.MUST and verdict.counts_against
    assert verdict.graded is None and "graded" not in verdict.reason and verdict.shown_level == "MUST"


def test_a_server_whose_well_known_uris_were_not_both_fetched_is_not_graded(spec: SpecSet) -> None:
    """Tool-defined: whether PRM exists cannot be told without both well-known URIs, so nothing is graded lower;
    AUTH-04 says it could not tell, and AUTH-13's 403 counts in full."""
    log = log_of(refused(challenge=PLAIN), document(NOT_FOUND, url=PRM_URL, status=404), served(), wrong_token_403())
    assert judge(log, spec, "protected_resource_metadata_is_discoverable").outcome is Outcome.NOT_VERIFIED
    verdict = judge(log, spec, "invalid_tokens_get_401")
    assert verdict.severity is Severity.MUST and verdict.graded is None


def test_a_wrong_token_served_is_a_failure_under_any_scheme(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-13): being served with an invalid token is no matter of profile; it stays a MUST
    failure, and one ungraded failure keeps the whole verdict at MUST."""
    wrong = served(authorization="Bearer not-the-token", probe=tag("auth-bad-token", "invalid"), ident=2)
    verdict = judge(log_of(*own_scheme_server(wrong, wrong_token_403())), spec, "invalid_tokens_get_401")
    assert verdict.outcome is Outcome.FAILED and verdict.violations == 2
    assert verdict.severity is Severity.MUST and verdict.graded is None and "was served" in verdict.reason


def test_a_401_without_any_challenge_stays_a_must_failure(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-10, RFC 9110 §15.5.2): a 401 carries WWW-Authenticate whatever the scheme, so the
    requirement keeps its level for a server with a scheme of its own."""
    log = log_of(
        refused(challenge=None),
        document(NOT_FOUND, url=PRM_URL, status=404),
        document(NOT_FOUND, url=ROOT_PRM, status=404),
        served(),
    )
    verdict = judge(log, spec, "refusals_carry_a_bearer_challenge")
    assert verdict.outcome is Outcome.FAILED and verdict.severity is Severity.MUST and verdict.graded is None
    assert not REGISTRY["refusals_carry_a_bearer_challenge"].graded


def test_a_server_without_authorization_is_not_graded_but_not_applicable(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-AND-BEHAVIOUR §0.3.2): tools/list served without credentials and no PRM: the AUTH
    items do not apply at all (grading is for a server that does refuse)."""
    anonymous = served(authorization=None)
    verdict = judge(log_of(anonymous), spec, "protected_resource_metadata_is_served")
    assert verdict.outcome is Outcome.NOT_APPLICABLE


def test_every_grading_the_catalogue_names_is_registered_and_lowers_only_the_oauth_profile() -> None:
    """Tool-defined: a catalogue entry's ``graded`` names a registered Grading; the own-scheme grading covers
    the profile's items (PRM, the challenge's resource_metadata and scope, 401-vs-403) and not AUTH-09/10/27/30."""
    from mcp_assay.spec import rules  # noqa: F401

    named = {name for entry in catalogue() for name in entry.graded}
    assert named <= set(GRADINGS), named - set(GRADINGS)
    graded = {entry.id for entry in catalogue() if "own-auth-scheme" in entry.graded}
    assert {"AUTH-01", "AUTH-04", "AUTH-06", "AUTH-11", "AUTH-12", "AUTH-13"} <= graded
    assert not graded & {"AUTH-09", "AUTH-10", "AUTH-20", "AUTH-27", "AUTH-30"}
    assert GRADINGS["own-auth-scheme"].severity is Severity.SHOULD
