"""A server that speaks a revision newer than the window is named in the report's first lines.

Tool-defined (issue 28, "Knowing which revisions exist"): mcp-assay judges the revisions it has schemas for;
a server already serving a newer one (``2027-03-01``) is judged against what mcp-assay knows, and the reader
must be told before anything else: "the server speaks 2027-03-01 (…); mcp-assay knows 2025-11-25 and
2026-07-28". The passing case (a server within the window: no line), the failing case (offered by discover,
by an error's supported list, settled by initialize, accepted from a real client's request), and what does not
count (a date mcp-assay itself sent, an answer mcp-assay injected, an older or undated version).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from mcp_assay.cases.discover import DISCOVER
from mcp_assay.cli import cli
from mcp_assay.report.about import Target, newer_line
from mcp_assay.report.brief import print_brief
from mcp_assay.report.build import build_report
from mcp_assay.spec import SpecSet
from mcp_assay.spec.newer import NewerRevisions
from mcp_assay.suite.config import SuiteConfig
from mcp_assay.suite.runner import arun
from mcp_assay.wire.model import Ending, EndReason, Headers, HttpExchange, HttpRequest, HttpResponse, Probe
from tests.peers.hostile import Script, hostile_server

NEWER = "2027-03-01"
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}


def _exchange(
    request: dict[str, Any], answer: dict[str, Any], *, ident: str = "x1", probe: Probe | None = None
) -> HttpExchange:
    headers = Headers([("content-type", "application/json")])
    return HttpExchange.build(
        id=ident,
        request=HttpRequest(
            method="POST", url="http://127.0.0.1:9/mcp", headers=headers, body=json.dumps(request).encode(), time=1.0
        ),  # fmt: skip
        response=HttpResponse(status=200, headers=headers, time=1.1, body=json.dumps(answer).encode()),
        ending=Ending(reason=EndReason.COMPLETE, time=1.2),
        probe=probe,
    )


def _discover(versions: list[Any]) -> HttpExchange:
    request = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": META}}
    return _exchange(request, {"jsonrpc": "2.0", "id": 1, "result": {"supportedVersions": versions}})


def test_a_server_within_the_window_gets_no_line() -> None:
    seen = NewerRevisions("2026-07-28")
    seen.see(_discover(["2026-07-28", "2025-11-25", "2024-11-05", "latest"]))
    assert seen.found == {}
    assert newer_line(Target(), ["2025-11-25", "2026-07-28"]) is None


def test_each_way_a_server_shows_it_speaks_a_newer_revision_is_named() -> None:
    seen = NewerRevisions("2026-07-28")
    seen.see(_discover(["2026-07-28", NEWER]))
    error = {"code": -32022, "message": "unsupported", "data": {"supported": ["2028-01-01"]}}
    seen.see(_exchange({"jsonrpc": "2.0", "id": 2, "method": "ping"}, {"jsonrpc": "2.0", "id": 2, "error": error}))
    initialize = {"protocolVersion": "2029-01-01", "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}
    settled = {"jsonrpc": "2.0", "id": 3, "result": initialize}
    seen.see(_exchange({"jsonrpc": "2.0", "id": 3, "method": "initialize"}, settled))
    declared = {"jsonrpc": "2.0", "id": 4, "method": "tools/list",
                "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2030-01-01"}}}  # fmt: skip
    seen.see(_exchange(declared, {"jsonrpc": "2.0", "id": 4, "result": {"tools": []}}))
    assert seen.found == {
        NEWER: "server/discover lists it in supportedVersions",
        "2028-01-01": "an unsupported-version error lists it as supported",
        "2029-01-01": "initialize settled on it",
        "2030-01-01": "it answered a request declaring it with a result",
    }


def test_what_mcp_assay_itself_sent_or_answered_does_not_count() -> None:
    seen = NewerRevisions("2026-07-28")
    declared = {"jsonrpc": "2.0", "id": 4, "method": "tools/list",
                "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2031-01-01"}}}  # fmt: skip
    seen.see(_exchange(declared, {"jsonrpc": "2.0", "id": 4, "result": {}}, probe=Probe.of(DISCOVER)))
    injected = Probe.of(DISCOVER, injected=True)
    answer = {"jsonrpc": "2.0", "id": 1, "result": {"supportedVersions": ["2032-01-01"]}}
    seen.see(_exchange({"jsonrpc": "2.0", "id": 1, "method": "server/discover"}, answer, probe=injected))
    refused = {"jsonrpc": "2.0", "id": 4, "error": {"code": -32022, "message": "no"}}
    seen.see(_exchange(declared, refused))  # a real client declared it and the server refused: it does not speak it
    assert seen.found == {}


def test_the_line_names_what_the_server_speaks_and_what_mcp_assay_knows() -> None:
    target = Target(unknown_revisions={NEWER: "server/discover lists it in supportedVersions"})
    assert newer_line(target, ["2026-07-28", "2025-11-25"]) == (
        f"the server speaks {NEWER} (server/discover lists it in supportedVersions); mcp-assay knows 2025-11-25 and "
        "2026-07-28, so whatever is new in it is not judged (mcp-assay spec pull --check says whether newer schemas "
        "are published)"
    )


def test_a_run_against_a_server_offering_a_newer_revision_names_it_first(spec: SpecSet) -> None:
    """A real run over HTTP against a scripted server whose discover lists 2027-03-01 beside 2026-07-28."""
    discover = {"resultType": "complete", "supportedVersions": ["2026-07-28", NEWER], "capabilities": {"tools": {}},
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "newer", "version": "1"}}}  # fmt: skip
    with hostile_server() as server:
        server.load(Script(answers=(("server/discover", discover),)))
        config = SuiteConfig(url=server.url, timeout=2, stream_budget_ms=200, only="discover")
        report = asyncio.run(arun(config, spec))
    assert report.target.unknown_revisions == {NEWER: "server/discover lists it in supportedVersions"}
    from rich.console import Console

    console = Console(record=True, width=300)
    print_brief(report, console)
    lines = console.export_text().splitlines()
    assert lines[2].startswith(f"newer     the server speaks {NEWER} (server/discover lists it")  # under the target
    assert "mcp-assay knows 2025-11-25 and 2026-07-28" in lines[2]
    data = report.to_json()
    assert data["target"]["unknown_revisions"] == {NEWER: "server/discover lists it in supportedVersions"}


def test_validate_names_it_from_a_capture(spec_path: Path, tmp_path: Path) -> None:
    """The same line from a HAR file of a session with such a server (any capture, through validate)."""
    entry = {
        "startedDateTime": "2026-01-01T00:00:00Z", "time": 5,
        "request": {"method": "POST", "url": "http://127.0.0.1:9/mcp",
                    "headers": [{"name": "content-type", "value": "application/json"}],
                    "postData": {"mimeType": "application/json", "text": json.dumps(
                        {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": META}})}},
        "response": {"status": 200, "headers": [{"name": "content-type", "value": "application/json"}],
                     "content": {"mimeType": "application/json", "text": json.dumps(
                         {"jsonrpc": "2.0", "id": 1, "result": {"supportedVersions": [NEWER]}})}},
    }  # fmt: skip
    har = tmp_path / "newer.har"
    har.write_text(json.dumps({"log": {"entries": [entry]}}), encoding="utf-8")
    out = tmp_path / "r.json"
    result = CliRunner().invoke(
        cli, ["validate", str(har), "--spec-dir", str(spec_path), "--report", f"json:{out}", "--report", "terminal"],
        env={"COLUMNS": "300"},
    )  # fmt: skip
    assert result.exit_code in (0, 1), result.output
    assert json.loads(out.read_text())["target"]["unknown_revisions"] == {
        NEWER: "server/discover lists it in supportedVersions"
    }
    header = result.stdout.splitlines()[:4]
    assert any(line.startswith(f"newer     the server speaks {NEWER}") for line in header), header


def test_the_markdown_and_html_reports_open_with_it(spec: SpecSet) -> None:
    from mcp_assay.report import render

    target = Target(kind="proxy", unknown_revisions={NEWER: "initialize settled on it"})
    report = build_report([], target=target, schemas=spec.schema_infos())
    for name in ("markdown", "html"):
        text = render(report, name)
        assert text.index(f"the server speaks {NEWER}") < text.index("Verdict"), name


def test_over_stdio_a_result_to_a_request_declaring_it_counts_on_its_own_connection() -> None:
    from mcp_assay.vocabulary.verdicts import Side
    from mcp_assay.wire.model import StdioLine

    def line(ident: str, sender: Side, payload: dict[str, Any], connection: str = "c1") -> StdioLine:
        raw = json.dumps(payload).encode()
        return StdioLine.build(id=ident, connection=connection, sender=sender, time=1.0, raw=raw)

    declared = {"jsonrpc": "2.0", "id": 7, "method": "tools/list",
                "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2030-01-01"}}}  # fmt: skip
    seen = NewerRevisions("2026-07-28")
    seen.see(line("l1", Side.CLIENT, declared))
    seen.see(line("l2", Side.SERVER, {"jsonrpc": "2.0", "id": 7, "result": {"tools": []}}, connection="c2"))
    assert seen.found == {}  # another connection's answer
    seen.see(line("l3", Side.SERVER, {"jsonrpc": "2.0", "id": 7, "result": {"tools": []}}))
    assert seen.found == {"2030-01-01": "it answered a request declaring it with a result"}
