"""The one line a run that judged nothing ends with: each way a target can be absent, told apart.

Tool-defined (issue 18). Scripted servers behind ``httpx.MockTransport`` and real processes: a
connect that times out, a command that is not a program, a run forced onto a revision that never
got one usable answer, a run whose only cases were blocked; and the answers that count as usable.
The command-line rows (nothing listening, wrong path, cut bodies ...) are in
``tests/e2e/test_not_judged_e2e.py``.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcp_assay.spec import SpecSet
from mcp_assay.suite.absence import usable_answer
from mcp_assay.suite.config import SuiteConfig
from mcp_assay.suite.events import Event, RunFinished
from mcp_assay.suite.runner import arun
from mcp_assay.suite.transports.stdio import StdioTransport
from mcp_assay.vocabulary.errors import Unreachable
from mcp_assay.vocabulary.verdicts import Side
from mcp_assay.wire.model import Headers, HttpExchange, HttpRequest, HttpResponse, StdioLine
from tests.peers.broken_suite.core import Server
from tests.suite.scripted import Handler, mock, respond

URL = "http://127.0.0.1:9/mcp"
ARGS: dict[str, Any] = {"tool_args": {"echo": {"message": "hi"}}, "prompt_args": {"greet": {"who": "x"}}}


def unjudged(spec: SpecSet, handler: Handler, **settings: Any) -> str | None:
    events: list[Event] = []
    config = SuiteConfig(url=URL, **{"timeout": 1.0, "stream_budget_ms": 300, **ARGS, **settings})
    report = asyncio.run(arun(config, spec, events.append, mock=mock(handler)))
    finished = events[-1]
    assert isinstance(finished, RunFinished)
    assert report.unjudged == finished.unjudged
    assert finished.unjudged is None or report.exit_code() == 3
    return finished.unjudged


def test_a_connect_that_times_out_is_not_called_a_silent_server(spec: SpecSet) -> None:
    """Tool-defined: the connection was never accepted, which is not a server that took the request and kept quiet."""

    async def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectTimeout("timed out", request=request)

    assert unjudged(spec, handler) == (
        "127.0.0.1:9 did not accept a connection within 1 s — is the address right, and does nothing (a firewall) "
        "drop the connection?"
    )


def test_a_run_forced_onto_a_revision_never_answered_usably_is_not_judged(spec: SpecSet) -> None:
    """Tool-defined: --spec-version runs the cases whatever selection heard; a path that answers 404 to all of them
    is still a wrong path, not a wall of findings."""

    async def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(404, headers={"content-type": "text/plain"}, text="Not Found")

    why = unjudged(spec, handler, spec_version="2026-07-28", only="tools")
    assert why == (
        f"{URL} answered HTTP 404 (Not Found): the server is there, but no MCP endpoint at /mcp — is its MCP "
        "endpoint mounted at another path?"
    )


def test_a_run_whose_only_cases_were_blocked_says_what_blocked_them(spec: SpecSet) -> None:
    """Tool-defined: a discover without capabilities blocks the tools cases; --only tools then verifies nothing,
    so no case ran: the line says why instead of a bare "nothing verified"."""
    inner = respond(Server())

    async def handler(request: httpx.Request) -> httpx.Response:
        response = await inner(request)
        body = json.loads(request.content) if request.content else None
        if isinstance(body, dict) and body.get("method") == "server/discover" and response.content:
            answer = json.loads(response.content)
            answer.get("result", {}).pop("capabilities", None)
            return httpx.Response(response.status_code, headers={"content-type": "application/json"}, json=answer)
        return response

    why = unjudged(spec, handler, spec_version="2026-07-28", only="TOOL-02")
    assert why == (
        "nothing was tested: the server's capabilities are unknown (server/discover gave none): no tools case could run"
    )


def test_cases_that_ran_but_verified_nothing_stay_nothing_verified(spec: SpecSet) -> None:
    """Tool-defined: --only HTTP-19 with no tool to call sends its cases and establishes nothing — there is a server,
    so the run is not "not judged"; its own verdict, "nothing verified", exits 3."""
    events: list[Event] = []
    config = SuiteConfig(url=URL, timeout=1.0, stream_budget_ms=300, only="HTTP-19")
    report = asyncio.run(arun(config, spec, events.append, mock=mock(respond(Server()))))
    assert report.unjudged is None and report.verdict()[0] == "nothing-verified" and report.exit_code() == 3


def test_a_conformant_server_is_judged(spec: SpecSet) -> None:
    """Tool-defined: the control — usable answers and verified cases leave the run judged."""
    assert unjudged(spec, respond(Server()), only="tools") is None


@pytest.mark.parametrize(
    ("make", "said"),
    [
        ("folder", "is a folder, not a program"),
        ("no-shebang", "is not a program this system can run (Exec format error) — a script needs a #! line"),
        ("missing-file", "no such file: "),
        ("missing-folder", "the folder "),
    ],
)
def test_a_command_that_cannot_start_says_why_it_cannot(tmp_path: Path, make: str, said: str) -> None:
    """Tool-defined: what the operating system said when the program would not start, in words to act on."""
    cwd = None
    if make == "folder":
        argv = [str(tmp_path)]
    elif make == "no-shebang":
        script = tmp_path / "server"
        script.write_bytes(b"\x00\x01 not a program\n")
        os.chmod(script, 0o755)
        argv = [str(script)]
    elif make == "missing-file":
        argv = [str(tmp_path / "server.py")]
    else:
        argv, cwd = [sys.executable], str(tmp_path / "gone")
    transport = StdioTransport(argv, recorder=lambda item: None, new_id=lambda prefix: prefix, connection="p1", cwd=cwd)
    with pytest.raises(Unreachable) as raised:
        asyncio.run(transport.start())
    assert said in f"{raised.value} — {raised.value.advice}"


def _exchange(request: dict[str, Any], answer: bytes, content_type: str = "application/json") -> HttpExchange:
    sent = HttpRequest(method="POST", url=URL, headers=Headers(), body=json.dumps(request).encode(), time=1.0)
    response = HttpResponse(status=200, headers=Headers([("content-type", content_type)]), time=1.1, body=answer)
    return HttpExchange.build(id="h1", request=sent, response=response)


def test_a_usable_answer_is_a_response_whose_id_answers_the_request() -> None:
    """Tool-defined: a result or an error with the request's id counts; another id, HTML or a cut body does not."""
    request = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    assert usable_answer([_exchange(request, b'{"jsonrpc":"2.0","id":1,"result":{}}')])
    assert usable_answer([_exchange(request, b'{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"x"}}')])
    assert not usable_answer([_exchange(request, b'{"jsonrpc":"2.0","id":"1","result":{}}')])
    assert not usable_answer([_exchange(request, b'{"jsonrpc":"2.0","id":1,"res')])
    assert not usable_answer([_exchange(request, b"<html></html>", "text/html")])
    line = {"jsonrpc": "2.0", "id": 7, "method": "ping"}
    asked = StdioLine.build(id="s1", connection="p1", sender=Side.CLIENT, time=1.0, raw=json.dumps(line).encode())
    answered = StdioLine.build(
        id="s2", connection="p1", sender=Side.SERVER, time=1.1, raw=b'{"jsonrpc":"2.0","id":7,"result":{}}'
    )
    elsewhere = StdioLine.build(
        id="s3", connection="p2", sender=Side.SERVER, time=1.1, raw=b'{"jsonrpc":"2.0","id":7,"result":{}}'
    )
    assert usable_answer([asked, answered]) and not usable_answer([asked, elsewhere])
