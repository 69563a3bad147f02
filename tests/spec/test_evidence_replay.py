"""Replays: the request mcp-assay sent, again, as one line a shell runs as the same request.

Tool-defined (issue 19, "replays that survive copy and paste"). A request made in a 2025 session the
server opened is replayed in a fresh session of its own (the run's has ended by the time anyone
pastes it); one made with an id the server never issued, or after the session ended, is replayed as
it was, since that id is what the request tested.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_assay.recording.redaction import Redactor
from mcp_assay.spec import SpecSet
from mcp_assay.spec.context import Context
from mcp_assay.spec.evidence import make_evidence
from mcp_assay.vocabulary.replays import STARTED, Replay, shell_line
from mcp_assay.vocabulary.verdicts import Side
from mcp_assay.wire.model import Exchange, HttpExchange, Observation, StdioLine
from mcp_assay.wire.traffic import ExchangeLog
from tests.factories import (
    LEGACY,
    as_probe,
    error_body,
    http,
    initialize_body,
    initialize_result,
    legacy_headers,
    legacy_session,
    log_of,
    modern_call,
    modern_headers,
    request_body,
    result_body,
    stdio,
    tick,
)

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


# -- issue 27: a replay for every finding, from every source -----------------------------------------------
def replay_data(exchange: Exchange, log: ExchangeLog, spec: SpecSet) -> Replay | None:
    return make_evidence(exchange, "", Context(log, spec), Redactor()).replay


def test_a_request_of_the_peers_own_traffic_has_a_replay_with_a_placeholder_for_its_token(spec: SpecSet) -> None:
    token = "client-secret-token-3f9a"
    body = request_body("tools/list", 5)
    call = http(body, status=400, headers={**modern_headers(body), "authorization": f"Bearer {token}"})
    evidence = make_evidence(call, "", Context(log_of(call), spec), Redactor())
    assert evidence.replay is not None and evidence.replay.probe is None
    assert token not in evidence.reproduction and "[REDACTED]" not in evidence.reproduction
    assert '-H "authorization: Bearer $MCP_ASSAY_TOKEN"' in evidence.reproduction
    assert f"authorization: Bearer {token}" in words_bash_runs(f"MCP_ASSAY_TOKEN={token}; {evidence.reproduction}")


def test_a_token_in_the_query_and_a_cookie_become_placeholders_too(spec: SpecSet) -> None:
    body = request_body("tools/list", 5)
    headers = {**modern_headers(body), "cookie": "session=abcdef123456; theme=dark"}
    call = http(body, status=200, headers=headers, url="http://127.0.0.1:8000/mcp?token=qwerty987654&x=1")
    line = replay(call, log_of(call), spec)
    assert "qwerty987654" not in line and "abcdef123456" not in line
    words = words_bash_runs(f"MCP_ASSAY_TOKEN=T1; MCP_ASSAY_COOKIE='session=S1'; {line}")
    assert "http://127.0.0.1:8000/mcp?token=T1&x=1" in words and "cookie: session=S1" in words


def test_a_credential_a_probe_made_up_is_not_taken_for_the_users_token(spec: SpecSet) -> None:
    probe = {**PROBE, "variant": "a token the server never issued"}
    body = request_body("tools/list", 5)
    call = http(body, status=401, headers={**modern_headers(body), "authorization": "Bearer forged-token-1234"},
                probe=probe)  # fmt: skip
    line = replay(call, log_of(call), spec)
    assert "Bearer [REDACTED]" in line and "MCP_ASSAY_TOKEN" not in line


def test_a_principals_token_gets_a_placeholder_of_its_own(spec: SpecSet) -> None:
    body = request_body("tools/list", 5)
    call = http(body, status=200, headers={**modern_headers(body), "authorization": "Bearer reader-token-98765"},
                probe={**PROBE, "principal": "read-only user"})  # fmt: skip
    data = replay_data(call, log_of(call), spec)
    assert data is not None and data.variables == ("MCP_ASSAY_TOKEN_READ_ONLY_USER",)
    assert '"authorization: Bearer $MCP_ASSAY_TOKEN_READ_ONLY_USER"' in shell_line(data)


def test_an_injected_answer_has_no_replay(spec: SpecSet) -> None:
    call = http(request_body("tools/list", 5), status=400, probe={**PROBE, "injected": True})
    assert replay_data(call, log_of(call), spec) is None


def _started(connection: str = "conn-1", command: str = "python server.py") -> Observation:
    return Observation(id="o-start", time=0.0, kind=STARTED, data={"command": command}, connection=connection)


def test_a_stdio_answer_is_replayed_by_its_request_after_the_handshake_its_connection_made(spec: SpecSet) -> None:
    opened = stdio(Side.CLIENT, initialize_body(LEGACY, ident=1))
    answered = stdio(Side.SERVER, result_body(initialize_result(), 1))
    notified = stdio(Side.CLIENT, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    request = stdio(Side.CLIENT, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    answer = stdio(Side.SERVER, error_body(-32603, ident=2))
    log = log_of(_started(), opened, answered, notified, request, answer)
    data = replay_data(answer, log, spec)
    assert data is not None and data.transport == "stdio" and data.command == "python server.py"
    assert data.line == '{"jsonrpc": "2.0", "id": 2, "method": "tools/list"}' and data.answer_id == "2"
    assert len(data.handshake) == 2 and '"initialize"' in data.handshake[0] and not data.modern
    line = shell_line(data)
    assert line.startswith("( out=$(mktemp) && { printf '%s\\n' ") and "| python server.py | tee" in line
    assert '"method":"ping"' in line  # the marker of the handshake era


def test_a_2026_stdio_line_has_no_handshake_and_its_marker_is_server_discover(spec: SpecSet) -> None:
    first = stdio(Side.CLIENT, request_body("server/discover", 1))
    request = stdio(Side.CLIENT, request_body("tools/list", 2))
    log = log_of(_started(), first, request)
    data = replay_data(request, log, spec)
    assert data is not None and data.modern and data.handshake == ()
    assert '"method":"server/discover"' in shell_line(data) and "mcp-assay-replay-end" in shell_line(data)


def test_a_line_that_is_not_json_says_so_and_is_not_waited_for_by_id(spec: SpecSet) -> None:
    cut = StdioLine.build(id="s-cut", connection="conn-1", sender=Side.CLIENT, time=tick(),
                          raw=b'{"jsonrpc":"2.0","id":2\n', probe=as_probe({**PROBE, "invalid": True}))  # fmt: skip
    data = replay_data(cut, log_of(_started(), cut), spec)
    assert data is not None and data.not_json and data.invalid and data.answer_id is None
    line = shell_line(data)
    assert line.startswith('( invalid_json_on_purpose=\'{"jsonrpc":"2.0","id":2\'; ')
    assert '"$invalid_json_on_purpose"' in line and "grep -Eq" not in line


def test_what_a_server_printed_unasked_is_replayed_by_the_line_before_it_or_by_starting_it(spec: SpecSet) -> None:
    banner = StdioLine.build(id="s-banner", connection="conn-1", sender=Side.SERVER, time=tick(), raw=b"hello\n")
    alone = replay_data(banner, log_of(_started(), banner), spec)
    assert alone is not None and alone.line is None and "python server.py" in shell_line(alone)
    request = stdio(Side.CLIENT, request_body("tools/list", 2))
    later = StdioLine.build(id="s-late", connection="conn-1", sender=Side.SERVER, time=tick(), raw=b"log line\n")
    data = replay_data(later, log_of(_started(), banner, request, later), spec)
    assert data is not None and data.line is not None and '"tools/list"' in data.line


def test_a_stdio_replay_without_a_recorded_command_names_the_variable_run_reads(spec: SpecSet) -> None:
    request = stdio(Side.CLIENT, request_body("tools/list", 2))
    data = replay_data(request, log_of(request), spec)
    assert data is not None and data.variables == ("MCP_ASSAY_COMMAND",)
    assert '| sh -c "$MCP_ASSAY_COMMAND" |' in shell_line(data)


@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_a_pasted_stdio_replay_holds_stdin_open_until_the_answers_come(
    spec: SpecSet, tmp_path: Path, shell: str
) -> None:
    """A server that exits at the end of its input before answering (as the SDK's does) still answers a pasted
    replay, in bash and in zsh: stdin stays open until the marker and the line's answer have come back."""
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed here")
    server = tmp_path / "server.py"
    server.write_text(
        "import json, os, sys, threading, time\n"
        "lock = threading.Lock()\n"
        "def answer(message):\n"
        "    time.sleep(0.3)\n"
        "    with lock:  # one whole line at a time: print writes the newline apart\n"
        "        sys.stdout.write(json.dumps({'jsonrpc': '2.0', 'id': message['id'], 'result': {}}) + '\\n')\n"
        "        sys.stdout.flush()\n"
        "for line in sys.stdin:\n"
        "    threading.Thread(target=answer, args=(json.loads(line),), daemon=True).start()\n"
        "os._exit(0)\n",
        encoding="utf-8",
    )  # at the end of its input it exits at once, its answers unsent
    request = stdio(Side.CLIENT, {"jsonrpc": "2.0", "id": 7, "method": "tools/list"})
    data = replay_data(request, log_of(_started(command=f"{sys.executable} {server}"), request), spec)
    assert data is not None
    done = subprocess.run([shell, "-c", shell_line(data)], capture_output=True, text=True, timeout=30, check=True)
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert sorted(str(answer["id"]) for answer in answers) == ["7", "mcp-assay-replay-end"]
    naive = f"printf '%s\\n' {data.line!r} | {sys.executable} {server}"
    assert subprocess.run(["bash", "-c", naive], capture_output=True, text=True, timeout=30).stdout == ""


def test_a_replay_round_trips_through_the_json_report(spec: SpecSet) -> None:
    request = stdio(Side.CLIENT, request_body("tools/list", 2), probe=PROBE)
    data = replay_data(request, log_of(_started(), request), spec)
    assert data is not None
    assert Replay.from_json(json.loads(json.dumps(data.to_json()))) == data
    assert Replay.from_json({"transport": "carrier-pigeon"}) is None


def test_a_clients_request_in_a_2025_session_is_replayed_in_a_fresh_session_too(spec: SpecSet) -> None:
    """Issue 27: a passive finding's replay gets its session id the way an active one's does."""
    session = legacy_session("client-session-3")
    call = http({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}, {"jsonrpc": "2.0", "id": 4, "result": {}},
                headers=legacy_headers("client-session-3"))  # fmt: skip
    data = replay_data(call, log_of(session, call), spec)
    assert data is not None and data.probe is None and data.session and data.revision == LEGACY
    line = shell_line(data)
    assert line.startswith("MCP_SESSION=$(curl ") and "client-session-3" not in line


def test_an_oauth_steps_credentials_stay_redacted_in_its_replay(spec: SpecSet) -> None:
    """A client's token request (the proxy judges a client's OAuth flow) replays with its code and secret
    redacted: neither is the bearer token a replay takes from the environment."""
    form = "grant_type=authorization_code&code=auth-code-556677&code_verifier=verifier-889900&client_secret=shh-112233"
    call = http(
        form.encode(),
        {"access_token": "issued-token-445566"},
        headers={"content-type": "application/x-www-form-urlencoded"},
        url="http://127.0.0.1:9000/token?code=auth-code-556677",
    )
    data = replay_data(call, log_of(call), spec)
    assert data is not None
    line = shell_line(data)
    for secret in ("auth-code-556677", "verifier-889900", "shh-112233"):
        assert secret not in line
    assert "MCP_ASSAY_TOKEN" not in line and "code=[REDACTED]" in line
