"""`mcp-assay run` against real servers: the Python SDK (HTTP and stdio), the TypeScript SDK v2
(both dual-era: one default run tests both revisions), server-everything (2025-11-25 only), and the
deliberately broken servers.

MUST-level findings per target and revision are pinned in ``suite_expected.yaml``: a new failure
in any revision fails the test, and so does a pinned one that no longer appears (each was confirmed
against the spec text).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from mcp_assay.cli import cli
from mcp_assay.report.sdks import known_sdk
from tests.peers.process import HERE, free_port, http_server, sdk_http_server, sdk_server_command

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

ROOT = HERE.parent.parent
NODE_MODULES = HERE / "node" / "node_modules"
EXPECTED = {
    target: {str(revision): list(ids) for revision, ids in pins.items()}  # YAML reads an unquoted date as a date
    for target, pins in yaml.safe_load(Path(__file__).with_name("suite_expected.yaml").read_text("utf-8")).items()
}
SDK_TOOLS = '{"add": {"a": 1, "b": 2}, "progress_tool": {"steps": 3}, "chatty": {}}'
"""add needs arguments; progress_tool reports progress and chatty logs, so the progress and logging cases
the suite runs on every tool it may call have something to judge."""
SDK_ARGS = ["--tool-args", SDK_TOOLS, "--prompt-args", '{"summarize": {"text": "hello"}}']
MODERN, LEGACY = "2026-07-28", "2025-11-25"
TS_ARGS = ["--tool-args", '{"add": {"a": 1, "b": 2}}', "--prompt-args", '{"shorten": {"text": "hello"}}']
SDK_OF = {
    "python-sdk": "mcp",
    "ts-sdk-v2": "@modelcontextprotocol/server",
    "server-everything": "@modelcontextprotocol/server-everything",
}
"""The package each pinned target is built on: its MUST failures are that SDK's known findings."""
BROKEN_ARGS = ["--tool-args", '{"echo": {"message": "hi"}, "ask": {}}', "--prompt-args", '{"greet": {"who": "x"}}']


def run(spec_path: Path, tmp_path: Path, *args: str) -> dict[str, Any]:
    report = tmp_path / f"report-{len(list(tmp_path.iterdir()))}.json"
    result = CliRunner().invoke(
        cli, ["run", *args, "--spec-dir", str(spec_path), "--report", f"json:{report}", "--stream-budget-ms", "800"]
    )
    assert result.exit_code in (0, 1, 3), result.output
    data: dict[str, Any] = json.loads(report.read_text(encoding="utf-8"))
    # the exit status, the verdict's code and its text are one value (3 only for "nothing verified" here)
    assert result.exit_code == data["verdict"]["exit_code"], (result.exit_code, data["verdict"])
    assert result.exit_code != 3 or data["verdict"]["code"] == "nothing-verified", data["verdict"]
    return data


def must_failures(report: dict[str, Any], revision: str | None = None) -> set[str]:
    """The MUST-level requirement IDs the report fails (in ``revision`` only, when one is named)."""
    return {
        requirement
        for item in report["results"]
        if item["outcome"] == "failed" and item["severity"] == "must"
        if revision is None or item.get("revision") == revision
        for requirement in item["requirements"]
    }


def outcome(report: dict[str, Any], check: str, revision: str = MODERN) -> str:
    return str(next(item["outcome"] for item in report["results"] if item["check"] == check and
                    item.get("revision") == revision))  # fmt: skip


def assert_expected(report: dict[str, Any], target: str, revisions: tuple[str, ...] | None = None) -> None:
    """The report tested ``revisions`` (default: every revision pinned for ``target``) and fails exactly the
    pinned MUST-level requirements in each."""
    assert not [note for note in report["notes"] if note.startswith("harness self-check")], report["notes"]
    pinned = {revision: set(ids) for revision, ids in EXPECTED[target].items()}
    tested = list(revisions or pinned)
    assert report["revisions"]["tested"] == tested, (target, report["revisions"]["note"])
    found = {revision: must_failures(report, revision) for revision in tested}
    assert found == {revision: pinned[revision] for revision in tested}, target
    assert_marked_as_the_sdks(report, target)


