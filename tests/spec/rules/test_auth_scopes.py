"""AUTH-22, AUTH-15, AUTH-23: stub tokens holding chosen scopes, between calls holding every scope."""

from __future__ import annotations

from typing import Any

from mcp_assay.spec import SpecSet
from mcp_assay.vocabulary.verdicts import Outcome
from tests.factories import judge, log_of
from tests.spec.rules.test_auth import PRM_URL, refused, served

LACKING = "tokens_lacking_an_operations_scopes_do_not_perform_it"
CHALLENGE = "tokens_lacking_several_scopes_get_one_challenge_naming_all"
BROAD = "tokens_with_a_broad_scope_get_what_it_implies"
NEEDS = ["calc:use", "calc:audit"]


def tag(name: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "family": "tokens", "credential": "stub", "tool": "add", "needs": NEEDS,
            "control": "auth-scope-control", **extra}  # fmt: skip


def control() -> Any:
    return served("tools/call", probe=tag("auth-scope-control"))


def insufficient(scope: str) -> str:
    return f'Bearer error="insufficient_scope", scope="{scope}", resource_metadata="{PRM_URL}"'


def lacking(*, status: int = 403, scope: str = "calc:use calc:audit") -> Any:
    return refused("tools/call", authorization="Bearer lacking-scope-token", status=status,
                   challenge=insufficient(scope), probe=tag("auth-scope-lacking", requirement="AUTH-22"))  # fmt: skip


def broad(*, served_: bool) -> Any:
    probe = tag("auth-scope-broad", requirement="AUTH-23", broad="calc:admin")
    if served_:
        return served("tools/call", authorization="Bearer broad-scope-token", probe=probe)
    return refused("tools/call", authorization="Bearer broad-scope-token", status=403,
                   challenge=insufficient("calc:use calc:audit"), probe=probe)  # fmt: skip


def test_a_call_lacking_the_tools_scopes_that_is_refused_passes_auth_22(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-22)."""
    verdict = judge(log_of(control(), lacking(), control()), spec, LACKING)
    assert verdict.outcome is Outcome.PASSED and "got HTTP 403" in verdict.reason


def test_a_call_lacking_the_tools_scopes_that_is_performed_fails_auth_22(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-22): the operation ran without its scope."""
    performed = served("tools/call", authorization="Bearer x", probe=tag("auth-scope-lacking", requirement="AUTH-22"))
    verdict = judge(log_of(refused(), control(), performed), spec, LACKING)
    assert verdict.outcome is Outcome.FAILED and "was performed (HTTP 200, a result)" in verdict.reason


def test_scope_checks_are_not_verified_without_scope_probes_or_served_controls(spec: SpecSet) -> None:
    """Tool-defined: no mapping, or a control the target refused too, establishes nothing."""
    for check in (LACKING, CHALLENGE, BROAD):
        verdict = judge(log_of(refused(), served()), spec, check)
        assert verdict.outcome is Outcome.NOT_VERIFIED, check
    refused_control = refused("tools/call", authorization="Bearer all", status=403, probe=tag("auth-scope-control"))
    verdict = judge(log_of(refused_control, lacking(), control()), spec, LACKING)
    assert verdict.outcome is Outcome.NOT_VERIFIED and "not attributable" in verdict.reason


def test_one_challenge_naming_every_missing_scope_passes_auth_15(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-15, SHOULD)."""
    assert judge(log_of(control(), lacking(), control()), spec, CHALLENGE).outcome is Outcome.PASSED
    incremental = judge(log_of(control(), lacking(scope="calc:use"), control()), spec, CHALLENGE)
    assert incremental.outcome is Outcome.FAILED and "not calc:audit" in incremental.reason
    not_a_challenge = judge(log_of(control(), lacking(status=401), control()), spec, CHALLENGE)
    assert not_a_challenge.outcome is Outcome.NOT_VERIFIED and "no 403 scope challenge" in not_a_challenge.reason


def test_a_broad_scope_serves_what_it_implies_auth_23(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-23): served passes, refused between served controls fails."""
    protected = refused()  # an anonymous request got 401: authorization is in use
    assert judge(log_of(protected, control(), broad(served_=True), control()), spec, BROAD).outcome is Outcome.PASSED
    verdict = judge(log_of(control(), broad(served_=False), control()), spec, BROAD)
    assert verdict.outcome is Outcome.FAILED and "which implies calc:use calc:audit, got HTTP 403" in verdict.reason


def test_scope_checks_do_not_apply_without_authorization(spec: SpecSet) -> None:
    """Spec-mandated: authorization is optional."""
    assert judge(log_of(served(authorization=None)), spec, BROAD).outcome is Outcome.NOT_APPLICABLE


ROUTED = "tokens_lacking_a_scope_cannot_borrow_another_tools_name"


def routed(*, performed: bool) -> Any:
    probe = tag("auth-scope-header-routed", requirement="AUTH-26", mcp_name="list_notes", invalid=True)
    if performed:
        return served("tools/call", authorization="Bearer lacking", probe=probe)
    return refused("tools/call", authorization="Bearer lacking", status=403, challenge=insufficient("calc:use"),
                   probe=probe)  # fmt: skip


def test_a_body_tool_refused_under_another_tools_name_passes_auth_26(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-26): authorization follows the body, not Mcp-Name."""
    verdict = judge(log_of(control(), routed(performed=False), control()), spec, ROUTED)
    assert verdict.outcome is Outcome.PASSED and "under Mcp-Name list_notes, got HTTP 403" in verdict.reason


def test_a_body_tool_performed_under_another_tools_name_fails_auth_26(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-26): a gateway that authorizes on the header lets the body tool run."""
    verdict = judge(log_of(refused(), control(), routed(performed=True)), spec, ROUTED)
    assert verdict.outcome is Outcome.FAILED and "authorization followed the header" in verdict.reason


def test_auth_26_is_not_verified_without_the_probe(spec: SpecSet) -> None:
    """Tool-defined."""
    verdict = judge(log_of(control(), lacking(), control()), spec, ROUTED)
    assert verdict.outcome is Outcome.NOT_VERIFIED and "Mcp-Name" in verdict.reason
