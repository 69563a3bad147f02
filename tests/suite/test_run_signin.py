"""A run given no credential against a server that answers 401: it signs itself in, or stops naming the step that
failed (with --without-token: goes on with what needs no token). The target is the scripted conformant server
behind a JWT gate (httpx.MockTransport); the authorization server is the real stub on loopback, which the gate
trusts."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest

from mcp_assay.recording.records import read_recording
from mcp_assay.report.model import Report
from mcp_assay.spec import SpecSet
from mcp_assay.suite.config import SuiteConfig
from mcp_assay.suite.events import Event, RevisionSelected, RunFinished, RunStarted, SignInStep
from mcp_assay.suite.oauth import Line
from mcp_assay.suite.runner import arun, judge_suite_log
from mcp_assay.suite.stub.keys import SigningKey
from mcp_assay.suite.stub.policy import StubPolicy
from mcp_assay.suite.stub.server import StubServer
from mcp_assay.vocabulary.verdicts import Outcome
from tests.peers.broken_suite.core import Server
from tests.peers.process import free_port
from tests.suite.scripted import Handler, respond

URL = "http://127.0.0.1:9/mcp"
PRM_URL = "http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp"
CC = ("authorization_code", "client_credentials", "refresh_token")
ARGS: dict[str, Any] = {"tool_args": {"echo": {"message": "hi"}}, "prompt_args": {"greet": {"who": "x"}}}
NO_CREDENTIAL = {"AUTH-01", "AUTH-02", "AUTH-04", "AUTH-05", "AUTH-09", "AUTH-10", "AUTH-11", "AUTH-29"}
"""What a run without any token still establishes about a correctly protected server."""


@pytest.fixture(scope="module")
def key() -> SigningKey:
    return SigningKey.generate()


@contextmanager
def stub(key: SigningKey, policy: StubPolicy) -> Iterator[StubServer]:
    port = free_port()
    server = StubServer("127.0.0.1", port, f"http://127.0.0.1:{port}", key, SigningKey.generate(), ["mcp"],
                        policy=policy)  # fmt: skip
    try:
        yield server
    finally:
        server.close()


def gate(key: SigningKey, issuer: str, *, accept: bool = True, metadata: str = PRM_URL) -> Handler:
    """The scripted server behind a bearer gate that takes the stub's tokens for this resource (or none at all)."""
    inner = respond(Server())
    public = jwt.PyJWK(key.jwk()).key

    async def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/.well-known/oauth-protected-resource/mcp":
            return httpx.Response(200, json={"resource": URL, "authorization_servers": [issuer]})
        if request.url.path.startswith("/.well-known/"):
            return httpx.Response(404, json={"error": "not_found"})
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        try:
            jwt.decode(token, public, algorithms=["RS256"], audience=URL, issuer=issuer)
            valid = accept and scheme.lower() == "bearer"
        except jwt.PyJWTError:
            valid = False
        if not valid:
            error = ', error="invalid_token"' if token else ""
            challenge = f'Bearer resource_metadata="{metadata}", scope="mcp"{error}'
            return httpx.Response(401, headers={"www-authenticate": challenge}, json={"error": "unauthorized"})
        return await inner(request)

    return handler


class Split(httpx.AsyncBaseTransport):
    """The target (127.0.0.1:9) is scripted; everything else, the stub, is reached over the network."""

    def __init__(self, handler: Handler) -> None:
        self.target = httpx.MockTransport(handler)
        self.network = httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.port == 9:
            return await self.target.handle_async_request(request)
        return await self.network.handle_async_request(request)

    async def aclose(self) -> None:
        await self.network.aclose()


def run(spec: SpecSet, handler: Handler, **settings: Any) -> tuple[Report, list[Event]]:
    events: list[Event] = []
    config = SuiteConfig(url=URL, **{"timeout": 3.0, "stream_budget_ms": 300, **ARGS, **settings})
    report = asyncio.run(arun(config, spec, events.append, mock=Split(handler)))
    return report, events


def by_requirement(report: Report) -> dict[str, set[Outcome]]:
    """The outcomes each requirement got, in whichever revisions it applies to."""
    outcomes: dict[str, set[Outcome]] = {}
    for verdict in report.results:
        if verdict.outcome is Outcome.NOT_APPLICABLE:
            continue
        for requirement in verdict.requirements:
            outcomes.setdefault(requirement, set()).add(verdict.outcome)
    return outcomes


