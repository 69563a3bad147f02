"""`mcp_assay.pytest_plugin` in a user's own test suite: the official SDK client drives the SDK server
through the fixture's proxy, and the verdicts decide the user's test.

The user's suite is a real pytest run in a subprocess, with its own conftest enabling the plugin.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.peers.process import RunningServer, sdk_http_server

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

USER_TEST = """
import os

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


async def drive(url):
    async with httpx2.AsyncClient(timeout=30) as http:
        for mode in ("auto", "legacy"):
            async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
                await client.list_tools()
                await client.call_tool("add", {"a": 1, "b": 2})


def test_my_server(mcp_assay_proxy):
    proxy = mcp_assay_proxy(os.environ["SERVER_URL"])
    anyio.run(drive, proxy.url)


async def drive_once_each(url):
    async with httpx2.AsyncClient(timeout=30) as http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, mode="auto", read_timeout_seconds=1.0) as client:
            for call in (client.list_tools(), client.call_tool("add", {"a": 1, "b": 2}), client.list_tools()):
                try:
                    await call
                except Exception:
                    pass


def test_my_client_under_injected_faults(mcp_assay_proxy):
    proxy = mcp_assay_proxy(os.environ["SERVER_URL"], inject="version", inject_hold_ms=1500)
    anyio.run(drive_once_each, proxy.url)
    proxy.stop()
    injected = [verdict for verdict in proxy.report.results if verdict.source.value == "injected"]
    assert {requirement for verdict in injected for requirement in verdict.requirements} >= {"VER-05", "VER-13"}
    assert any(note.startswith("injected inject-version-refusal") for note in proxy.report.notes)
    assert not proxy.failures("must")


def test_my_server_checked_by_hand(mcp_assay_proxy):
    proxy = mcp_assay_proxy(os.environ["SERVER_URL"])
    anyio.run(drive, proxy.url)
    proxy.stop()
    judged = {revision for verdict in proxy.report.results for revision in verdict.revisions}
    assert {"2026-07-28", "2025-11-25"} <= judged
    assert not proxy.failures("must")
"""


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    with sdk_http_server() as running:
        yield running


def _user_suite(folder: Path, server: RunningServer, spec_path: Path, *ini: str) -> subprocess.CompletedProcess[str]:
    (folder / "conftest.py").write_text('pytest_plugins = ["mcp_assay.pytest_plugin"]\n')
    (folder / "test_user.py").write_text(USER_TEST)
    overrides = [part for item in ini for part in ("-o", item)]
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", *overrides],
        cwd=folder, capture_output=True, text=True, timeout=150,
        env={**os.environ, "SERVER_URL": server.url, "MCP_ASSAY_SPEC_DIR": str(spec_path.resolve())},
    )  # fmt: skip


def test_a_conformant_run_passes_the_users_tests(server: RunningServer, spec_path: Path, tmp_path: Path) -> None:
    """Tool-defined: no MUST failed between the SDK client and server, so the user tests pass (one of them with
    the version refusal injected, whose reactions it reads from the report)."""
    done = _user_suite(tmp_path, server, spec_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 passed" in done.stdout
    assert len(list(tmp_path.glob("**/mcp-assay-1.json"))) == 0  # reports live in each test's tmp_path


def test_a_should_policy_fails_the_test_that_left_the_verdicts_to_the_fixture(
    server: RunningServer, spec_path: Path, tmp_path: Path
) -> None:
    """Tool-defined: with `mcp_assay_fail_on = should` the SDK server's SHOULD findings (an unprimed POST
    stream, HTTP-42; structuredContent without a text mirror, TOOL-11) fail the test at teardown, each
    listed with its reason; the test that checked the MUST verdicts itself is left alone."""
    done = _user_suite(tmp_path, server, spec_path, "mcp_assay_fail_on=should")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "3 passed, 1 error" in done.stdout  # pytest counts the call and its teardown apart
    assert "ERROR at teardown of test_my_server" in done.stdout
    assert "requirement(s) failed between the client and" in done.stdout
    assert "HTTP-42 [SHOULD] post_streams_are_primed_and_announce_retry" in done.stdout


def test_a_bad_policy_is_a_usage_error(server: RunningServer, spec_path: Path, tmp_path: Path) -> None:
    done = _user_suite(tmp_path, server, spec_path, "mcp_assay_fail_on=sometimes")
    assert done.returncode != 0
    assert "mcp_assay_fail_on = sometimes: choose must or should" in done.stdout + done.stderr
