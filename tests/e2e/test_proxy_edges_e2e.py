"""`mcp-assay proxy` and the mitmdump addon toward an upstream that is not there, or not MCP: said live
once per outage, and a session where no MCP server ever answered is not judged (one line, exit 3, and
a JSON report with the ``not-judged`` verdict). Real proxy processes, real sockets, real clients.

Tool-defined throughout (issue 18: "the proxy says live when its upstream refuses connections, and a
session whose upstream never answered ends 'nothing judged' with exit 3").
"""

from __future__ import annotations

import http.client
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.peers.assay import RunningProxy, assay_proxy, mitmdump
from tests.peers.process import PYTHON, free_port, http_server, sdk_server_command

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

PING = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"})
HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


def _post(proxy: RunningProxy) -> int | None:
    """One JSON-RPC request through the proxy: the status the client got, ``None`` when the connection was closed."""
    connection = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=10)
    try:
        connection.request("POST", proxy.path or "/mcp", PING, HEADERS)
        return connection.getresponse().status
    except (ConnectionError, http.client.HTTPException):
        return None
    finally:
        connection.close()


def _report(path: Path) -> dict[str, Any]:
    return dict(json.loads(path.read_text()))


def _lines(output: str, pattern: str) -> list[str]:
    return [line for line in output.splitlines() if re.search(pattern, line)]


def test_an_upstream_that_refuses_connections_is_said_once_and_the_session_is_not_judged(
    spec_path: Path, tmp_path: Path
) -> None:
    port = free_port()  # nothing listens there
    report = tmp_path / "report.json"
    recording = tmp_path / "session.jsonl"
    args = ("--spec-dir", str(spec_path), "--report", f"json:{report}", "--report", "terminal", "--record",
            str(recording))  # fmt: skip
    with assay_proxy(f"http://127.0.0.1:{port}/mcp", *args) as proxy:
        assert [_post(proxy) for _ in range(3)] == [None, None, None]  # the proxy closes each client connection
    assert proxy.returncode == 3
    said = _lines(proxy.output, "cannot connect")
    assert said == [
        f"mcp-assay WARNING mcp-assay: cannot connect to the server at 127.0.0.1:{port} (connection refused); "
        "clients get no answer from it until it accepts connections again"
    ]
    why = f"the upstream 127.0.0.1:{port} never answered (3 connection attempt(s): connection refused)"
    assert _lines(proxy.output, "not judged") == [f"mcp-assay: not judged — {why}"]
    assert "Verdict" not in proxy.output and "conformant" not in proxy.output
    verdict = _report(report)["verdict"]
    assert verdict == {"code": "not-judged", "text": f"not judged — {why}", "exit_code": 3, "unjudged": why}
    # judged again offline, the recording holds nothing to judge either
    again = subprocess.run([PYTHON, "-m", "mcp_assay", "validate", str(recording), "--spec-dir", str(spec_path)],
                           capture_output=True, text=True, timeout=60)  # fmt: skip
    assert again.returncode == 3, again.stdout + again.stderr
    assert again.stdout.strip() == f"mcp-assay: not judged — {why}"


def test_each_outage_is_said_once_and_a_session_the_upstream_answered_is_judged(
    spec_path: Path, tmp_path: Path
) -> None:
    port = free_port()
    args = ("--spec-dir", str(spec_path), "--report", f"json:{tmp_path / 'report.json'}")
    with assay_proxy(f"http://127.0.0.1:{port}/mcp", *args) as proxy:
        assert _post(proxy) is None and _post(proxy) is None
        with http_server(sdk_server_command(port=port), port):
            assert _post(proxy) is not None
        assert _post(proxy) is None
    said = _lines(proxy.output, "cannot connect to the server")
    assert len(said) == 2, proxy.output  # once before the server came up, once after it went away
    assert proxy.returncode in (0, 1)
    assert _report(tmp_path / "report.json")["verdict"]["unjudged"] is None


def test_a_proxy_that_carried_no_traffic_is_not_judged(spec_path: Path, tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    args = ("--spec-dir", str(spec_path), "--report", "terminal", "--report", f"json:{report}")
    with assay_proxy(f"http://127.0.0.1:{free_port()}/mcp", *args) as proxy:
        pass
    assert proxy.returncode == 3
    why = "no MCP traffic passed through the proxy (no client sent an MCP request)"
    assert _lines(proxy.output, "not judged") == [f"mcp-assay: not judged — {why}"]
    assert "Verdict" not in proxy.output
    assert _report(report)["verdict"]["code"] == "not-judged"


def test_an_upstream_path_that_is_not_an_mcp_endpoint_is_not_judged(spec_path: Path, tmp_path: Path) -> None:
    port = free_port()
    with http_server(sdk_server_command(port=port), port):
        with assay_proxy(f"http://127.0.0.1:{port}/wrong", "--spec-dir", str(spec_path), path="/wrong") as proxy:
            assert _post(proxy) == 404
            assert _post(proxy) == 404
    assert proxy.returncode == 3
    why = (
        f"http://127.0.0.1:{port}/wrong answered 2 MCP request(s), never in JSON-RPC: 404 Not Found × 2 (MCP endpoints "
        "are usually at /mcp)"
    )
    assert _lines(proxy.output, "not judged") == [f"mcp-assay: not judged — {why}"]


def test_an_upstream_that_is_a_plain_web_server_is_not_judged(spec_path: Path, tmp_path: Path) -> None:
    port = free_port()
    web = [PYTHON, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", str(tmp_path)]
    with http_server(web, port):
        with assay_proxy(f"http://127.0.0.1:{port}/mcp", "--spec-dir", str(spec_path)) as proxy:
            assert _post(proxy) == 501
    assert proxy.returncode == 3
    (line,) = _lines(proxy.output, "not judged")
    assert line.startswith(f"mcp-assay: not judged — http://127.0.0.1:{port}/mcp answered 1 MCP request(s), never in")
    assert "501" in line


def test_the_addon_in_mitmdump_says_once_that_the_upstream_is_down(spec_path: Path, tmp_path: Path) -> None:
    port = free_port()
    report = tmp_path / "report.json"
    settings = (f"mcp_assay_spec_dir={spec_path}", f"mcp_assay_report=json:{report}")
    with mitmdump(f"http://127.0.0.1:{port}", *settings) as proxy:
        assert [_post(proxy) for _ in range(2)] == [None, None]
    said = _lines(proxy.output, "mcp-assay: cannot connect to the server")
    assert len(said) == 1 and f"127.0.0.1:{port} (connection refused)" in said[0]
    why = f"the upstream 127.0.0.1:{port} never answered (2 connection attempt(s): connection refused)"
    assert _lines(proxy.output, "not judged") == [f"mcp-assay: not judged — {why}"]
    assert _report(report)["verdict"]["exit_code"] == 3


def test_the_test_helper_never_passes_a_session_that_judged_nothing(spec_path: Path) -> None:
    """`assert_conformant` on a session whose upstream never answered fails, naming why (no failures is not a pass)."""
    from mcp_assay.testing import assay_proxy as judging_proxy

    port = free_port()
    with judging_proxy(f"http://127.0.0.1:{port}/mcp", spec_dir=spec_path) as proxy:
        connection = http.client.HTTPConnection("127.0.0.1", proxy.running.port, timeout=10)
        with pytest.raises((ConnectionError, http.client.HTTPException)):
            connection.request("POST", "/mcp", PING, HEADERS)
            connection.getresponse()
        connection.close()
    with pytest.raises(
        AssertionError, match=f"judged nothing between the client and .*: the upstream 127.0.0.1:{port}"
    ):
        proxy.assert_conformant()