def lines(events: list[Event]) -> list[tuple[Line, str]]:
    return [(event.kind, event.text) for event in events if isinstance(event, SignInStep)]


def test_a_run_without_a_token_signs_in_and_is_judged_like_a_token_run(spec: SpecSet, key: SigningKey) -> None:
    """Tool-defined (issue: a server behind OAuth, no token given): the obtained token becomes the run's own, every
    family runs, and neither it nor any other secret reaches the report."""
    with stub(key, StubPolicy(grant_types=CC)) as server:
        report, events = run(spec, gate(key, server.grants.issuer))
    assert report.tested == ["2026-07-28", "2025-11-25"] and "per server/discover" in report.revision_note
    outcomes = by_requirement(report)
    for requirement in ("VER-06", "TOOL-02", "AUTH-09", "AUTH-13", "AUTH-20", "AUTH-28", *NO_CREDENTIAL):
        assert outcomes[requirement] == {Outcome.PASSED}, (requirement, outcomes[requirement])
    assert any(note.startswith("authorization: the run signed in by itself: client_credentials") for note in
               report.notes)  # fmt: skip
    said = lines(events)
    assert said[0] == (Line.START, "endpoint returned 401; discovering OAuth configuration")
    assert said[-1] == (Line.DONE, f"obtained an access token for resource {URL}")
    assert isinstance(events[-1], RunFinished) and events[-1].unjudged is None
    text = json.dumps(report.to_json())
    assert "eyJ" not in text and '"token in header authorization (Bearer)"' in text


def test_a_failed_sign_in_stops_the_run_with_nothing_judged_and_names_the_step(spec: SpecSet, key: SigningKey) -> None:
    """Tool-defined (issue 18): no token, no judgement: no case runs past the challenge, the report is not judged
    (exit 3) and says at which step the sign-in stopped, and how to run the cases that need no token."""
    with stub(key, StubPolicy(grant_types=CC, metadata_issuer="https://somewhere-else.example")) as server:
        report, events = run(spec, gate(key, server.grants.issuer))
    assert isinstance(events[-1], RunFinished) and events[-1].unjudged is not None
    assert report.unjudged is not None and report.exit_code() == 3
    assert report.unjudged.startswith("the OAuth sign-in failed at authorization server metadata: refused: ")
    assert report.unjudged.endswith("(--without-token runs the cases that need no token)")
    assert not [item for item in report.results if item.outcome in (Outcome.PASSED, Outcome.FAILED)]
    assert not [event for event in events if isinstance(event, RevisionSelected)]
    assert lines(events)[-1] == (Line.FAILED, lines(events)[-1][1])
    assert "goes on without a token" not in lines(events)[-1][1]


def test_a_failed_sign_in_still_judges_what_needs_no_token_and_names_the_step(spec: SpecSet, key: SigningKey) -> None:
    """Tool-defined (--without-token): the challenge and the metadata are judged; every other case is not verified
    with the step that failed and why; the run is not a target error (exit by verdicts)."""
    with stub(key, StubPolicy(grant_types=CC, metadata_issuer="https://somewhere-else.example")) as server:
        report, events = run(spec, gate(key, server.grants.issuer), without_token=True)
    outcomes = by_requirement(report)
    for requirement in NO_CREDENTIAL:
        assert outcomes[requirement] == {Outcome.PASSED}, (requirement, outcomes[requirement])
    step = "authorization server metadata: refused: "
    for requirement in ("VER-06", "TOOL-02", "AUTH-16", "AUTH-13"):
        verdicts = [item for item in report.results if requirement in item.requirements]
        assert verdicts and all(item.outcome is Outcome.NOT_VERIFIED for item in verdicts), requirement
        assert all(step in item.reason and "somewhere-else.example" in item.reason for item in verdicts), requirement
    assert not [item for item in report.results if item.outcome is Outcome.FAILED]
    assert report.revision == "2026-07-28" and "the newest supported revision" in report.revision_note
    assert "only the cases that need no credential were run" in report.revision_note
    assert isinstance(events[-1], RunFinished) and events[-1].unjudged is None and report.exit_code() == 0
    assert lines(events)[-1][0] is Line.FAILED and lines(events)[-1][1].endswith(
        "; the run goes on without a token (--without-token)"
    )


