"""AUTH-16..19: stub tokens changed in one property, judged between two served stub controls."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_assay.spec import SpecSet
from mcp_assay.vocabulary.verdicts import Outcome
from mcp_assay.wire.model import Observation
from tests.factories import judge, log_of
from tests.spec.rules.test_auth import document, refused, served

CHECKS = {
    "AUTH-16": "tokens_for_another_audience_are_refused",
    "AUTH-17": "tokens_from_a_foreign_issuer_are_refused",
    "AUTH-18": "tokens_with_an_untrusted_signature_are_refused",
    "AUTH-19": "tokens_outside_their_lifetime_are_refused",
}
VARIANTS = {"AUTH-16": "aud elsewhere", "AUTH-17": "iss elsewhere", "AUTH-18": "alg none", "AUTH-19": "exp passed"}


def stub_control() -> Any:
    return served(probe={"name": "auth-stub-control", "invalid": False, "credential": "stub"})


def stub_probe(requirement: str, name: str = "variant") -> dict[str, Any]:
    return {
        "name": f"auth-stub-{name}", "family": "tokens", "invalid": True, "credential": "invalid",
        "variant": VARIANTS[requirement], "requirement": requirement, "control": "auth-stub-control",
    }  # fmt: skip


@pytest.mark.parametrize("requirement", sorted(CHECKS))
def test_a_refused_variant_between_served_controls_passes(spec: SpecSet, requirement: str) -> None:
    """Spec-mandated (AUTH-16..19): the variant differs from the served control in one property only."""
    log = log_of(stub_control(), refused(authorization="Bearer x", probe=stub_probe(requirement)), stub_control())
    verdict = judge(log, spec, CHECKS[requirement])
    assert verdict.outcome is Outcome.PASSED, verdict.reason
    assert f"tools/list with a stub token ({VARIANTS[requirement]}) got HTTP 401" in verdict.reason


@pytest.mark.parametrize("requirement", sorted(CHECKS))
def test_a_served_variant_fails(spec: SpecSet, requirement: str) -> None:
    """Spec-mandated (AUTH-16..19): being served with a result is accepting the token."""
    log = log_of(document(), stub_control(), served(authorization="Bearer x", probe=stub_probe(requirement)))
    verdict = judge(log, spec, CHECKS[requirement])
    assert verdict.outcome is Outcome.FAILED
    assert f"tools/list with a stub token ({VARIANTS[requirement]}) was served" in verdict.reason


def test_a_refusal_whose_control_was_refused_too_is_not_verified(spec: SpecSet) -> None:
    """Tool-defined: a target that refuses the stub's own control token proves nothing by refusing a variant."""
    control_refused = refused(
        authorization="Bearer stub-minted-token", probe={"name": "auth-stub-control", "credential": "stub"}
    )
    log = log_of(control_refused, refused(authorization="Bearer x", probe=stub_probe("AUTH-16")), stub_control())
    verdict = judge(log, spec, CHECKS["AUTH-16"])
    assert verdict.outcome is Outcome.NOT_VERIFIED
    assert "the control request with a valid token from the stub got HTTP 401" in verdict.reason


def test_the_run_s_own_controls_do_not_bracket_a_stub_probe(spec: SpecSet) -> None:
    """Tool-defined: only the stub's control attributes a stub-token refusal to the changed property."""
    own = served(probe={"name": "auth-control", "invalid": False, "credential": "own"})
    log = log_of(own, refused(authorization="Bearer x", probe=stub_probe("AUTH-19")), own)
    assert judge(log, spec, CHECKS["AUTH-19"]).outcome is Outcome.NOT_VERIFIED


@pytest.mark.parametrize("requirement", sorted(CHECKS))
def test_without_stub_probes_the_requirements_are_not_verified(spec: SpecSet, requirement: str) -> None:
    """Tool-defined: ordinary traffic to a protected server cannot show what it checks in a token."""
    verdict = judge(log_of(refused(), document(), served()), spec, CHECKS[requirement])
    assert verdict.outcome is Outcome.NOT_VERIFIED and "stand-in authorization server" in verdict.reason


def test_without_authorization_in_use_they_do_not_apply(spec: SpecSet) -> None:
    """Spec-mandated: authorization is optional in MCP."""
    verdict = judge(log_of(served(authorization=None)), spec, CHECKS["AUTH-17"])
    assert verdict.outcome is Outcome.NOT_APPLICABLE


def test_a_fetch_of_the_untrusted_key_set_fails_auth_18_whatever_the_answer(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-18): a token must not choose the key that verifies it, even if it was then refused."""
    jku = refused(authorization="Bearer x", probe=stub_probe("AUTH-18", "jku"))
    fetch = Observation(
        id="o-fetch", time=jku.request.time + 0.01, kind="stub-fetch",
        data={"url": "http://127.0.0.1:9411/foreign/jwks.json", "path": "/foreign/jwks.json",
              "user_agent": "python-urllib/3.12"},
    )  # fmt: skip
    log = log_of(stub_control(), jku, stub_control())
    log.add(fetch)
    verdict = judge(log, spec, CHECKS["AUTH-18"])
    assert verdict.outcome is Outcome.FAILED
    assert "the target fetched the untrusted key set a token's jku header named" in verdict.reason


def _passthrough_log(*sinks: list[str]) -> Any:
    call = served("tools/call", probe={"name": "auth-passthrough", "credential": "stub", "tool": "fetch_upstream"})
    log = log_of(refused(), call)
    for number, places in enumerate(sinks):
        log.add(Observation(id=f"o-sink-{number}", time=call.request.time + 0.1, kind="stub-sink",
                            data={"method": "GET", "path": "/sink/items/42", "tool": "fetch_upstream",
                                  "carried_token_in": places}))  # fmt: skip
    return log


def test_an_upstream_request_without_the_token_passes_auth_27(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-27)."""
    verdict = judge(_passthrough_log([]), spec, "tokens_are_not_passed_upstream")
    assert verdict.outcome is Outcome.PASSED and "carried no copy of the client's token" in verdict.reason


def test_an_upstream_request_carrying_the_token_fails_auth_27(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-27, MUST NOT): passthrough, wherever the token sits."""
    verdict = judge(_passthrough_log([], ["query", "body"]), spec, "tokens_are_not_passed_upstream")
    assert verdict.outcome is Outcome.FAILED and "carried the client's token in its query and body" in verdict.reason


def test_auth_27_needs_a_passthrough_call_and_a_sink_that_saw_it(spec: SpecSet) -> None:
    """Tool-defined: without the call, or with an upstream that is not the sink, nothing is established."""
    assert judge(log_of(refused(), served()), spec, "tokens_are_not_passed_upstream").outcome is Outcome.NOT_VERIFIED
    verdict = judge(_passthrough_log(), spec, "tokens_are_not_passed_upstream")
    assert verdict.outcome is Outcome.NOT_VERIFIED and "sink received no upstream request" in verdict.reason
