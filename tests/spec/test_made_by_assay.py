"""The engine keeps mcp-assay's own part in the traffic apart from the peers', in one place.

An answer mcp-assay injected is never judged as the server's (server-side checks do not see the
exchange at all; a check of both sides sees only the client's request in it); a request
mcp-assay sent is never held against the client while clients are judged. A verdict says where
its evidence came from: observed (``passive``), probed (``active``) or ``injected``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mcp_assay.cases import Case, methods
from mcp_assay.spec import SpecSet
from mcp_assay.spec.checks import REGISTRY, Every, Finding, failed, log_check, message_check, passed
from mcp_assay.spec.context import ANSWERED_BY_ASSAY, SENT_BY_ASSAY, Context
from mcp_assay.spec.engine import Scope, evaluate
from mcp_assay.vocabulary.verdicts import Level, Outcome, Side, Source, Verdict
from mcp_assay.wire.jsonrpc import Kind, Message
from mcp_assay.wire.model import Probe
from tests.factories import error_body, http, legacy_call, legacy_session, log_of, modern_call, request_body

SCRATCH = Every("a scratch check of this test reads everything")

TOOLS = {"tools": [], "ttlMs": 0, "cacheScope": "private"}
INJECTED = Probe(case=Case(name="inject-version-refusal", family="inject-version", registered=False), injected=True)
PROBE = Probe.of(methods.UNKNOWN_METHOD, invalid=False)


@pytest.fixture()
def scratch_checks() -> Iterator[None]:
    before = set(REGISTRY)
    yield
    for name in set(REGISTRY) - before:
        del REGISTRY[name]


def refused_on_the_servers_behalf() -> object:
    body = request_body("tools/list", 5)
    return http(body, error_body(-32022, "nope", 5, {"supported": [], "requested": "x"}), status=400, probe=INJECTED)


def verdict_of(spec: SpecSet, log: object, name: str, scope: Scope | None = None) -> Verdict:
    (verdict,) = evaluate(log, spec, checks=[REGISTRY[name]], scope=scope)  # type: ignore[arg-type]
    return verdict


def test_a_server_message_check_never_judges_an_injected_answer(spec: SpecSet, scratch_checks: None) -> None:
    """Tool-defined: the -32022 mcp-assay made up is out of the server's checks, whatever they would say."""

    @message_check(
        requirements="RPC-07", level=Level.MUST, subject="error responses", kinds={Kind.ERROR}, methods=SCRATCH
    )
    def scratch_server_errors(message: Message, ctx: Context) -> Finding:
        return failed(message, "every error is wrong")

    alone = verdict_of(spec, log_of(refused_on_the_servers_behalf()), "scratch_server_errors")
    assert alone.outcome is Outcome.NOT_APPLICABLE and ANSWERED_BY_ASSAY in alone.reason
    served = http(request_body("tools/list", 1), error_body(-32602, "bad", 1), status=400)
    mixed = verdict_of(spec, log_of(refused_on_the_servers_behalf(), served), "scratch_server_errors")
    assert mixed.outcome is Outcome.FAILED and mixed.violations == 1 and mixed.source is Source.PASSIVE


def test_a_server_log_check_finding_about_an_injected_exchange_is_dropped(spec: SpecSet, scratch_checks: None) -> None:
    """Tool-defined: log checks see the whole log; the engine drops what they say about mcp-assay's answers."""

    @log_check(requirements="RPC-05", level=Level.MUST, subject="requests", follows=SCRATCH)
    def scratch_server_log(ctx: Context) -> Iterator[Finding]:
        for message in ctx.log.messages():
            yield failed(message, "blamed")

    verdict = verdict_of(spec, log_of(refused_on_the_servers_behalf()), "scratch_server_log")
    assert verdict.outcome is not Outcome.FAILED