def assert_marked_as_the_sdks(report: dict[str, Any], target: str) -> None:
    """Issue 27: the SDK is recognized from what the server showed, every MUST failure is marked as a known finding
    of that SDK and version, and the verdict line counts the server's own failures apart: none."""
    name = next(package for prefix, package in SDK_OF.items() if target.startswith(prefix))
    sdk = known_sdk(name)
    assert sdk is not None, name
    assert [(item["name"], item["how"]) for item in report.get("sdks", [])] == [(name, "recognized")], target
    assert report["sdks"][0]["signs"], report["sdks"]
    failed = [item for item in report["results"] if item["outcome"] == "failed" and item["severity"] == "must"]
    marks = {(item["check"], item.get("revision")): item.get("sdk") or {} for item in failed}
    assert all((mark.get("name"), mark.get("version")) == (name, sdk.version) for mark in marks.values()), marks
    assert f"known in {name} {sdk.version}, 0 in the server's own code." in report["verdict"]["text"]


def node_peer(path: Path) -> None:
    if not path.exists():
        pytest.skip(f"Node peer missing: run `bash tests/peers/setup.sh` ({path} not found)")


@contextmanager
def broken_http(bug: str) -> Iterator[str]:
    port = free_port()
    command = [sys.executable, "-m", "tests.peers.broken_suite.app", "http", str(port), bug]
    with http_server(command, port, env={"PYTHONPATH": str(ROOT)}) as server:
        yield server.url


def broken_stdio(bug: str) -> str:
    return f"{sys.executable} -m tests.peers.broken_suite.app stdio {bug}"


def test_one_default_run_tests_the_python_sdk_server_over_http_in_both_revisions(
    spec_path: Path, tmp_path: Path
) -> None:
    """Tool-defined (issue 13): discover lists 2026-07-28 and initialize negotiates 2025-11-25, so one run
    reports both, each result naming its revision, and the pinned findings hold per revision."""
    with sdk_http_server() as server:
        report = run(spec_path, tmp_path, "-u", server.url, *SDK_ARGS)
    assert report["revisions"]["under_test"] is None
    assert "2026-07-28 (per server/discover) and 2025-11-25 (per initialize)" in report["revisions"]["note"]
    assert_expected(report, "python-sdk-http")
    for check in (  # the logged calls, the unknown level and progress on the calls the suite may make
        "log_messages_respect_the_requested_level",
        "log_messages_stay_on_their_request_stream",
        "unknown_log_levels_are_rejected",
        "progress_travels_on_its_request_stream",
    ):
        assert outcome(report, check) == "passed", check
    # the edge-audit lines docs/reports.md promises: one per request, with the tool called and the outcome
    calls = [line for line in report["audit"] if line["method"] == "tools/call" and line["tool"] == "add"]
    assert calls and {"request_id", "status", "outcome", "principal", "revision"} <= set(calls[0])
    assert {line["outcome"] for line in report["audit"]} >= {"ok", "protocol-error"}
    hosts = [note for note in report["notes"] if "Host: mcp-assay-rebinding.invalid" in note]
    assert len(hosts) == len(report["revisions"]["tested"]), report["notes"]  # the Host probe runs in each revision
    for check in ("servers_wait_for_initialized_before_requests", "handshake_sessions_get_no_newer_revision_fields"):
        assert outcome(report, check, LEGACY) == "passed", check
    assert report["verdict"]["text"].startswith("not conformant") and f"{LEGACY}: RPC-13" in report["verdict"]["text"]


def test_spec_version_narrows_the_python_sdk_run_to_2025_11_25(spec_path: Path, tmp_path: Path) -> None:
    """Tool-defined: --spec-version 2025-11-25 runs the handshake era alone, with the same findings there."""
    with sdk_http_server() as server:
        report = run(spec_path, tmp_path, "-u", server.url, "--spec-version", LEGACY, *SDK_ARGS)
    assert report["revisions"]["under_test"] == LEGACY
    assert_expected(report, "python-sdk-http", (LEGACY,))
    assert outcome(report, "servers_wait_for_initialized_before_requests", LEGACY) == "passed"


def test_the_python_sdk_server_over_stdio(spec_path: Path, tmp_path: Path) -> None:
    """Tool-defined: a spawned stdio server (a process per revision), its revisions chosen the same way."""
    command = " ".join(sdk_server_command())
    report = run(spec_path, tmp_path, "-c", command, *SDK_ARGS)
    assert report["target"]["transport"] == "stdio"
    assert_expected(report, "python-sdk-stdio")


