"""Whether a capture met an MCP peer (mcp_assay.recording.presence), on hand-built exchanges.

Tool-defined (issue 18, "establish the peer before judging it"): a session where a peer answered is
judged; one where none did is not, and the reason names what happened.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from mcp_assay.recording.presence import START_FAILED, UNREACHABLE, PeerPresence
from mcp_assay.vocabulary.verdicts import Side
from mcp_assay.wire.model import Ending, EndReason, Exchange, HttpExchange, Observation, ProcessExit
from tests.factories import URL, error_body, http, request_body, result_body, stdio, tick

PING = request_body("ping")


def presence(*items: Exchange) -> PeerPresence:
    seen = PeerPresence()
    for item in items:
        seen.see(item)
    return seen


def observation(kind: str, **data: object) -> Observation:
    return Observation(id=f"o{tick()}", time=tick(), kind=kind, data=dict(data))


def exit_(code: int | None) -> ProcessExit:
    return ProcessExit(id="x1", connection="stdio:1", time=tick(), code=code)


def unanswered(detail: str) -> HttpExchange:
    exchange = http(PING)
    return dataclasses.replace(
        exchange, response=None, ending=Ending(reason=EndReason.ERROR, time=tick(), detail=detail)
    )


def stderr(lines: Iterable[str]) -> list[Observation]:
    return [observation("stderr", text=line) for line in lines]


# -- stdio --------------------------------------------------------------------------------------------
def test_a_tap_whose_server_wrote_a_line_is_judged() -> None:
    seen = presence(stdio(Side.CLIENT, PING), stdio(Side.SERVER, result_body({})), exit_(0))
    assert seen.unjudged("tap") is None
    assert seen.exit_note() == (
        "the server exited with code 0; the tap ended with the same status, as the client would have seen without "
        "it (the verdict's exit code is this report's own)"
    )


def test_a_server_that_exits_before_a_line_is_not_judged_with_its_code_and_last_stderr_lines() -> None:
    seen = presence(stdio(Side.CLIENT, PING), *stderr(["one", "  two  ", "", "three", "four"]), exit_(1))
    assert seen.unjudged("tap") == (
        "the server exited with code 1 before it answered anything (the client sent 1 line(s)); its stderr ended: "
        "two | three | four"
    )


def test_a_server_killed_by_a_signal_is_named_by_the_signal() -> None:
    assert presence(exit_(-9)).unjudged("tap") == (
        "the server was killed by SIGKILL before it answered anything (the client sent nothing)"
    )


def test_an_answer_mcp_assay_made_up_is_not_the_servers() -> None:
    injected = stdio(Side.SERVER, result_body({}), probe={"name": "version", "injected": True})
    assert presence(injected, exit_(0)).unjudged("tap") is not None


def test_a_command_that_could_not_start_says_why() -> None:
    seen = presence(observation(START_FAILED, command="nosuch --flag", error="command not found"))
    assert seen.unjudged("tap") == "the server command could not be started (nosuch --flag: command not found)"


# -- http ---------------------------------------------------------------------------------------------
def test_a_json_rpc_answer_an_accepted_notification_or_a_challenge_is_an_mcp_server() -> None:
    assert presence(http(PING, result_body({}))).unjudged("proxy") is None
    assert presence(http(PING, error_body(-32600), status=400)).unjudged("proxy") is None
    assert presence(http(PING, status=202)).unjudged("proxy") is None
    assert presence(http(PING, status=401)).unjudged("proxy") is None


def test_answers_without_json_rpc_are_named_with_the_usual_endpoint() -> None:
    page = http(PING, status=404)
    seen = presence(dataclasses.replace(page, response=dataclasses.replace(page.response, reason="Not Found")), page)
    assert seen.unjudged("proxy") == (
        f"{URL} answered 2 MCP request(s), never in JSON-RPC: 404 × 1, 404 Not Found × 1 (MCP endpoints are usually "
        "at /mcp)"
    )
    assert (
        presence(http(PING, status=502)).unjudged("proxy")
        == f"{URL} answered 1 MCP request(s), never in JSON-RPC: 502 × 1"
    )


def test_an_upstream_that_refused_every_connection_is_named() -> None:
    refused = [observation(UNREACHABLE, address="127.0.0.1:9", error="connection refused") for _ in range(3)]
    assert presence(*refused).unjudged("proxy") == (
        "the upstream 127.0.0.1:9 never answered (3 connection attempt(s): connection refused)"
    )
    assert presence(*refused, http(PING, result_body({}))).unjudged("proxy") is None


def test_requests_that_ended_without_an_answer_say_how() -> None:
    assert presence(unanswered("Connection refused")).unjudged("proxy") == (
        f"the upstream never answered: 1 MCP request(s) to {URL} ended without an answer (Connection refused)"
    )


def test_a_proxy_without_traffic_is_not_judged() -> None:
    assert presence().unjudged("proxy") == "no MCP traffic passed through the proxy (no client sent an MCP request)"


def test_an_injected_http_answer_is_not_the_servers() -> None:
    injected = http(PING, result_body({}), probe={"name": "version", "injected": True})
    assert presence(injected).unjudged("proxy") is not None