def test_the_clients_request_in_an_injected_exchange_is_still_the_clients(spec: SpecSet, scratch_checks: None) -> None:
    """Tool-defined: the client's reaction is judged like any traffic, and the verdict says it was provoked."""

    @message_check(
        requirements="VER-01", level=Level.MUST, subject="client requests", kinds={Kind.REQUEST}, methods=SCRATCH
    )
    def scratch_client_requests(message: Message, ctx: Context) -> Finding:
        return passed(message)

    verdict = verdict_of(spec, log_of(refused_on_the_servers_behalf()), "scratch_client_requests")
    assert verdict.outcome is Outcome.PASSED and verdict.source is Source.INJECTED
    plain = verdict_of(
        spec, log_of(refused_on_the_servers_behalf(), modern_call("tools/list", {}, TOOLS)), "scratch_client_requests"
    )
    assert plain.source is Source.PASSIVE  # observed evidence too: not only the reactions


def test_a_probe_is_never_held_against_the_client_unless_a_suite_judges_only_the_server(
    spec: SpecSet, scratch_checks: None
) -> None:
    """Tool-defined: the proxy's server probes are mcp-assay's requests, not the client's."""

    @message_check(
        requirements="VER-01", level=Level.MUST, subject="client requests", kinds={Kind.REQUEST}, methods=SCRATCH
    )
    def scratch_client_blame(message: Message, ctx: Context) -> Finding:
        return failed(message, "the client did this")

    probe = modern_call("tools/list", {}, TOOLS, probe=PROBE)
    verdict = verdict_of(spec, log_of(probe), "scratch_client_blame")
    assert verdict.outcome is Outcome.NOT_VERIFIED and verdict.violations == 0  # no request of the client at all
    unanswered = http(request_body("tools/list", 3), status=202, probe={"name": "unknown-method", "family": "methods"})
    alone = verdict_of(spec, log_of(unanswered), "scratch_client_blame")
    assert alone.outcome is Outcome.NOT_APPLICABLE and alone.reason == SENT_BY_ASSAY
    revision = spec.require("2026-07-28")
    suite = Scope(revisions=(revision,), sides=frozenset({Side.SERVER, Side.BOTH}), sides_reason="the client is us")
    assert verdict_of(spec, log_of(probe), "scratch_client_blame", suite).outcome is Outcome.NOT_APPLICABLE


def test_what_a_probe_established_about_the_server_is_probed(spec: SpecSet, scratch_checks: None) -> None:
    """Tool-defined: a server-side verdict resting on a probe says active."""

    @message_check(requirements="RES-01", level=Level.MUST, subject="results", kinds={Kind.RESULT}, methods=SCRATCH)
    def scratch_results(message: Message, ctx: Context) -> Finding:
        return passed(message)

    log = log_of(modern_call("tools/list", {}, TOOLS), modern_call("tools/list", {}, TOOLS, probe=PROBE, ident=2))
    assert verdict_of(spec, log, "scratch_results").source is Source.ACTIVE


def test_an_injected_404_ends_no_session_on_the_server(spec: SpecSet) -> None:
    """Tool-defined (HS-21 is the server's): mcp-assay's 404 is no evidence that the server ended the session,
    so the server serving that session afterwards is not a failure."""
    expired = legacy_call(
        "tools/list", None, error_body(-32600, "Session not found", 3), ident=3, status=404,
        probe={"name": "inject-session-expiry", "injected": True},
    )  # fmt: skip
    still = legacy_call("tools/list", None, {"tools": []}, ident=4)
    verdict = verdict_of(spec, log_of(legacy_session(), expired, still), "ended_sessions_answer_404")
    assert verdict.outcome is not Outcome.FAILED
    reaction = verdict_of(spec, log_of(legacy_session(), expired, still), "clients_reinitialize_after_a_session_404")
    assert reaction.outcome is Outcome.FAILED and reaction.source is Source.INJECTED
    assert "kept using session 'sess-1'" in reaction.reason