def test_the_typescript_sdk_v2_server(spec_path: Path, tmp_path: Path) -> None:
    """Tool-defined: a second implementation, serving 2026-07-28 and its stateless 2025-11-25 fallback."""
    node_peer(NODE_MODULES / "@modelcontextprotocol" / "server")
    port = free_port()
    with http_server(["node", str(HERE / "ts_server.mjs"), str(port)], port) as server:
        report = run(spec_path, tmp_path, "-u", server.url, *TS_ARGS)
    assert_expected(report, "ts-sdk-v2-http")
    assert outcome(report, "handshake_sessions_get_no_newer_revision_fields", LEGACY) == "passed"


def test_modern_only_against_the_dual_era_python_sdk_reports_the_initialize_it_serves(
    spec_path: Path, tmp_path: Path
) -> None:
    """Spec-mandated (VER-15): told the server is modern-only, the run tests 2026-07-28 alone and fails the
    legacy initialize the SDK serves anyway."""
    with sdk_http_server() as server:
        report = run(spec_path, tmp_path, "-u", server.url, "--modern-only", *SDK_ARGS)
    assert report["revisions"]["tested"] == [MODERN]
    assert "declared modern-only" in report["revisions"]["note"]
    ver_15 = next(item for item in report["results"] if item["check"] == "refused_initialize_names_supported_versions")
    # the legacy initialize probes offer 2025-11-25 and 2025-03-26; the SDK serves both
    assert ver_15["outcome"] == "failed" and ver_15["violations"] == 2, ver_15
    assert {"negotiating 2025-11-25", "negotiating 2025-03-26"} <= {
        detail
        for item in ver_15["evidence"]
        for detail in ("negotiating 2025-11-25", "negotiating 2025-03-26")
        if detail in item.get("detail", "")
    }, ver_15["evidence"]
    assert must_failures(report) == set(EXPECTED["python-sdk-http"][MODERN])  # VER-15 is a SHOULD


def test_server_everything_is_tested_on_the_handshake_era_by_itself(spec_path: Path, tmp_path: Path) -> None:
    """Tool-defined: a 2025-only server gets a 2025-11-25 verdict without --spec-version."""
    entry = NODE_MODULES / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
    node_peer(entry)
    port = free_port()
    with http_server(["node", str(entry), "streamableHttp"], port, env={"PORT": str(port)}) as server:
        report = run(spec_path, tmp_path, "-u", server.url.replace("localhost", "127.0.0.1"))
    assert report["revisions"]["under_test"] == "2025-11-25"
    assert "per initialize" in report["revisions"]["note"]
    assert report["verdict"]["text"].startswith(("not conformant", "conformant to 2025-11-25"))
    assert_expected(report, "server-everything-http")


@pytest.mark.parametrize(("bug", "requirement"), [("mismatch-accepted", "HTTP-09"), ("prompt-bad-role", "PRM-06")])
def test_a_broken_http_server_is_caught(spec_path: Path, tmp_path: Path, bug: str, requirement: str) -> None:
    """Tool-defined: the broken server's bug is failed with its requirement, over a real socket."""
    with broken_http(bug) as url:
        report = run(spec_path, tmp_path, "-u", url, *BROKEN_ARGS)
    assert requirement in must_failures(report)


def test_a_stdio_server_that_prints_a_banner_is_caught(spec_path: Path, tmp_path: Path) -> None:
    """Spec-mandated (STDIO-02): a banner on stdout is reported as what it is."""
    report = run(spec_path, tmp_path, "-c", broken_stdio("stdout-banner"), *BROKEN_ARGS)
    assert "STDIO-02" in must_failures(report)


def test_a_stdio_server_that_dies_is_one_finding_and_the_rest_is_blocked(spec_path: Path, tmp_path: Path) -> None:
    """Tool-defined: the exit is reported once (BEH-09); later cases are blocked by it, not failed."""
    report = run(spec_path, tmp_path, "-c", broken_stdio("exit-on-invalid-json"), *BROKEN_ARGS)
    assert "BEH-09" in must_failures(report)
    blocked = [item for item in report["results"] if item["blocked_by"] == "server_stays_available_through_the_run"]
    assert blocked and all(item["outcome"] == "not_verified" for item in blocked)


def test_verbose_shows_the_stdio_servers_stderr(spec_path: Path, tmp_path: Path) -> None:
    """Tool-defined: --verbose passes the server's own stderr through."""
    command = f"{sys.executable} -c \"import sys; sys.stderr.write('hello from stderr\\\\n'); sys.exit(0)\""
    result = CliRunner().invoke(
        cli, ["run", "-c", command, "--verbose", "--spec-dir", str(spec_path), "--timeout", "2"],
        env={**os.environ},
    )  # fmt: skip
    assert "hello from stderr" in result.output
