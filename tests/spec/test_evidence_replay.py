"""Replays: the request mcp-assay sent, again, as one line a shell runs as the same request.

Tool-defined (issue 19, "replays that survive copy and paste"). A request made in a 2025 session the
server opened is replayed in a fresh session of its own (the run's has ended by the time anyone
pastes it); one made with an id the server never issued, or after the session ended, is replayed as
it was, since that id is what the request tested.
"""

from __future__ import annotations

import subprocess
from typing import Any

from mcp_assay.redaction import Redactor
from mcp_assay.spec import SpecSet
from mcp_assay.spec.context import Context
from mcp_assay.spec.evidence import make_evidence
from mcp_assay.traffic import ExchangeLog
from mcp_assay.wire import HttpExchange
from tests.factories import LEGACY, http, legacy_headers, legacy_session, log_of, modern_call, request_body

PROBE: dict[str, Any] = {"name": "call", "family": "tools", "invalid": False, "intent": "ordinary request"}


def replay(exchange: HttpExchange, log: ExchangeLog, spec: SpecSet) -> str:
    return make_evidence(exchange, "", Context(log, spec), Redactor()).reproduction


def words_bash_runs(command: str) -> list[str]:
    """The arguments bash hands curl for ``command`` (curl replaced by a function that prints them)."""
    shell = "curl() { for word; do printf '%s\\0' \"$word\"; done; }; " + command
    done = subprocess.run(["bash", "-c", shell], capture_output=True, timeout=10, check=True)
    return done.stdout.decode("utf-8").split("\0")[:-1]


def test_a_request_in_a_session_the_server_opened_is_replayed_in_a_fresh_one(spec: SpecSet) -> None:
    session = legacy_session("run-session-7")
    call = http({"jsonrpc": "1.0", "id": 30, "method": "tools/list"}, status=400,
                headers=legacy_headers("run-session-7"), probe=PROBE)  # fmt: skip
    line = replay(call, log_of(session, call), spec)
    assert "\n" not in line and "run-session-7" not in line
    opening, notified, request = line.split(" && ")
    assert opening.startswith("MCP_SESSION=$(curl -sS -D - -o /dev/null -X POST")
    assert f'"protocolVersion":"{LEGACY}"' in opening and "grep -i '^mcp-session-id:'" in opening
    assert '"Mcp-Session-Id: $MCP_SESSION"' in notified and "notifications/initialized" in notified
    assert request.startswith("curl -sS -i -X POST") and '"mcp-session-id: $MCP_SESSION"' in request
    assert request.endswith("""--data-binary '{"jsonrpc": "1.0", "id": 30, "method": "tools/list"}'""")


def test_a_made_up_or_ended_session_id_is_replayed_as_it_was(spec: SpecSet) -> None:
    made_up = http(request_body("tools/list", 3, version=None), status=404,
                   headers=legacy_headers("mcp-assay-no-such-session"), probe=PROBE)  # fmt: skip
    assert replay(made_up, log_of(made_up), spec).startswith("curl ")
    assert "mcp-session-id: mcp-assay-no-such-session" in replay(made_up, log_of(made_up), spec)
    session = legacy_session("run-session-8")
    ended = http(None, status=204, method="DELETE", headers=legacy_headers("run-session-8"), probe=PROBE)
    after = http(request_body("tools/list", 4, version=None), status=404,
                 headers=legacy_headers("run-session-8"), probe=PROBE)  # fmt: skip
    line = replay(after, log_of(session, ended, after), spec)
    assert line.startswith("curl ") and "mcp-session-id: run-session-8" in line


def test_a_2026_request_is_one_plain_curl_command(spec: SpecSet) -> None:
    call = modern_call("tools/list", {}, {"tools": []}, probe=PROBE)
    line = replay(call, log_of(call), spec)
    assert line.startswith("curl -sS -i -X POST http://127.0.0.1:8000/mcp ") and " && " not in line


def test_a_body_with_line_breaks_and_controls_is_one_line_that_bash_reads_back_exactly(spec: SpecSet) -> None:
    body = '{"jsonrpc":"2.0",\n"id":1,\t"method":"tools/list","x":"\x1b[2J \u202e it\'s"}'
    call = http(None, status=400, probe=PROBE)
    call = HttpExchange.build(
        id=call.id, request=type(call.request)(method="POST", url=call.request.url, headers=call.request.headers,
                                              body=body.encode(), time=call.request.time),
        response=call.response, ending=call.ending, probe=call.probe,
    )  # fmt: skip
    line = replay(call, log_of(call), spec)
    assert "\n" not in line and "\t" not in line and "\x1b" not in line and "\u202e" not in line
    assert words_bash_runs(line)[-2:] == ["--data-binary", body]