def test_a_recording_of_a_run_without_a_token_is_judged_again_to_the_same_verdicts(
    spec: SpecSet, key: SigningKey, tmp_path: Path
) -> None:
    """Tool-defined: the assumed revision and the skips are in the recording, so `validate` agrees with the run;
    the recording holds no token."""
    record = tmp_path / "run.jsonl"
    with stub(key, StubPolicy()) as server:
        report, _ = run(spec, gate(key, server.grants.issuer), record=str(record), interactive=False,
                        without_token=True)  # fmt: skip
    again, _ = judge_suite_log(read_recording(record).log, spec)
    assert {(item.check, item.outcome, item.reason) for item in again} == {
        (item.check, item.outcome, item.reason) for item in report.results
    }
    assert "--no-interactive forbids it" in report.revision_note
    assert "eyJ" not in record.read_text(encoding="utf-8")


def test_the_default_version_is_the_revision_assumed_when_the_server_cannot_be_asked(
    spec: SpecSet, key: SigningKey
) -> None:
    """Tool-defined (--default-version): with no token the server cannot say which revisions it offers."""
    with stub(key, StubPolicy(grant_types=CC, registration=False)) as server:
        report, _ = run(spec, gate(key, server.grants.issuer), default_version="2025-11-25", without_token=True)
    assert report.revision == "2025-11-25" and "--default-version" in report.revision_note
    assert "choosing a grant: no --client-id was given and the authorization server offers no dynamic registration" in (
        report.revision_note
    )
    assert by_requirement(report)["AUTH-10"] == {Outcome.PASSED}


def test_auth_mode_none_signs_nothing_in_and_still_runs_the_no_credential_cases(spec: SpecSet, key: SigningKey) -> None:
    """Tool-defined: --auth-mode none is a run without credentials on purpose; nobody is asked for a token."""
    with stub(key, StubPolicy(grant_types=CC)) as server:
        report, events = run(spec, gate(key, server.grants.issuer), auth_mode="none")
        assert not server.notes()
    assert not lines(events)
    assert "the run holds no credential (the server refused the credentials: HTTP 401" in report.revision_note
    assert by_requirement(report)["AUTH-11"] == {Outcome.PASSED}


def test_a_token_the_server_then_refuses_is_said_to_be_the_sign_ins(spec: SpecSet, key: SigningKey) -> None:
    """Tool-defined: the sign-in worked but the target does not take its token (it trusts another issuer)."""
    with stub(key, StubPolicy(grant_types=CC)) as server:
        report, _ = run(spec, gate(key, server.grants.issuer, accept=False))
    assert "the token the OAuth sign-in obtained was refused" in report.revision_note
    assert by_requirement(report)["AUTH-01"] == {Outcome.PASSED}


def test_a_configured_secret_is_scrubbed_like_a_credential(spec: SpecSet, key: SigningKey) -> None:
    """Tool-defined (--secret): a value the user names never reaches the report or a printed step, wherever it
    appears (here in the endpoint's query and in the metadata URL the challenge names)."""
    with stub(key, StubPolicy(grant_types=CC)) as server:
        handler = gate(key, server.grants.issuer, metadata=PRM_URL + "?tenant=hush-tenant-4471")
        events: list[Event] = []
        settings = {"url": URL + "?tenant=hush-tenant-4471", "secrets": ("hush-tenant-4471",), "timeout": 3.0,
                    "stream_budget_ms": 300, "only": "AUTH-0"}  # fmt: skip
        report = asyncio.run(arun(SuiteConfig(**settings), spec, events.append, mock=Split(handler)))
    assert "hush-tenant-4471" not in json.dumps(report.to_json())
    printed = [str(event) for event in events if isinstance(event, SignInStep | RunStarted | RevisionSelected)]
    assert "hush-tenant-4471" not in "\n".join(printed)
    assert (Line.STEP, f"found protected-resource metadata at {PRM_URL}?tenant=[REDACTED]") in lines(events)


def test_an_unreachable_server_is_reported_against_the_default_version(spec: SpecSet) -> None:
    """Tool-defined (--default-version): what could not be established is listed for the assumed revision (its
    handshake items, not 2026's discover items); without it, for the newest."""

    async def refused(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    def unverified(report: Report) -> set[str]:
        return {req for item in report.results if item.outcome is Outcome.NOT_VERIFIED for req in item.requirements}

    newest, _ = run(spec, refused, timeout=1.0)
    assumed, events = run(spec, refused, timeout=1.0, default_version="2025-11-25")
    assert "VER-06" in unverified(newest) and "HS-04" not in unverified(newest)
    assert "HS-04" in unverified(assumed) and "VER-06" not in unverified(assumed)
    assert isinstance(events[-1], RunFinished) and events[-1].unjudged is not None
